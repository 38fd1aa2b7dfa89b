import { request } from 'node:http';
import { eq } from 'drizzle-orm';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { channelPrefix } from '../src/modules/live/urls.ts';
import { mediaPrefix } from '../src/modules/recorder/storageKeys.ts';
import { recorderRecordings } from '../src/modules/recorder/tables.ts';
import { makeClip, tempDir } from './helpers/media.ts';
import { describeEachDb, startPlatform, type TestPlatform, type TestTenant } from './helpers/platform.ts';
import { uploadFile } from './helpers/upload.ts';
import { until } from './helpers/until.ts';

/** A path sent as written: `fetch` would resolve its `.` and `..` segments before sending. */
function rawGet(base: string, path: string): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    request({ hostname, port, path, method: 'GET' }, (res) => {
      let body = '';
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode!, body }));
    })
      .on('error', reject)
      .end();
  });
}

/**
 * The one media delivery (platform/mediaDelivery.ts), the same cases against each module that serves media: VOD
 * outputs, live channels and recordings. What a player and a CDN rely on: preflight, whole files, ranges, HEAD, the
 * path guard, ids in any case, and the playback guards (token, allowed domains, cap).
 */
describeEachDb('Media delivery, the same for VOD, live and recordings', (kind) => {
  const { dir, cleanup } = tempDir('mediaplane-delivery-');
  let p: TestPlatform;
  let t: TestTenant;
  /** Per delivery: the streaming asset's id and the URL of a stored segment and of a playlist. */
  const media: Record<'vod' | 'live' | 'recording', { id: string; segment: string; playlist: string; size: number }> = {} as never;

  beforeAll(async () => {
    p = await startPlatform(kind);
    t = await p.createTenant();
    // VOD: a remuxed output, found by reading its playlists.
    const fileId = await uploadFile(t, await makeClip(dir, 'clip', { seconds: 4, fps: 10, audio: [] }));
    const assetId = (await t.json('POST', '/vod/v1/assets', { transcodedSources: [{ fileId }], preset: 'remux-hls-mp4' })).body.id;
    const asset = (
      await until(
        () => t.json('GET', `/vod/v1/assets/${assetId}`),
        (r) => ['Available', 'Error'].includes(r.body?.status),
        { timeoutMs: 60_000 },
      )
    ).body;
    let playlist = asset.endpoints.find((e: any) => e.format === 'HLS').url as string;
    const master = playlist;
    for (;;) {
      const text = await (await fetch(playlist)).text();
      const line = text.split('\n').find((l) => l && !l.startsWith('#'))!;
      const next = new URL(line.trim(), playlist).toString();
      if (!line.endsWith('.m3u8')) {
        const size = (await (await fetch(next)).arrayBuffer()).byteLength;
        media.vod = { id: assetId, segment: next, playlist: master, size };
        break;
      }
      playlist = next;
    }
    // Live: a channel that is Off keeps serving the files it published; these are written as its packager would.
    const channelId = (await t.json('POST', '/live/v1/channels', { name: 'd', input: { inputLoss: { type: 'COLOR', color: '#000000' } } })).body.id;
    const segmentBytes = Buffer.alloc(1000, 7);
    await p.ctx.store.putObject(`${channelPrefix(t.id, channelId)}master.m3u8`, '#EXTM3U\n', 'application/vnd.apple.mpegurl');
    await p.ctx.store.putObject(`${channelPrefix(t.id, channelId)}180p/1.m4s`, segmentBytes, 'video/mp4');
    const live = `${p.baseUrl}/media/live/${t.id}/${channelId}`;
    media.live = { id: channelId, segment: `${live}/180p/1.m4s`, playlist: `${live}/master.m3u8`, size: segmentBytes.length };
    // A recording being recorded: its catch-up copy plays.
    const hour = (h: number) => new Date(Date.now() + h * 3600_000).toISOString();
    const recordingId = (
      await t.json('POST', '/cvr/v1/recordings', {
        source: { type: 'LiveChannel', liveChannelDetails: { channelId, start: hour(1), end: hour(2) } },
        catchup: { enabled: true },
      })
    ).body.id;
    await p.ctx.db.update(recorderRecordings).set({ status: 'Live' }).where(eq(recorderRecordings.id, recordingId));
    await p.ctx.store.putObject(`${mediaPrefix(t.id, recordingId)}master.m3u8`, '#EXTM3U\n', 'application/vnd.apple.mpegurl');
    await p.ctx.store.putObject(`${mediaPrefix(t.id, recordingId)}180p/1.m4s`, segmentBytes, 'video/mp4');
    const rec = `${p.baseUrl}/media/recordings/${t.id}/${recordingId}/media`;
    media.recording = { id: recordingId, segment: `${rec}/180p/1.m4s`, playlist: `${rec}/master.m3u8`, size: segmentBytes.length };
  }, 120_000);
  afterAll(async () => {
    await p?.stop();
    cleanup();
  });

  for (const delivery of ['vod', 'live', 'recording'] as const) {
    describe(delivery, () => {
      it('answers a preflight, a whole file, a range, an unsatisfiable range and a HEAD', async () => {
        const m = media[delivery];
        const pre = await fetch(m.segment, { method: 'OPTIONS', headers: { origin: 'https://player.example', 'access-control-request-headers': 'range' } });
        expect(pre.status).toBe(204);
        expect(pre.headers.get('access-control-allow-origin')).toBe('*');
        expect(pre.headers.get('access-control-allow-headers')).toBe('Range');

        const whole = await fetch(m.segment);
        expect(whole.status).toBe(200);
        expect(whole.headers.get('content-type')).toMatch(/^video\/(mp4|mp2t)$/);
        expect(whole.headers.get('accept-ranges')).toBe('bytes');
        expect(whole.headers.get('access-control-expose-headers')).toContain('Content-Range');
        expect((await whole.arrayBuffer()).byteLength).toBe(m.size);

        const part = await fetch(m.segment, { headers: { range: 'bytes=10-19' } });
        expect(part.status).toBe(206);
        expect(part.headers.get('content-range')).toBe(`bytes 10-19/${m.size}`);
        expect((await part.arrayBuffer()).byteLength).toBe(10);

        const outside = await fetch(m.segment, { headers: { range: `bytes=${m.size}-` } });
        expect(outside.status).toBe(416);
        expect(outside.headers.get('content-range')).toBe(`bytes */${m.size}`);
        expect(outside.headers.get('cache-control')).toBeNull();
        expect((await outside.json()).status.code).toBe('range_not_satisfiable');

        const head = await fetch(m.segment, { method: 'HEAD' });
        expect(head.status).toBe(200);
        expect(head.headers.get('content-length')).toBe(String(m.size));
        expect((await head.arrayBuffer()).byteLength).toBe(0);

        const playlist = await fetch(m.playlist);
        expect(playlist.status).toBe(200);
        expect(playlist.headers.get('content-type')).toBe('application/vnd.apple.mpegurl');
        expect(await playlist.text()).toMatch(/^#EXTM3U/);
      });

      it('refuses `.`, `..` and empty segments and what does not exist with a 404; takes the ids in any case', async () => {
        const m = media[delivery];
        const path = new URL(m.segment).pathname;
        const at = path.lastIndexOf('/');
        for (const bad of [`${path.slice(0, at)}/./1.m4s`, `${path.slice(0, at)}/../180p/1.m4s`, `${path.slice(0, at)}//1.m4s`, `${path}.missing`]) {
          const res = await rawGet(p.baseUrl, bad);
          expect(res.status, bad).toBe(404);
          expect(JSON.parse(res.body).status.code).toBe('media_not_found');
        }
        const upper = m.segment.replace(t.id, t.id.toUpperCase()).replace(m.id, m.id.toUpperCase());
        expect((await fetch(upper)).status).toBe(200);
      });

      it('asks for a playback token when the asset wants one, limits its sessions with cap, and refuses pages of other domains', async () => {
        const m = media[delivery];
        const settings = `/streaming/v1/assets/${m.id}/settings`;
        expect((await t.json('PATCH', settings, { tokenRequired: 'Enabled', cap: 'Enabled' })).status).toBe(200);
        try {
          const refused = await fetch(m.segment);
          expect(refused.status).toBe(401);
          expect((await refused.json()).status.code).toBe('playback_token_required');
          const key = (await t.json('GET', '/streaming/v1/settings')).body.contentAcquisitionInfo.authorization.signingKey;
          const token = await new SignJWT({})
            .setProtectedHeader({ alg: 'HS256' })
            .setSubject(m.id)
            .setExpirationTime(Math.floor(Date.now() / 1000) + 120)
            .sign(new TextEncoder().encode(key));
          const tokened = m.segment.replace(/\/([^/]+)$/, `/token=${token}/$1`);
          expect((await fetch(tokened, { headers: { 'user-agent': 'device-a' } })).status).toBe(200);
          const second = await fetch(tokened, { headers: { 'user-agent': 'device-b' } });
          expect(second.status).toBe(403);
          expect((await second.json()).status.code).toBe('playback_sessions_exceeded');
        } finally {
          await t.json('PATCH', settings, { tokenRequired: 'Disabled', cap: 'Disabled' });
        }
        const domain = (await t.json('POST', '/streaming/v1/domains', { url: '*.good.example' })).body;
        try {
          const other = await fetch(m.segment, { headers: { origin: 'https://evil.example' } });
          expect(other.status).toBe(403);
          expect(other.headers.get('access-control-allow-origin')).toBe('*');
          expect((await other.json()).status.code).toBe('origin_not_allowed');
          expect((await fetch(m.segment, { headers: { origin: 'https://tv.good.example' } })).status).toBe(200);
        } finally {
          await t.call('DELETE', `/streaming/v1/domains?playerDomainId=${domain.playerDomainId}`);
        }
      });
    });
  }
});
