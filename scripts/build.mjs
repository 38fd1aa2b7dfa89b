// Compiles src/ to dist/ (plain JavaScript, so that the CLI and the server start without compiling TypeScript on
// every run). Run by `npm ci`/`npm install` (the `prepare` script) and before `npm start` (`--if-stale`); nobody needs
// to run it by hand. bin/mediaplane.js runs dist/ when it is current, the TypeScript sources through tsx otherwise.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const dist = join(root, 'dist');
const stamp = (dir) => join(dir, '.built');

function newest(path) {
  const s = statSync(path);
  if (!s.isDirectory()) return s.mtimeMs;
  let max = s.mtimeMs;
  for (const name of readdirSync(path)) max = Math.max(max, newest(join(path, name)));
  return max;
}

/** Whether dist/ was built from the sources as they are now (true too when there are no sources, as in a package). */
export function distIsCurrent() {
  if (!existsSync(stamp(dist))) return false;
  if (!existsSync(join(root, 'src'))) return true;
  const built = statSync(stamp(dist)).mtimeMs;
  return ['src', 'tsconfig.json', 'tsconfig.build.json'].every((p) => newest(join(root, p)) <= built);
}

/** Compiles into a directory of its own, then swaps it in: a process starting meanwhile never sees half a build. */
export function build() {
  let tsc;
  try {
    tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  } catch {
    console.error('mediaplane: TypeScript is not installed (production install?): the sources run through tsx instead.');
    return false;
  }
  const started = new Date();
  const out = join(root, `dist.building-${process.pid}`);
  try {
    execFileSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json'), '--outDir', out], { stdio: 'inherit' });
    writeFileSync(stamp(out), '');
    // The build reflects the sources as they were when it started; an edit made during it leaves dist/ stale.
    utimesSync(stamp(out), started, started);
    const old = join(root, `dist.old-${process.pid}`);
    if (existsSync(dist)) renameSync(dist, old);
    renameSync(out, dist);
    rmSync(old, { recursive: true, force: true });
    return true;
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  if (process.argv.includes('--if-stale') && distIsCurrent()) process.exit(0);
  console.error('mediaplane: compiling the TypeScript sources to dist/ ...');
  build();
}
