import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { frameAt, makeClip, makeImage, meanColor, tempDir } from './helpers/media.ts';
import { describeOnDb, startPlatform, type TestPlatform, type TestTenant } from './helpers/platform.ts';
import { uploadFile } from './helpers/upload.ts';
import { until } from './helpers/until.ts';

/**
 * Overlay pictures given by URL are fetched by the platform, through the same address guard as webhooks: a tenant
 * must not make the server read its own network (SSRF). Served here from 127.0.0.1, without an extension in the path.
 */
describeOnDb('pglite', 'VOD overlays fetched from URLs', (kind) => {
  const { dir, cleanup } = tempDir();
  let server: Server;
  let logoUrl: string;
  const fetched: string[] = [];

  beforeAll(async () => {
    const png = readFileSync(await makeImage(dir, 'logo.png', { width: 64, height: 64, color: 'red' }));
    server = createServer((req, res) => {
      fetched.push(req.url!);
      if (req.url === '/moved') return res.writeHead(302, { location: '/logo' }).end();
      res.writeHead(200, { 'content-type': 'image/png', 'content-length': png.length }).end(png);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    logoUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((r) => server.close(r));
    cleanup();
  });

  async function overlaid(_p: TestPlatform, t: TestTenant, path: string) {
    const fileId = await uploadFile(
      t,
      await makeClip(dir, `clip-${kind}-${path.slice(1)}-${Date.now()}`, { width: 320, height: 180, seconds: 2, color: 'blue' }),
    );
    const create = await t.json('POST', '/vod/v1/assets', {
      transcodedSources: [{ fileId }],
      preset: 'mp4-h264-download',
      overlays: [{ startTime: '0', duration: 2000, width: 64, height: 64, imageX: 0, imageY: 0, input: { type: 'URL', url: logoUrl + path } }],
    });
    expect(create.status, JSON.stringify(create.body)).toBe(200);
    return (
      await until(
        () => t.json('GET', `/vod/v1/assets/${create.body.id}`),
        (r) => ['Available', 'Error'].includes(r.body?.status),
        { timeoutMs: 90_000 },
      )
    ).body;
  }

  it('refuses a private address by default, naming the overlay and the setting', async () => {
    const p = await startPlatform(kind);
    try {
      const asset = await overlaid(p, await p.createTenant(), '/logo');
      expect(asset.status).toBe('Error');
      expect(asset.errorMessage).toContain('overlay 1');
      expect(asset.errorMessage).toContain('127.0.0.1');
      expect(asset.errorMessage).toContain('MEDIAPLANE_FETCH_ALLOW_PRIVATE=true');
      expect(fetched).toEqual([]);
    } finally {
      await p.stop();
    }
  });

  it('with MEDIAPLANE_FETCH_ALLOW_PRIVATE, follows a redirect and burns the picture in', async () => {
    const p = await startPlatform(kind, { MEDIAPLANE_FETCH_ALLOW_PRIVATE: 'true' });
    try {
      const asset = await overlaid(p, await p.createTenant(), '/moved');
      expect(asset.status, asset.errorMessage).toBe('Available');
      expect(fetched).toEqual(['/moved', '/logo']);
      const mp4 = asset.endpoints.find((e: { format: string }) => e.format === 'MP4');
      const frame = await frameAt(mp4.url, 1);
      const [r, g, b] = meanColor(frame, 24, 24);
      expect(r).toBeGreaterThan(180);
      expect(g).toBeLessThan(80);
      expect(b).toBeLessThan(80);
      const [, , b2] = meanColor(frame, 200, 120);
      expect(b2).toBeGreaterThan(150); // the clip itself, blue, outside the overlay
    } finally {
      fetched.length = 0;
      await p.stop();
    }
  });
});
