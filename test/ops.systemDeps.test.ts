import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = new URL('..', import.meta.url).pathname;
const which = (name: string) => spawnSync('bash', ['-c', `command -v ${name}`], { encoding: 'utf8' }).stdout.trim();

/**
 * `npm start` runs scripts/ensure-system-deps.sh with no argument. On a machine without the speech recognizer it must
 * want it as it wants ffmpeg (live captions offer no language otherwise). The script runs for real, on a PATH that
 * holds ffmpeg and not pocketsphinx, and without apt-get, where it names what it would install and stops.
 */
describe('npm start system programs', () => {
  const bin = mkdtempSync(join(tmpdir(), 'mediaplane-path-'));
  afterAll(() => rmSync(bin, { recursive: true, force: true }));
  for (const tool of ['ffmpeg', 'id', 'awk']) symlinkSync(which(tool), join(bin, tool));
  const ensure = (env: Record<string, string> = {}) =>
    spawnSync('/bin/bash', ['scripts/ensure-system-deps.sh'], { cwd: ROOT, env: { PATH: bin, ...env }, encoding: 'utf8' });

  it('wants the speech recognizer of live captions when it is missing, as it wants ffmpeg', () => {
    const r = ensure();
    expect(r.status, r.stderr).toBe(1);
    expect(r.stderr).toMatch(/Mediaplane needs: .*\bpocketsphinx\b/);
  });

  it('wants nothing more once it is there, or when POCKETSPHINX_PATH names one of your own', () => {
    const withRecognizer = mkdtempSync(join(tmpdir(), 'mediaplane-path-'));
    try {
      for (const tool of ['ffmpeg', 'id', 'awk', 'pocketsphinx_continuous']) symlinkSync(which(tool), join(withRecognizer, tool));
      const r = spawnSync('/bin/bash', ['scripts/ensure-system-deps.sh'], { cwd: ROOT, env: { PATH: withRecognizer }, encoding: 'utf8' });
      expect(r.status, r.stderr).toBe(0);
    } finally {
      rmSync(withRecognizer, { recursive: true, force: true });
    }
    const own = ensure({ POCKETSPHINX_PATH: which('pocketsphinx_continuous') });
    expect(own.status, own.stderr).toBe(0);
  });
});
