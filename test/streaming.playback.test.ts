import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { playbackSource } from '../src/modules/streaming/playback.ts';
import { makeClip, makeImage, tempDir } from './helpers/media.ts';
import { describeEachDb, startPlatform, type TestPlatform, type TestTenant } from './helpers/platform.ts';
import { uploadFile } from './helpers/upload.ts';
import { endpointOf, vodAssets } from './helpers/commands.ts';
import { until } from './helpers/until.ts';

const run = promisify(execFile);

/** Opens a URL like a player would (a real port: ffprobe follows the playlists' relative URLs). */
async function ffprobe(url: string): Promise<{ streams: any[]; format: any }> {
  const { stdout } = await run('ffprobe', ['-v', 'error', '-allowed_extensions', 'ALL', '-show_streams', '-show_format', '-of', 'json', url]);
  return JSON.parse(stdout);
}

const sign = (key: string, claims: { sub?: string; exp?: number; sid?: string }) => {
  let jwt = new SignJWT(claims.sid ? { sid: claims.sid } : {}).setProtectedHeader({ alg: 'HS256' });
  if (claims.sub) jwt = jwt.setSubject(claims.sub);
  if (claims.exp) jwt = jwt.setExpirationTime(claims.exp);
  return jwt.sign(new TextEncoder().encode(key));
};
const inSeconds = (s: number) => Math.floor(Date.now() / 1000) + s;

/**
 * Protected playback on a real VOD asset (remuxed once): token required → manifest and segments refused without a
 * token, played with one, refused after `exp`; allowed domains; `cap`; the same guard on live media URLs.
 */
describeEachDb('Streaming protected playback', (kind) => {
  // One folder per database: the first one's afterAll removes its own.
  const { dir, cleanup } = tempDir('mediaplane-playback-');
  let p: TestPlatform;
  let t: TestTenant;
  let other: TestTenant;
  let assetId: string;
  let hls: string;
  let segment: string; // a segment's URL below the output, relative to the HLS manifest's folder
  let key: string;

  const tokened = (url: string, token: string) => {
    const at = url.lastIndexOf('/');
    return `${url.slice(0, at)}/token=${token}${url.slice(at)}`;
  };

  beforeAll(async () => {
    p = await startPlatform(kind);
    t = await p.createTenant();
    other = await p.createTenant();
    const fileId = await uploadFile(t, await makeClip(dir, 'clip', { seconds: 11, fps: 15, audio: [] }));
    assetId = (await vodAssets(t).create({ transcodedSources: [{ fileId }], preset: 'remux-hls-mp4' })).id;
    hls = endpointOf(await vodAssets(t).settled(assetId), 'HLS').url;
    // The first media segment, found by reading the playlists as a player does.
    let playlist = hls;
    for (;;) {
      const text = await (await fetch(playlist)).text();
      const line = text
        .split('\n')
        .find((l) => l && !l.startsWith('#'))!
        .trim();
      const next = new URL(line, playlist).toString();
      if (!line.endsWith('.m3u8')) {
        segment = next;
        break;
      }
      playlist = next;
    }
    key = (await t.json('GET', '/streaming/v1/settings')).body.contentAcquisitionInfo.authorization.signingKey;
    const set = await t.json('PATCH', `/streaming/v1/assets/${assetId}/settings`, { tokenRequired: 'Enabled' });
    expect(set.body.tokenRequiredPolicy.asset).toBe('Enabled');
  }, 120_000);
  afterAll(async () => {
    await p.stop();
    cleanup();
  });

  it('refuses the manifest and the segments without a token, or with a wrong one', async () => {
    for (const url of [hls, segment]) {
      const res = await fetch(url);
      expect(res.status, url).toBe(401);
      expect((await res.json()).status.code).toBe('playback_token_required');
    }
    const cases: [string, string][] = [
      [await sign('not-the-key', { sub: assetId, exp: inSeconds(60) }), 'playback_token_invalid'],
      [await sign(key, { sub: '0190b0a0-0000-7000-8000-000000000000', exp: inSeconds(60) }), 'playback_token_invalid'],
      [await sign(key, { sub: assetId }), 'playback_token_invalid'], // no exp
      [await sign(key, { sub: assetId, exp: inSeconds(-10) }), 'playback_token_expired'],
      ['garbage', 'playback_token_invalid'],
    ];
    for (const [token, code] of cases) {
      const res = await fetch(tokened(hls, token));
      expect(res.status, code).toBe(403);
      expect((await res.json()).status.code).toBe(code);
    }
    // The other tenant's key signs nothing here.
    const theirs = (await other.json('GET', '/streaming/v1/settings')).body.contentAcquisitionInfo.authorization.signingKey;
    expect((await fetch(tokened(hls, await sign(theirs, { sub: assetId, exp: inSeconds(60) })))).status).toBe(403);
  });

  it("tells players the time without credentials or token, from any origin (a stored dynamic MPD's clock)", async () => {
    const before = Date.now();
    const res = await fetch(`${p.baseUrl}/media/time`, { headers: { origin: 'https://player.example.net' } });
    const after = Date.now();
    const body = await res.text();
    console.log(`media clock: ${body} (asked at ${new Date(before).toISOString()}, answered by ${new Date(after).toISOString()})`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('cache-control')).toBe('no-store');
    // ISO 8601 UTC with milliseconds (what `urn:mpeg:dash:utc:http-iso:2014` asks for), read between asking and answer.
    expect(new Date(body).toISOString()).toBe(body);
    expect(Date.parse(body)).toBeGreaterThanOrEqual(before);
    expect(Date.parse(body)).toBeLessThanOrEqual(after);
  });

  it('plays with a token: the tokened manifest hands out segment URLs that carry it; an expired token is refused', async () => {
    // Long enough for ffprobe on a loaded machine; expiry is shown with a token already past its exp.
    const token = await sign(key, { sub: assetId, exp: inSeconds(300) });
    const url = tokened(hls, token);
    const probe = await ffprobe(url);
    expect(probe.streams.some((s) => s.codec_type === 'video')).toBe(true);
    expect(Number(probe.format.duration)).toBeGreaterThan(1.5);
    const seg = segment.replace(hls.slice(0, hls.lastIndexOf('/')), `${hls.slice(0, hls.lastIndexOf('/'))}/token=${token}`);
    expect((await fetch(seg)).status).toBe(200);
    // `?token=` on a manifest is redirected to the path form, so that relative segment URLs keep the token.
    const redirect = await fetch(`${hls}?token=${token}`, { redirect: 'manual' });
    expect(redirect.status).toBe(302);
    expect(new URL(redirect.headers.get('location')!, hls).toString()).toBe(url);
    // After exp, the same URLs are refused.
    const expired = await sign(key, { sub: assetId, exp: inSeconds(-1) });
    expect((await fetch(seg.replace(token, expired))).status).toBe(403);
    const res = await fetch(url.replace(token, expired));
    expect(res.status).toBe(403);
    expect((await res.json()).status.code).toBe('playback_token_expired');
  });

  it('gives the embed player the source with tokened URLs', async () => {
    const token = await sign(key, { sub: assetId, exp: inSeconds(60) });
    const source = await playbackSource(p.ctx, t.id, assetId, { token });
    expect(source).toMatchObject({ id: assetId, type: 'Vod', tokenRequired: true, live: false, dashUrl: null });
    expect(source.hlsUrl).toBe(tokened(hls, token));
    await expect(playbackSource(p.ctx, other.id, assetId)).rejects.toMatchObject({ code: 'streaming_asset_not_found' });
  });

  it('limits the simultaneous sessions of a token with cap', async () => {
    await t.json('PATCH', `/streaming/v1/assets/${assetId}/settings`, { cap: 'Enabled' });
    const shared = await sign(key, { sub: assetId, exp: inSeconds(120), sid: 'one' });
    expect((await fetch(tokened(hls, shared))).status).toBe(200);
    expect((await fetch(tokened(hls, shared))).status).toBe(200); // the same session goes on
    // The same token in a second session (another sid is another token; another viewer without sid too).
    const viewerB = await fetch(tokened(hls, shared), { headers: { 'user-agent': 'second-device' } });
    expect(viewerB.status).toBe(200); // sid names the session, not the device
    const twin = await sign(key, { sub: assetId, exp: inSeconds(120) });
    expect((await fetch(tokened(hls, twin), { headers: { 'user-agent': 'device-a' } })).status).toBe(200);
    const refused = await fetch(tokened(hls, twin), { headers: { 'user-agent': 'device-b' } });
    expect(refused.status).toBe(403);
    expect((await refused.json()).status.code).toBe('playback_sessions_exceeded');
    await t.json('PATCH', '/streaming/v1/settings', { capLimit: 2 });
    expect((await fetch(tokened(hls, twin), { headers: { 'user-agent': 'device-b' } })).status).toBe(200);
    await t.json('PATCH', `/streaming/v1/assets/${assetId}/settings`, { cap: 'Disabled' });
  });

  it('refuses media to pages of domains the tenant did not allow', async () => {
    await t.json('PATCH', `/streaming/v1/assets/${assetId}/settings`, { tokenRequired: 'Disabled' });
    expect((await fetch(hls, { headers: { origin: 'https://evil.example' } })).status).toBe(200);
    const added = (await t.json('POST', '/streaming/v1/domains', { url: '*.good.example' })).body;
    const refused = await fetch(hls, { headers: { origin: 'https://evil.example' } });
    expect(refused.status).toBe(403);
    expect(refused.headers.get('access-control-allow-origin')).toBe('*');
    const body = await refused.json();
    expect(body.status.code).toBe('origin_not_allowed');
    expect(body.status.message).toMatch(/evil\.example/);
    expect((await fetch(segment, { headers: { referer: 'https://evil.example/page.html' } })).status).toBe(403);
    expect((await fetch(segment, { headers: { referer: 'https://www.good.example/page.html' } })).status).toBe(200);
    expect((await fetch(hls, { headers: { origin: 'https://tv.good.example' } })).status).toBe(200);
    expect((await fetch(hls)).status).toBe(200); // not a page: a native player
    // The other tenant's domains are its own.
    await other.json('POST', '/streaming/v1/domains', { url: 'evil.example' });
    expect((await fetch(hls, { headers: { origin: 'https://evil.example' } })).status).toBe(403);
    await t.call('DELETE', `/streaming/v1/domains?playerDomainId=${added.playerDomainId}`);
    expect((await fetch(hls, { headers: { origin: 'https://evil.example' } })).status).toBe(200);
  });

  it('uploads an image through presigned parts, keeps only real images, lists, reads and deletes them', async () => {
    const png = await makeImage(dir, 'poster_art', { width: 96, height: 54, color: 'blue' });
    const bytes = readFileSync(png);
    const base = `/streaming/v1/assets/${assetId}/images/uploaded`;
    const upload = async (name: string, body: Buffer) => {
      const start = await t.json('POST', `${base}/start`, { name, fileSize: body.length });
      expect(start.status, JSON.stringify(start.body)).toBe(200);
      expect(start.body).toMatchObject({ fileId: expect.any(String), partsCount: 1, lastPartSize: body.length, fileKey: expect.stringContaining(name) });
      // A fresh URL for the part, as a client that lost its list would ask.
      const again = await t.json('GET', `${base}/${start.body.fileId}/part/1`);
      expect(again.body.url).toEqual(expect.any(String));
      const put = await fetch(again.body.url, { method: 'PUT', body: new Uint8Array(body) });
      expect(put.status).toBe(200);
      return { fileId: start.body.fileId, eTag: put.headers.get('etag')! };
    };
    const image = await upload('poster_art', bytes);
    const wrong = await t.json('POST', `${base}/complete`, { fileId: image.fileId, parts: [{ partNumber: 1, eTag: '"0000"' }] });
    expect(wrong.status).toBe(400);
    expect(wrong.body.status.code).toBe('upload_part_etag_mismatch');
    const done = await t.json('POST', `${base}/complete`, { fileId: image.fileId, parts: [{ partNumber: 1, eTag: image.eTag }] });
    expect(done.status).toBe(200);
    expect(done.body).toEqual({
      fileId: image.fileId,
      fileKey: expect.any(String),
      url: expect.stringContaining(`/media/streaming/${t.id}/${assetId}/images/${image.fileId}`),
    });
    const served = await fetch(done.body.url);
    expect(served.status).toBe(200);
    expect(served.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await served.arrayBuffer()).equals(bytes)).toBe(true);
    // It is one of the asset's images now.
    expect((await t.json('GET', `/streaming/v1/assets/${assetId}`)).body.images.poster_art).toEqual({
      Id: image.fileId,
      Name: 'poster_art',
      Url: done.body.url,
    });

    // Text dressed as an image is refused and not kept.
    const fake = await upload('fake', Buffer.from('<html>not an image</html>'));
    const refused = await t.json('POST', `${base}/complete`, { fileId: fake.fileId, parts: [{ partNumber: 1, eTag: fake.eTag }] });
    expect(refused.status).toBe(400);
    expect(refused.body.status.code).toBe('image_not_valid');
    expect((await t.json('GET', `${base}/${fake.fileId}`)).body.status).toBe('Error');
    expect((await t.json('POST', `${base}/start`, { name: 'bad name!', fileSize: 10 })).status).toBe(400);

    const list = (await t.json('GET', `${base}?status=Completed`)).body;
    expect(list).toMatchObject({ totalCount: 1, pageNumber: 1, hasMore: false });
    expect(list.items[0]).toEqual({
      id: image.fileId,
      fileKey: done.body.fileKey,
      status: 'Completed',
      fileSize: bytes.length,
      s3Uri: expect.stringContaining(done.body.fileKey),
      url: done.body.url,
      bucket: expect.any(String),
      orginalFileName: 'poster_art',
      name: 'poster_art',
      fileType: 'png',
      createDate: expect.any(String),
      lastModificationDate: expect.any(String),
    });
    expect((await t.json('GET', `${base}?fileType=png`)).body.totalCount).toBe(1);
    expect((await t.json('GET', `${base}?ids=${fake.fileId}`)).body.items.map((x: any) => x.status)).toEqual(['Error']);
    expect((await t.json('GET', `${base}?createDateStart=${new Date(Date.now() + 60_000).toISOString()}`)).body.totalCount).toBe(0);
    expect((await t.json('GET', `${base}/${image.fileId}`)).body.name).toBe('poster_art');

    // Another tenant: 404 on every image route, for this asset and its images.
    for (const [method, path, body] of [
      ['GET', base],
      ['GET', `${base}/${image.fileId}`],
      ['POST', `${base}/start`, { name: 'x', fileSize: 10 }],
      ['GET', `${base}/${image.fileId}/part/1`],
      ['POST', `${base}/complete`, { fileId: image.fileId, parts: [{ partNumber: 1 }] }],
      ['DELETE', `${base}/${image.fileId}`],
      ['POST', `${base}/deletemany`, [image.fileId]],
      ['GET', `/streaming/v1/assets/${assetId}/images/frames`],
    ] as [string, string, unknown?][]) {
      expect((await other.json(method, path, body)).status, `${method} ${path}`).toBe(404);
    }

    const deleted = await t.json('DELETE', `${base}/${image.fileId}`);
    expect(deleted).toEqual({ status: 200, body: { deletedFileKey: done.body.fileKey } });
    expect((await fetch(done.body.url)).status).toBe(404);
    expect((await t.json('GET', `/streaming/v1/assets/${assetId}`)).body.images.poster_art).toBeUndefined();
    const many = await t.json('POST', `${base}/deletemany`, [fake.fileId, image.fileId]);
    expect(many.body[fake.fileId].success).toBe(true);
    expect(many.body[image.fileId]).toMatchObject({ success: false, status: { status: 404 } });
  });

  it('extracts frames once: one every 10 s and a poster, served as images', async () => {
    const path = `/streaming/v1/assets/${assetId}/images/frames`;
    const res = await until(
      () => t.json('GET', path),
      (r) => r.status !== 202,
      { timeoutMs: 60_000 },
    );
    expect(res.status).toBe(200);
    // 11 s of video: frames at 0 s and 10 s, and the poster.
    expect(Object.keys(res.body).sort()).toEqual(['frame_00001', 'frame_00002', 'poster']);
    expect(res.body.frame_00002).toMatchObject({
      id: 'frame_00002',
      second: 10,
      s3Uri: expect.any(String),
      url: expect.stringContaining('/frames/frame_00002.jpg'),
    });
    for (const frame of Object.values(res.body) as any[]) {
      const img = await fetch(frame.url);
      expect(img.status).toBe(200);
      expect(img.headers.get('content-type')).toBe('image/jpeg');
      const { stdout } = await run('ffprobe', ['-v', 'error', '-show_streams', '-of', 'json', frame.url]);
      const stream = JSON.parse(stdout).streams[0];
      expect(stream.codec_name).toBe('mjpeg');
      expect(stream.width).toBe(frame.id === 'poster' ? 640 : 320);
    }
    // Stored: asked again, the same frames, at once.
    expect((await t.json('GET', path)).body).toEqual(res.body);
    // The poster is the player's still when the asset has no image.
    expect((await playbackSource(p.ctx, t.id, assetId)).poster).toBe(res.body.poster.url);
    // A live channel has no finished video.
    const channel = (await t.json('POST', '/live/v1/channels', { name: 'No frames', input: { inputLoss: { type: 'COLOR' } } })).body.id;
    const live = await t.json('GET', `/streaming/v1/assets/${channel}/images/frames`);
    expect(live.status).toBe(409);
    expect(live.body.status.code).toBe('frames_unavailable');
  });

  it('guards live media URLs the same way', async () => {
    const channel = (await t.json('POST', '/live/v1/channels', { name: 'Guarded', input: { inputLoss: { type: 'COLOR' } } })).body.id;
    const url = `${p.baseUrl}/media/live/${t.id}/${channel}/master.m3u8`;
    expect((await fetch(url)).status).toBe(404); // not running: no playlist yet, but no token asked either
    await t.json('PATCH', `/streaming/v1/assets/${channel}/settings`, { tokenRequired: 'Enabled' });
    expect((await fetch(url)).status).toBe(401);
    const token = await sign(key, { sub: channel, exp: inSeconds(60) });
    expect((await fetch(tokened(url, token))).status).toBe(404); // admitted; the channel is off
    expect((await fetch(tokened(url, await sign(key, { sub: assetId, exp: inSeconds(60) })))).status).toBe(403);
  });
});
