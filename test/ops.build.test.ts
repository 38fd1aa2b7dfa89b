import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const ROOT = new URL('..', import.meta.url).pathname;

describe('a fresh clone', () => {
  const work = mkdtempSync(join(tmpdir(), 'mediaplane-clone-'));
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('after the build `npm ci` runs, the first `npx mediaplane --help` runs that build instead of compiling again', async () => {
    // The repository as a clone has it (the working tree, so that the test checks the code as it is): no dist/, no
    // builds, no data. node_modules is linked rather than installed: `npm ci` takes minutes on a loaded machine, and
    // what it does to the clone itself is run the `prepare` script, which the test runs as npm does.
    const clone = join(work, 'mediaplane');
    const skip = new Set(['node_modules', 'dist', 'data', '.git'].map((p) => join(ROOT, p)));
    cpSync(ROOT, clone, {
      recursive: true,
      filter: (src) => !skip.has(src.replace(/\/$/, '')) && !src.startsWith(join(ROOT, 'sdk', 'dist')),
    });
    symlinkSync(join(ROOT, 'node_modules'), join(clone, 'node_modules'));
    // npx's cache of its own, as on a machine that never ran npx in this clone.
    const env = { ...process.env, npm_config_cache: join(work, 'npm-cache'), npm_config_update_notifier: 'false' };
    mkdirSync(env.npm_config_cache);
    await run('npm', ['run', 'prepare'], { cwd: clone, env, maxBuffer: 1 << 24 });
    const stamp = join(clone, 'dist', '.built');
    const built = statSync(stamp).mtimeMs;

    const help = await run('npx', ['mediaplane', '--help'], { cwd: clone, env, maxBuffer: 1 << 24 });
    expect(help.stdout).toContain('Usage: mediaplane');
    // npx links the clone into its cache on the first call, which runs `prepare` again: it must find the build current.
    expect(help.stderr).not.toContain('compiling');
    expect(statSync(stamp).mtimeMs).toBe(built);
    // And the bin itself runs dist/ (not the sources through tsx) without building.
    const direct = await run(process.execPath, ['bin/mediaplane.js', '--help'], { cwd: clone, env });
    expect(direct.stdout).toContain('Usage: mediaplane');
    expect(statSync(stamp).mtimeMs).toBe(built);
  }, 600_000);
});
