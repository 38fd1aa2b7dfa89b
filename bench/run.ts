/**
 * `npm run bench` runs every benchmark; `npm run bench -- <name> [options]` runs one.
 * Each prints its figures and ratios against a baseline measured in the same run.
 */
const BENCHMARKS: Record<string, () => Promise<{ run(args: string[]): Promise<void> }>> = {
  api: () => import('./api.ts'),
  webhooks: () => import('./webhooks.ts'),
  transcode: () => import('./transcode.ts'),
  upload: () => import('./upload.ts'),
  import: () => import('./import.ts'),
  sdk: () => import('./sdk.ts'),
  md5x4: () => import('./md5x4.ts'),
  live: () => import('./live.ts'),
  analytics: () => import('./analytics.ts'),
  recorder: () => import('./recorder.ts'),
  watermark: () => import('./watermark.ts'),
  thumbnail: () => import('./thumbnail.ts'),
  console: () => import('./console.ts'),
};

const [name, ...args] = process.argv.slice(2);
if (name && !(name in BENCHMARKS)) {
  console.error(`Unknown benchmark "${name}"; known: ${Object.keys(BENCHMARKS).join(', ')}`);
  process.exit(2);
}
for (const n of name ? [name] : Object.keys(BENCHMARKS)) {
  console.log(`\n== bench ${n}`);
  await (await BENCHMARKS[n]()).run(name ? args : []);
}
process.exit(0);
