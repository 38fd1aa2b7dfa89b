import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { describeEachDb, freshStorage, tenantClient, type TestStorage, type TestTenant } from './helpers/platform.ts';
import { uploadFile } from './helpers/upload.ts';
import { PROCESS_START_TIMEOUT_MS, until } from './helpers/until.ts';
import { freePort } from './helpers/process.ts';

const root = new URL('..', import.meta.url).pathname;

function startServer(env: Record<string, string>): ChildProcess {
  const child = spawn(process.execPath, [join(root, 'bin/mediaplane.js'), 'serve'], { env: { ...process.env, LOG_LEVEL: 'warn', ...env }, stdio: 'ignore' });
  return child;
}

/** Waits for the child's /readyz; fails at once if it exited. */
async function serverReady(base: string, child: ChildProcess): Promise<void> {
  const ready = async () => {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`server exited (${child.exitCode ?? child.signalCode})`);
    return fetch(`${base}/readyz`).then(
      (r) => r.status,
      () => 0,
    );
  };
  await until(ready, (s) => s === 200, { timeoutMs: PROCESS_START_TIMEOUT_MS, what: `${base}/readyz` });
}

function walk(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(dir, e.name)) : [join(dir, e.name)]));
}

describeEachDb('VOD transcoding survives a killed server', (kind) => {
  let storage: TestStorage | undefined;
  let child: ChildProcess | undefined;
  afterAll(async () => {
    child?.kill('SIGKILL');
    await storage?.drop();
  });

  it('finishes all three assets after kill -9 and restart, with no duplicate outputs and no orphan files', async () => {
    storage = await freshStorage(kind);
    const { dataDir } = storage;
    const port = await freePort();
    const env: Record<string, string> = {
      PORT: String(port),
      HOST: '127.0.0.1',
      MEDIAPLANE_DATA_DIR: dataDir,
      MEDIAPLANE_ADMIN_TOKEN: 'restart-token',
      MEDIAPLANE_PUBLIC_URL: `http://localhost:${port}`,
      // The killed worker's output is taken up again a lease and a sweep after the restart, not 30 s + 10 s.
      MEDIAPLANE_TRANSCODE_LEASE_SECONDS: '6',
      MEDIAPLANE_SWEEP_INTERVAL_MS: '1000',
    };
    if (storage.databaseUrl) env.DATABASE_URL = storage.databaseUrl;
    const base = `http://localhost:${port}`;
    child = startServer(env);
    await serverReady(base, child);
    const created = (await (
      await fetch(`${base}/admin/v1/tenants`, {
        method: 'POST',
        headers: { authorization: 'Bearer restart-token', 'content-type': 'application/json' },
        body: JSON.stringify({ name: `restart-${kind}` }),
      })
    ).json()) as any;
    const t: TestTenant = tenantClient(base, created.id, created.name, created.apiKey.key);

    const clip = join(dataDir, 'clip.mp4');
    execFileSync('ffmpeg', [
      '-v',
      'error',
      '-y',
      '-f',
      'lavfi',
      '-i',
      'testsrc2=size=640x360:rate=25:duration=4',
      '-c:v',
      'libx264',
      '-preset',
      'ultrafast',
      '-pix_fmt',
      'yuv420p',
      clip,
    ]);
    const fileId = await uploadFile(t, clip);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await t.json('POST', '/vod/v1/assets', { transcodedSources: [{ fileId }], preset: 'hls-h264-ladder' })).body.id);

    await until(
      () => t.json('GET', `/vod/v1/assets/${ids[0]}`),
      (r) => r.body.status === 'Processing',
      { timeoutMs: 60_000, everyMs: 50 },
    );
    child.kill('SIGKILL');
    await new Promise((r) => child!.once('exit', r));

    child = startServer(env);
    await serverReady(base, child);
    for (const id of ids) {
      const asset = (
        await until(
          () => t.json('GET', `/vod/v1/assets/${id}`),
          (r) => ['Available', 'Error'].includes(r.body.status),
          { timeoutMs: 120_000 },
        )
      ).body;
      expect(asset.status, asset.errorMessage).toBe('Available');
      expect(asset.outputs).toHaveLength(1);
      const files = walk(join(dataDir, 'objects', 'tenants', t.id, 'vod', id)).map((f) => f.split(`/${id}/`)[1]);
      // Exactly the files the master playlist needs: no leftovers of the killed attempt.
      const master = await (await fetch(asset.endpoints[0].url)).text();
      // The media playlists, and the storyboard's image playlist (`#EXT-X-IMAGE-STREAM-INF:...,URI="..."`).
      const playlists = [
        ...master.split('\n').filter((l) => l && !l.startsWith('#')),
        ...[...master.matchAll(/IMAGE-STREAM-INF:.*URI="([^"]+)"/g)].map((m) => m[1]),
      ];
      expect(files.filter((f) => f.endsWith('.m3u8')).length).toBe(playlists.length + 1);
      expect(new Set(files).size).toBe(files.length);
    }
    expect(walk(join(dataDir, 'work'))).toEqual([]);
  }, 600_000); // two process starts on a loaded machine (PROCESS_START_TIMEOUT_MS each) and three transcodes
});
