import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tenantClient } from './helpers/client.ts';
import { makeClip } from './helpers/media.ts';
import { cli, freePort, mediaplane, waitReady, type Run } from './helpers/process.ts';
import { until } from './helpers/until.ts';
import { uploadFile } from './helpers/upload.ts';

/** The master playlist, one variant playlist and its first segment of an HLS endpoint, each answered 200. */
async function playable(url: string): Promise<{ master: string; segmentBytes: number }> {
  const master = await fetch(url);
  expect(master.status).toBe(200);
  const text = await master.text();
  const variant = new URL(
    text.split('\n').find((l) => l && !l.startsWith('#'))!,
    url,
  );
  const playlist = await (await fetch(variant)).text();
  const segment = await fetch(
    new URL(
      playlist.split('\n').find((l) => l && !l.startsWith('#'))!,
      variant,
    ),
  );
  expect(segment.status).toBe(200);
  return { master: text, segmentBytes: (await segment.arrayBuffer()).byteLength };
}

describe('backup and restore of the embedded install (PGlite and the file store)', () => {
  const work = mkdtempSync(join(tmpdir(), 'mediaplane-backup-'));
  const original = join(work, 'original');
  const restored = join(work, 'restored');
  const servers: Run[] = [];
  afterAll(async () => {
    for (const s of servers) if (s.child.exitCode === null) s.child.kill('SIGKILL');
    rmSync(work, { recursive: true, force: true });
  });

  it('backs up while the platform runs; a fresh data directory restored from it serves an asset made before', async () => {
    const port = await freePort();
    const base = `http://localhost:${port}`;
    const env = { PORT: String(port), HOST: '127.0.0.1', MEDIAPLANE_DATA_DIR: original };
    const server = mediaplane(['serve'], env);
    servers.push(server);
    await waitReady(base, server);
    const adminToken = readFileSync(join(original, 'admin-token'), 'utf8').trim();
    const admin = (method: string, path: string, b: string, body?: unknown) =>
      fetch(b + path, {
        method,
        headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    const created = (await (await admin('POST', '/admin/v1/tenants', base, { name: 'before' })).json()) as any;
    const t = tenantClient(base, created.id, created.name, created.apiKey.key);
    const fileId = await uploadFile(t, await makeClip(work, 'clip', { seconds: 2, audio: [] }));
    const asset = (await t.json('POST', '/vod/v1/assets', { transcodedSources: [{ fileId }], preset: 'hls-h264-ladder' })).body;
    await until(
      () => t.json('GET', `/vod/v1/assets/${asset.id}`),
      (r) => r.body.status === 'Available' || r.body.status === 'Failed',
      { timeoutMs: 120_000 },
    );

    const archive = join(work, 'backup.tar.gz');
    const made = await cli(['backup', archive], env);
    expect(made.code, made.out).toBe(0);
    expect(made.out).toContain(`Backup written to ${archive}`);
    // Made after the backup: not in it.
    expect((await admin('POST', '/admin/v1/tenants', base, { name: 'after' })).status).toBe(201);
    const intoRunning = await cli(['restore', archive], env);
    expect(intoRunning.code).toBe(1);
    expect(intoRunning.out).toContain('is in use by another Mediaplane process');

    // The original is gone before the restored copy starts: whatever plays below comes from the restored directory.
    server.child.kill('SIGTERM');
    expect((await server.exit).code).toBe(0);

    const restoreEnv = { ...env, MEDIAPLANE_DATA_DIR: restored };
    const put = await cli(['restore', archive], restoreEnv);
    expect(put.code, put.out).toBe(0);
    const twice = await cli(['restore', archive], restoreEnv);
    expect(twice.code).toBe(1);
    expect(twice.out).toContain('already holds a Mediaplane database');
    expect(readFileSync(join(restored, 'admin-token'), 'utf8').trim()).toBe(adminToken);

    // Same address as the original (endpoint URLs carry MEDIAPLANE_PUBLIC_URL, as a restore on the same host keeps it).
    const base2 = base;
    const second = mediaplane(['serve'], restoreEnv);
    servers.push(second);
    await waitReady(base2, second);
    const tenants = (await (await admin('GET', '/admin/v1/tenants', base2)).json()) as any;
    expect(tenants.items.map((x: any) => x.name)).toEqual(['before']);
    const t2 = tenantClient(base2, created.id, created.name, created.apiKey.key);
    const got = await t2.json('GET', `/vod/v1/assets/${asset.id}`);
    expect(got.status).toBe(200);
    expect(got.body.status).toBe('Available');
    const url = got.body.endpoints.find((e: any) => /\.m3u8/.test(e.url))?.url ?? got.body.endpoints[0].url;
    const { segmentBytes } = await playable(url.startsWith('http') ? url : base2 + url);
    expect(segmentBytes).toBeGreaterThan(0);
    const probed = JSON.parse(
      execFileSync('ffprobe', ['-v', 'error', '-show_streams', '-of', 'json', url.startsWith('http') ? url : base2 + url], { encoding: 'utf8' }),
    );
    expect(probed.streams.some((s: any) => s.codec_type === 'video' && s.width > 0)).toBe(true);
  }, 400_000);

  it('refuses, saying what to use instead, for PostgreSQL', async () => {
    const r = await cli(['backup', join(work, 'pg')], { MEDIAPLANE_DATA_DIR: join(work, 'pg-data'), DATABASE_URL: 'postgres://nobody@127.0.0.1:1/x' });
    expect(r.code).toBe(1);
    expect(r.out).toContain('pg_dump');
  });
});
