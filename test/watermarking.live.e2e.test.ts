import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { runFfmpeg } from '../src/media/ffmpeg.ts';
import { codeWord } from '../src/media/watermark/code.ts';
import { play } from './helpers/browser.ts';
import { newestSegment, pushEncoder, startLivePlayback, type Encoder } from './helpers/live.ts';
import { endpointOf, liveChannels, type Channel } from './helpers/commands.ts';
import { tempDir } from './helpers/media.ts';
import { describeOnDb, type TestPlatform, type TestTenant } from './helpers/platform.ts';
import { until } from './helpers/until.ts';
import { detect } from './helpers/watermarking.ts';

const { dir } = tempDir('mediaplane-watermark-live-');
const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** 4-bit user numbers (the smallest the settings allow): a 12-segment code word with the CRC-8, 12 s at 1 s segments. */
const BITS = 4;
/** Segments captured: one code word and a few more, for the pictures left out at segment edges. */
const CAPTURED = BITS + 8 + 3;
/** The viewer plays the top rung for this many captured segments, then the lower one (a player stepping down). */
const ON_TOP = 7;
const RUNGS = ['240p', '144p'];

/**
 * A live channel with `isWatermarkProtected` and a two-rung ladder, end to end: ffmpeg pushes RTMP, both rungs are
 * marked, the redirector's master lists both and hls.js plays each; a viewer's segments (A or B per media sequence
 * number, the same on both rungs) are fetched like a player that steps down from 240p to 144p mid-way, the two
 * pieces joined and re-encoded to 360p, and detection names the viewer.
 */
describeOnDb('pglite', 'Watermarking a live channel', (kind) => {
  let p: TestPlatform;
  let browser: Browser;
  let page: { url: string; close(): Promise<void> };
  let t: TestTenant;
  let encoder: Encoder | undefined;
  let channel: Channel;
  /** The newest segment of the top rung when the encoder went on air. */
  let connectedAt: number;

  beforeAll(async () => {
    ({ p, browser, page } = await startLivePlayback(kind));
    t = await p.createTenant();
    expect((await t.json('PATCH', '/watermarking/v1/settings', { userNumberBits: BITS })).status).toBe(200);
    const live = liveChannels(t);
    const { id } = await live.create({
      name: 'marked live',
      input: { inputLoss: { type: 'COLOR', color: '#1060C0' } },
      qualities: RUNGS.map((resolution) => ({ resolution, frameRate: 25 })),
      isWatermarkProtected: true,
    });
    await live.start(id);
    await live.waitStatus(id, 'On');
    encoder = pushEncoder(await live.ingestUrl(id));
    await live.waitInputConnected(id);
    channel = await live.get(id);
    // The first segment encoded from the encoder is published by now: those after it are of the pushed stream.
    connectedAt = newestSegment(await (await p.fetch(endpointOf(channel, 'HLS').url.replace(/master\.m3u8$/, `${RUNGS[0]}.m3u8`))).text());
  }, 120_000);
  afterAll(async () => {
    await encoder?.stop();
    await page?.close();
    await browser?.close();
    await p?.stop();
  });

  it("lists the channel as a watermarking asset, marks every rung, plays the redirector's master, names a viewer who switched rungs from a 360p re-encode, and stops at a revoke", async () => {
    const list = await t.json('GET', '/watermarking/v1/assets');
    expect(list.body.items).toHaveLength(1);
    const asset = list.body.items[0];
    expect(asset).toMatchObject({ createDate: expect.any(String), metadata: { title: 'marked live' }, channelId: channel.id, vodAssetId: null });
    expect(asset).toMatchObject({ status: 'Available', userNumberBits: BITS, width: 426, height: 240 });
    // The marked variants are the redirector's only: the channel's own master playlist names the ladder.
    const master = await (await p.fetch(endpointOf(channel, 'HLS').url)).text();
    expect(master).toContain('240p.m3u8');
    expect(master).not.toContain('wm');

    const token = await t.json('POST', '/watermarking/v1/redirector/token', { assetId: asset.id, userNumber: 9, userName: 'Ada' });
    expect(token.status).toBe(200);
    // The redirector's master lists every marked rung, tallest first, each this viewer's media playlist of that rung.
    const redirected = await until(
      async () => (await t.fetch(token.body.playbackUrl)).text(),
      (text) => text.includes('rendition=144p'),
      { timeoutMs: 30_000, everyMs: 500, what: 'the master playlist of both marked rungs' },
    );
    expect(redirected.split('\n').filter((l) => l.startsWith('media.m3u8'))).toEqual(RUNGS.map((r) => `media.m3u8?rendition=${r}`));
    expect(redirected).toMatch(/RESOLUTION=426x240,.*CODECS="avc1\./);
    expect(redirected).toMatch(/RESOLUTION=256x144,/);
    // The channel's audio (unmarked) is a rendition of the redirector's too, named by every marked variant.
    expect(redirected).toMatch(/^#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="audio",.*URI="media\.m3u8\?rendition=audio"$/m);
    for (const variant of redirected.split('\n').filter((l) => l.startsWith('#EXT-X-STREAM-INF:')))
      expect(variant).toMatch(/CODECS="avc1\.[^"]*,mp4a\.[^"]*".*AUDIO="audio"/);
    for (const height of [240, 144]) {
      const played = await play(browser, page.url, token.body.playbackUrl, { height, seconds: 20, untilAdvanced: 1.5 });
      console.log(
        `hls.js on the redirector's master at ${height}p: ${played.videoWidth}x${played.videoHeight}, playhead ${played.times.at(0)} → ${played.times.at(-1)}, ` +
          `${played.audioFragments.length} audio segments, ${played.audioDecodedBytes} audio bytes decoded`,
      );
      expect(played.error).toBeUndefined();
      expect(played.videoHeight).toBe(height);
      expect(played.times.at(-1)! - played.times.find((x) => x > 0)!).toBeGreaterThanOrEqual(1.5);
      // The viewer hears the channel: hls.js took the audio rendition, fetched its segments through the redirector, decoded them.
      expect(played.audioTracks.length).toBeGreaterThanOrEqual(1);
      expect(played.audioFragments.length).toBeGreaterThanOrEqual(1);
      for (const url of played.audioFragments)
        expect(url).toMatch(new RegExp(`^${escape(new URL('segments/', token.body.playbackUrl).href)}[0-9]+\\.m4s\\?rendition=audio$`));
      expect(played.audioDecodedBytes).toBeGreaterThan(0);
    }
    // The redirector's audio playlist is the channel's (window, sequence numbers, discontinuities, program date-times),
    // its segments through the redirector: a 302 to the channel's own audio segment, the same for every viewer.
    const audio = new URL('media.m3u8?rendition=audio', token.body.playbackUrl);
    const tags = (text: string) => text.split('\n').filter((l) => l.startsWith('#') && !l.startsWith('#EXT-X-MAP'));
    const [ours, theirs] = await until(
      async () => Promise.all([(await t.fetch(audio)).text(), (await p.fetch(new URL('audio.m3u8', endpointOf(channel, 'HLS').url))).text()]),
      ([a, b]) => JSON.stringify(tags(a)) === JSON.stringify(tags(b)),
      { timeoutMs: 10_000, everyMs: 100, what: "the redirector's audio playlist and the channel's at one instant" },
    );
    const audioSegments = ours.split('\n').filter((l) => l && !l.startsWith('#'));
    expect(audioSegments).toEqual(
      theirs
        .split('\n')
        .flatMap((l) => /^audio\/([0-9]+)\.m4s$/.exec(l)?.[1] ?? [])
        .map((n) => `segments/${n}.m4s?rendition=audio`),
    );
    const lastAudio = new URL(audioSegments.at(-1)!, audio);
    const audioRedirect = await t.fetch(lastAudio, { redirect: 'manual' });
    expect(audioRedirect.status).toBe(302);
    expect(audioRedirect.headers.get('location')).toContain(`/audio/${/([0-9]+)\.m4s/.exec(lastAudio.pathname)![1]}.m4s`);
    expect((await t.fetch(lastAudio)).status).toBe(200);

    // Like a live player: reload the playlist, fetch each new segment of the pushed stream (after the first one
    // encoded from it) through the redirector, until enough are in; the first ON_TOP at 240p, the rest at 144p.
    const media = (rung: string) => new URL(`media.m3u8?rendition=${rung}`, token.body.playbackUrl);
    const rungOf = (n: number, first: number) => RUNGS[n - first < ON_TOP ? 0 : 1];
    const segments = new Map<number, Buffer>();
    const inits = new Map<string, Buffer>();
    let first: number | undefined;
    await until(
      async () => {
        for (const rung of RUNGS) {
          const text = await (await t.fetch(media(rung))).text();
          let sequence = Number(/#EXT-X-MEDIA-SEQUENCE:(\d+)/.exec(text)?.[1] ?? 0);
          let map = '';
          for (const line of text.split('\n')) {
            if (line.startsWith('#EXT-X-MAP:')) map = /URI="([^"]+)"/.exec(line)![1]!;
            else if (line && !line.startsWith('#')) {
              const n = sequence++;
              expect(line).toBe(`segments/${n}.m4s?rendition=${rung}`);
              if (n > connectedAt && first === undefined && rung === RUNGS[0]) first = n;
              if (first === undefined || n < first || n >= first + CAPTURED || segments.has(n) || rungOf(n, first) !== rung) continue;
              if (!inits.has(rung)) inits.set(rung, Buffer.from(await (await t.fetch(map)).arrayBuffer()));
              const res = await t.fetch(new URL(line, media(rung)));
              expect(res.status).toBe(200);
              segments.set(n, Buffer.from(await res.arrayBuffer()));
            }
          }
        }
        return segments.size;
      },
      (n) => n >= CAPTURED,
      { timeoutMs: 60_000, everyMs: 500, what: 'the viewer’s live segments' },
    );
    // Every rung spells the same word: segment n is variant A or B by bit n of user 9's code word, whatever the rung.
    const word = codeWord(9, BITS);
    for (const n of [first!, first! + 1, first! + 2, first! + 3]) {
      for (const rung of RUNGS) {
        const res = await t.fetch(new URL(`segments/${n}.m4s?rendition=${rung}`, token.body.playbackUrl), { redirect: 'manual' });
        expect(res.status).toBe(302);
        expect(res.headers.get('location')).toContain(`/wm${word[n % word.length] ? 'B' : 'A'}-${rung}/${n}.m4s`);
      }
    }
    // The capture: each rung's piece as one file (its init segment and its segments), both scaled to 360p and joined,
    // as a screen recording of a player that stepped down would be.
    const sorted = [...segments.keys()].sort((a, b) => a - b);
    const pieces = RUNGS.map((rung) => join(dir, `capture-${rung}.mp4`));
    for (const [k, rung] of RUNGS.entries()) {
      await writeFile(pieces[k]!, Buffer.concat([inits.get(rung)!, ...sorted.filter((n) => rungOf(n, first!) === rung).map((n) => segments.get(n)!)]));
    }
    const pirated = join(dir, 'ada.mp4');
    await runFfmpeg([
      '-y',
      '-i',
      pieces[0]!,
      '-i',
      pieces[1]!,
      '-filter_complex',
      '[0:v]scale=640:360,setsar=1[a];[1:v]scale=640:360,setsar=1[b];[a][b]concat=n=2:v=1:a=0[v]',
      '-map',
      '[v]',
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
      pirated,
    ]);
    const found = await detect(t, pirated);
    console.log(`detection of the capture switched from 240p to 144p: ${JSON.stringify(found.file.detection)}`);
    expect(found.file.detection).toMatchObject({ status: 'Detected', assetId: asset.id, userNumber: 9, userName: 'Ada', sessionId: token.body.sessionId });
    // A revoke stops the live playlist at once (on PGlite the redirector keeps a session read a moment: the revoke drops it).
    expect((await t.fetch(media('144p'))).status).toBe(200);
    await t.json('POST', `/watermarking/v1/sessions/${token.body.sessionId}/revoke`);
    expect((await t.fetch(media('144p'))).status).toBe(403);
    // The audio too: its playlist and its segments.
    expect((await t.fetch(audio)).status).toBe(403);
    expect((await t.fetch(lastAudio, { redirect: 'manual' })).status).toBe(403);
  }, 120_000);
});
