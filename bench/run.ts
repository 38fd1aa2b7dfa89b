/**
 * `npm run bench [name…]`: runs the named benchmarks (all when none is named). Each prints its figures and the ratio
 * against a baseline measured in the same run.
 */
const BENCHES: Record<string, () => Promise<void>> = {
  transcode: async () => (await import('./transcode.ts')).run(),
};

const names = process.argv.slice(2);
for (const name of names.length > 0 ? names : Object.keys(BENCHES)) {
  const bench = BENCHES[name];
  if (!bench) {
    console.error(`unknown benchmark "${name}"; known: ${Object.keys(BENCHES).join(', ')}`);
    process.exit(2);
  }
  console.log(`\n## ${name}\n`);
  await bench();
}
