import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { freePort, listening, mediaplane, start, waitReady, type Run } from './helpers/process.ts';
import { until } from './helpers/until.ts';

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
  // The run's initialised and migrated database (test/setup/globalSetup.ts): what is tested is the stop, and initdb
  // with the migrations is tens of seconds of a loaded machine (a first start on an empty directory:
  // foundation.process.test.ts).
  cpSync(inject('pgliteTemplate'), join(dataDir, 'pglite'), { recursive: true });
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

  it('finishes a request in flight, exits, frees the port and the lock; a new start on the same data directory works', async () => {
    const port = await freePort();
    const env = { PORT: String(port), HOST: '127.0.0.1', MEDIAPLANE_DATA_DIR: dataDir };
    const npm = start('npm', ['start'], env);
    runs.push(npm);
    await waitReady(`http://127.0.0.1:${port}`, npm, 240_000);
    const serverPid = Number(readFileSync(join(dataDir, 'mediaplane.lock'), 'utf8').split(' ')[0]);

    // A part upload in flight when the signal comes: half its body sent before, half after.
    const token = readFileSync(join(dataDir, 'admin-token'), 'utf8').trim();
    const base = `http://127.0.0.1:${port}`;
    const tenant = (await (
      await fetch(`${base}/admin/v1/tenants`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'inflight' }),
      })
    ).json()) as any;
    const size = 64 * 1024;
    const started = (await (
      await fetch(`${base}/vod/v1/files/start`, {
        method: 'POST',
        headers: { 'x-api-key': tenant.apiKey.key, 'x-tenant-id': tenant.id, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'a.mp4', friendlyName: 'a', fileSize: size }),
      })
    ).json()) as any;
    const part = new URL(started.multipartUrls[0]);
    // `Expect: 100-continue`: the server's 100 says it has taken the request in, so it is in flight when the signal comes.
    const upload = request({
      host: '127.0.0.1',
      port,
      method: 'PUT',
      path: part.pathname + part.search,
      headers: { 'content-length': size, expect: '100-continue' },
    });
    const answered = new Promise<number>((resolve, reject) => {
      upload.on('response', (res) => (res.resume(), resolve(res.statusCode!)));
      upload.on('error', reject);
    });
    upload.flushHeaders();
    await new Promise((resolve) => upload.once('continue', resolve));
    upload.write(Buffer.alloc(size / 2, 1));

    npm.child.kill('SIGTERM');
    // Shutting down: no new connections taken, the one in flight still open.
    await until(
      () => listening(port),
      (up) => !up,
      { everyMs: 50, what: 'the port to close' },
    );
    upload.end(Buffer.alloc(size / 2, 2));
    expect(await answered).toBe(200);
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
