/**
 * Runs benchmarks: `npm run bench -- <name> [options]`, or every one without a name.
 * Each prints its figures next to a baseline measured in the same run.
 */
const BENCHES: Record<string, () => Promise<{ run(args: string[]): Promise<void> }>> = {
  webhooks: () => import('./webhooks.ts'),
};

const [name, ...args] = process.argv.slice(2);
const names = name ? [name] : Object.keys(BENCHES);
for (const n of names) {
  const load = BENCHES[n];
  if (!load) {
    console.error(`unknown benchmark "${n}"; known: ${Object.keys(BENCHES).join(', ')}`);
    process.exit(2);
  }
  await (await load()).run(name ? args : []);
}
process.exit(0);
