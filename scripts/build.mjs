// Compiles the SDK (sdk/src/ to sdk/dist/) and then src/ to dist/ (plain JavaScript, so that the CLI and the server
// start without compiling TypeScript on every run; the CLI imports the SDK's build). Run by `npm ci`/`npm install` (the
// `prepare` script) and before `npm start`, both with `--if-stale`; nobody needs to run it by hand. `prepare` must skip
// a current build: `npx mediaplane` in the repository links the repository into npx's cache on its first call, which
// runs `prepare` again (a 40 s rebuild of a build `npm ci` had just made). bin/mediaplane.js runs dist/ when it is current, the TypeScript sources through tsx otherwise.
import { existsSync, readdirSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const dist = join(root, 'dist');
const stamp = (dir) => join(dir, '.built');

function newest(path) {
  if (!existsSync(path)) return 0;
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
  // dist/cli.js imports the SDK's build: a dist/ without it cannot run.
  if (!existsSync(stamp(join(root, 'sdk', 'dist')))) return false;
  const built = statSync(stamp(dist)).mtimeMs;
  return ['src', 'tsconfig.json', 'tsconfig.build.json', 'sdk/src', 'sdk/tsconfig.json'].every((p) => newest(join(root, p)) <= built);
}

function typescriptCompiler() {
  try {
    return createRequire(import.meta.url).resolve('typescript/bin/tsc');
  } catch {
    console.error('mediaplane: TypeScript is not installed (production install?): the sources run through tsx instead.');
    return undefined;
  }
}

/** Compiles one project into a directory of its own, then swaps it in: a process starting meanwhile never sees half a build. */
function compile(tsc, project, target, started) {
  const out = `${target}.building-${process.pid}`;
  // Required here, not imported: bin/mediaplane.js imports this file on every command only to call distIsCurrent.
  const { execFileSync } = createRequire(import.meta.url)('node:child_process');
  try {
    execFileSync(process.execPath, [tsc, '-p', project, '--outDir', out], { stdio: 'inherit' });
    writeFileSync(stamp(out), '');
    // The build reflects the sources as they were when it started; an edit made during it leaves the build stale.
    utimesSync(stamp(out), started, started);
    const old = `${target}.old-${process.pid}`;
    if (existsSync(target)) renameSync(target, old);
    renameSync(out, target);
    rmSync(old, { recursive: true, force: true });
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

/** Compiles the SDK (sdk/dist/ unless `outDir` says), which the platform's build imports as `@mediaplane/sdk`. */
export function buildSdk(outDir = join(root, 'sdk', 'dist')) {
  const tsc = typescriptCompiler();
  if (!tsc) return false;
  compile(tsc, join(root, 'sdk', 'tsconfig.json'), outDir, new Date());
  return true;
}

export function build() {
  const tsc = typescriptCompiler();
  if (!tsc) return false;
  const started = new Date();
  compile(tsc, join(root, 'sdk', 'tsconfig.json'), join(root, 'sdk', 'dist'), started);
  compile(tsc, join(root, 'tsconfig.build.json'), dist, started);
  return true;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  if (process.argv.includes('--if-stale') && distIsCurrent()) process.exit(0);
  console.error('mediaplane: compiling the TypeScript sources to dist/ ...');
  build();
}
