import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runFfmpeg } from '../src/media/ffmpeg.ts';
import { pushRtmp } from './helpers/live.ts';
import { tempDir } from './helpers/media.ts';
import { describeOnDb, startPlatform, type TestPlatform, type TestTenant } from './helpers/platform.ts';
import { freePort } from './helpers/process.ts';
import { until } from './helpers/until.ts';
import { detect } from './helpers/watermarking.ts';

const { dir } = tempDir('mediaplane-watermark-live-');

/** 4-bit user numbers (the smallest the settings allow): a 12-segment code word with the CRC-8, 12 s at 1 s segments. */
const BITS = 4;
/** Segments captured: one code word and a few more, for the pictures left out at segment edges. */
const CAPTURED = BITS + 8 + 3;

/**
 * A live channel with `isWatermarkProtected`, end to end: ffmpeg pushes RTMP, a viewer's redirector playlist grows as
 * the channel goes, the viewer's segments (A or B per media sequence number, as the redirector chose) are fetched
 * like a player, joined and re-encoded to 360p, and detection names the viewer.
 */
describeOnDb('pglite', 'Watermarking a live channel', (kind) => {
  let p: TestPlatform;
  let t: TestTenant;
  let encoder: ReturnType<typeof pushRtmp> | undefined;
  let channel: any;

  beforeAll(async () => {
    p = await startPlatform(kind, {
      MEDIAPLANE_RTMP_HOST: '127.0.0.1',
      MEDIAPLANE_RTMP_PORT: String(await freePort()),
      MEDIAPLANE_LIVE_POLL_MS: '200',
      MEDIAPLANE_LIVE_SEGMENT_SECONDS: '1',
    });
    t = await p.createTenant();
    expect((await t.json('PATCH', '/watermarking/v1/settings', { userNumberBits: BITS })).status).toBe(200);
    const created = await t.json('POST', '/live/v1/channels', {
      name: 'marked live',
      input: { inputLoss: { type: 'COLOR', color: '#1060C0' } },
      qualities: [{ resolution: '180p', frameRate: 25 }],
      isWatermarkProtected: true,
    });
    expect(created.status).toBe(200);
    expect((await t.call('POST', `/live/v1/channels/${created.body.id}/start`)).status).toBe(200);
    await until(
      async () => (await t.json('GET', `/live/v1/channels/${created.body.id}/status`)).body.status,
      (s) => s === 'On',
      { timeoutMs: 60_000 },
    );
    const conf = (await t.json('GET', `/live/v1/channels/${created.body.id}/configuration`)).body;
    encoder = pushRtmp(conf.input.transportPrimaryIngestUrl.replace('localhost', '127.0.0.1'));
    channel = (await t.json('GET', `/live/v1/channels/${created.body.id}`)).body;
  }, 120_000);
  afterAll(async () => {
    await encoder?.stop();
    await p?.stop();
  });

  it("lists the channel as a watermarking asset, plays a viewer's growing playlist, names the viewer from a 360p re-encode, and stops at a revoke", async () => {
    const list = await t.json('GET', '/watermarking/v1/assets');
    expect(list.body.items).toHaveLength(1);
    const asset = list.body.items[0];
    expect(asset).toMatchObject({ createDate: expect.any(String), metadata: { title: 'marked live' }, channelId: channel.id, vodAssetId: null });
    expect(asset).toMatchObject({ status: 'Available', userNumberBits: BITS, width: 320, height: 180 });
    // The marked variants are the redirector's only: the channel's own master playlist names the ladder.
    const master = await (await p.fetch(channel.endpoints[0].url)).text();
    expect(master).toContain('180p.m3u8');
    expect(master).not.toContain('wm');

    const token = await t.json('POST', '/watermarking/v1/redirector/token', { assetId: asset.id, userNumber: 9, userName: 'Ada' });
    expect(token.status).toBe(200);
    const media = new URL('media.m3u8', token.body.playbackUrl);
    // Like a live player: reload the playlist, fetch each new segment of the pushed stream (after the slate's
    // discontinuity) through the redirector, until enough are in.
    const segments = new Map<number, Buffer>();
    let init: Buffer | undefined;
    let first: number | undefined;
    await until(
      async () => {
        const text = await (await t.fetch(media)).text();
        let sequence = Number(/#EXT-X-MEDIA-SEQUENCE:(\d+)/.exec(text)?.[1] ?? 0);
        let map = '';
        let afterBreak = false;
        for (const line of text.split('\n')) {
          if (line === '#EXT-X-DISCONTINUITY') afterBreak = true;
          else if (line.startsWith('#EXT-X-MAP:')) map = /URI="([^"]+)"/.exec(line)![1]!;
          else if (line && !line.startsWith('#')) {
            const n = sequence++;
            expect(line).toBe(`segments/${n}.m4s`);
            if (afterBreak && first === undefined) first = n;
            if (first === undefined || n < first || n >= first + CAPTURED || segments.has(n)) continue;
            init ??= Buffer.from(await (await t.fetch(map)).arrayBuffer());
            const res = await t.fetch(new URL(line, media));
            expect(res.status).toBe(200);
            segments.set(n, Buffer.from(await res.arrayBuffer()));
          }
        }
        return segments.size;
      },
      (n) => n >= CAPTURED,
      { timeoutMs: 60_000, everyMs: 500, what: 'the viewer’s live segments' },
    );
    const joined = join(dir, 'capture.mp4');
    await writeFile(joined, Buffer.concat([init!, ...[...segments.keys()].sort((a, b) => a - b).map((n) => segments.get(n)!)]));
    const pirated = join(dir, 'ada.mp4');
    await runFfmpeg([
      '-y',
      '-i',
      joined,
      '-vf',
      'scale=640:360',
      '-c:v',
      'libx264',
      '-preset',
      'veryfast',
      '-b:v',
      '250k',
      '-maxrate',
      '250k',
      '-bufsize',
      '250k',
      '-an',
      pirated,
    ]);
    const found = await detect(t, pirated);
    expect(found.file.detection).toMatchObject({ status: 'Detected', assetId: asset.id, userNumber: 9, userName: 'Ada', sessionId: token.body.sessionId });
    // A revoke stops the live playlist at once (on PGlite the redirector keeps a session read a moment: the revoke drops it).
    expect((await t.fetch(media)).status).toBe(200);
    await t.json('POST', `/watermarking/v1/sessions/${token.body.sessionId}/revoke`);
    expect((await t.fetch(media)).status).toBe(403);
  }, 120_000);
});
