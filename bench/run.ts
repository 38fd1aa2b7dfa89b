/**
 * `npm run bench` runs every benchmark; `npm run bench -- api` runs the named ones.
 * A benchmark is a module whose `run()` prints its figures and ratios against a baseline measured in the same run.
 */
const BENCHMARKS: Record<string, () => Promise<{ run: () => Promise<void> }>> = {
  api: () => import('./api.ts'),
  upload: () => import('./upload.ts'),
};

const wanted = process.argv.slice(2);
const unknown = wanted.filter((name) => !(name in BENCHMARKS));
if (unknown.length) {
  console.error(`Unknown benchmark ${unknown.join(', ')}; known: ${Object.keys(BENCHMARKS).join(', ')}`);
  process.exit(2);
}
for (const name of wanted.length ? wanted : Object.keys(BENCHMARKS)) {
  console.log(`\n== bench ${name}`);
  await (await BENCHMARKS[name]()).run();
}
