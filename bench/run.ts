/** `npm run bench -- <name> [options]`: each benchmark prints its figures against a baseline measured in the same run. */
const BENCHES: Record<string, () => Promise<{ run(args: string[]): Promise<void> }>> = {
  upload: () => import('./upload.ts'),
};

const [name, ...args] = process.argv.slice(2);
const load = name ? BENCHES[name] : undefined;
if (!load) {
  console.error(`usage: npm run bench -- <${Object.keys(BENCHES).join('|')}> [options]`);
  process.exit(1);
}
await (await load()).run(args);
