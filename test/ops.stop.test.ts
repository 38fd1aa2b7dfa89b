import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort, listening, mediaplane, start, waitReady, type Run } from './helpers/process.ts';

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('the README start command (`npm start`) stops on SIGTERM sent to the process it starts', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'mediaplane-stop-'));
  const runs: Run[] = [];
  afterAll(() => {
    for (const r of runs) if (r.child.exitCode === null && r.child.signalCode === null) r.child.kill('SIGKILL');
    const lock = join(dataDir, 'mediaplane.lock');
    if (existsSync(lock)) {
      const pid = Number(readFileSync(lock, 'utf8').split(' ')[0]);
      if (pid && alive(pid)) process.kill(pid, 'SIGKILL');
    }
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('exits, frees the port and the data directory lock, and a new start on the same data directory works', async () => {
    const port = await freePort();
    const env = { PORT: String(port), HOST: '127.0.0.1', MEDIAPLANE_DATA_DIR: dataDir };
    const npm = start('npm', ['start'], env);
    runs.push(npm);
    await waitReady(`http://127.0.0.1:${port}`, npm, 240_000);
    const serverPid = Number(readFileSync(join(dataDir, 'mediaplane.lock'), 'utf8').split(' ')[0]);

    npm.child.kill('SIGTERM');
    const ended = await npm.exit;
    expect(ended.code === 0 || ended.signal === 'SIGTERM', JSON.stringify(ended)).toBe(true);
    // When npm has exited, the server it ran has too: nothing is left holding the port or the data directory.
    expect(alive(serverPid), npm.output()).toBe(false);
    expect(await listening(port)).toBe(false);
    expect(existsSync(join(dataDir, 'mediaplane.lock'))).toBe(false);

    const again = mediaplane(['serve'], env);
    runs.push(again);
    await waitReady(`http://127.0.0.1:${port}`, again);
    again.child.kill('SIGINT');
    expect((await again.exit).code).toBe(0);
    expect(existsSync(join(dataDir, 'mediaplane.lock'))).toBe(false);
  }, 300_000);
});
