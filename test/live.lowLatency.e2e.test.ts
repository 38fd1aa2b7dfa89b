import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { playLive, pushEncoder, startLivePlayback, type Encoder } from './helpers/live.ts';
import { endpointOf, liveChannels } from './helpers/commands.ts';
import { playLowLatency } from './helpers/lowLatency.ts';
import { describeOnDb, type TestPlatform, type TestTenant } from './helpers/platform.ts';
import { until } from './helpers/until.ts';

/**
 * A `ReducedLatency` channel, end to end: ffmpeg pushes RTMP, the platform serves LL-HLS and LL-DASH, hls.js in
 * low-latency mode plays it in headless Chromium (the latency it measures is printed, not judged: the judging is
 * bench/live's), and the playlist-level behaviour of RFC 8216bis is checked over HTTP: parts, the preload hint,
 * blocking reloads, delta updates, and a DASH segment streamed while it is written.
 */
interface Position {
  msn: number;
  parts: number;
  hint?: string;
  skipped?: number;
  segments: string[];
}

/** Where a playlist stands: the segment being written, its parts listed so far, the preload hint. */
function position(text: string): Position {
  let msn = Number(/#EXT-X-MEDIA-SEQUENCE:(\d+)/.exec(text)![1]);
  let parts = 0;
  const segments: string[] = [];
  const skipped = /#EXT-X-SKIP:SKIPPED-SEGMENTS=(\d+)/.exec(text)?.[1];
  if (skipped) msn += Number(skipped);
  for (const line of text.split('\n')) {
    if (line.startsWith('#EXT-X-PART:')) parts += 1;
    else if (line && !line.startsWith('#')) {
      segments.push(line);
      msn += 1;
      parts = 0;
    }
  }
  return {
    msn,
    parts,
    hint: /#EXT-X-PRELOAD-HINT:TYPE=PART,URI="([^"]+)"/.exec(text)?.[1],
    skipped: skipped === undefined ? undefined : Number(skipped),
    segments,
  };
}

describeOnDb('postgres', 'Low-latency live channel', (kind) => {
  let p: TestPlatform;
  let t: TestTenant;
  let browser: Browser;
  let page: { url: string; close(): Promise<void> };
  let encoder: Encoder | undefined;

  beforeAll(async () => {
    ({ p, browser, page } = await startLivePlayback(kind, {
      // Longer than CAN-SKIP-UNTIL (6 target durations), so that a delta update has segments to skip.
      MEDIAPLANE_LIVE_WINDOW_SEGMENTS: '10',
    }));
    t = await p.createTenant();
  });
  afterAll(async () => {
    await encoder?.stop();
    await Promise.all([browser?.close(), page?.close()]);
    await p?.stop();
  });

  it('serves parts, a preload hint, blocking reloads and delta updates, and hls.js plays it in low-latency mode', async () => {
    const live = liveChannels(t);
    const { id } = await live.create({
      name: 'low latency',
      latency: 'ReducedLatency',
      input: { inputLoss: { type: 'COLOR', color: '#1060C0' } },
      qualities: [{ resolution: '180p', frameRate: 25 }],
    });
    await live.start(id);
    await live.waitStatus(id, 'On');
    const conf = await live.configuration(id);
    expect(conf.latency).toBe('ReducedLatency');
    encoder = pushEncoder(conf.input.transportPrimaryIngestUrl!.replace('localhost', '127.0.0.1'));
    const ch = await live.get(id);
    const hls = endpointOf(ch, 'HLS').url;
    const dash = endpointOf(ch, 'DASH').url;
    const media = hls.replace(/master\.m3u8$/, '180p.m3u8');
    const get = (url: string) => p.fetch(url);
    // A failure names the URL it was reading (the bodies of parts and segments may be streamed).
    const named = async <T>(url: string, read: (r: Response) => Promise<T>): Promise<T> => {
      try {
        return await read(await get(url));
      } catch (e) {
        throw new Error(`${url}: ${(e as Error).message}: ${String((e as Error).cause ?? '')}`, { cause: e });
      }
    };
    const text = (url: string) => named(url, (r) => r.text());

    // Parts, their target, the server control and the preload hint of the next part.
    const first = await until(
      () => text(media),
      (s) => (s.match(/#EXTINF/g) ?? []).length >= 2,
      { timeoutMs: 30_000 },
    );
    expect(first).toMatch(/^#EXT-X-SERVER-CONTROL:CAN-BLOCK-RELOAD=YES,CAN-SKIP-UNTIL=6\.0,PART-HOLD-BACK=[\d.]+$/m);
    const partTarget = Number(/#EXT-X-PART-INF:PART-TARGET=([\d.]+)/.exec(first)![1]);
    expect(partTarget).toBeGreaterThanOrEqual(0.2);
    expect(partTarget).toBeLessThanOrEqual(0.5);
    const parts = [...first.matchAll(/#EXT-X-PART:DURATION=([\d.]+),URI="([^"]+)"(,INDEPENDENT=YES)?/g)];
    expect(parts.length).toBeGreaterThan(2);
    for (const [, duration] of parts) expect(Number(duration)).toBeLessThanOrEqual(partTarget);
    // A segment starts with a key frame: its first part is independent.
    expect(first).toMatch(/#EXT-X-PART:DURATION=[\d.]+,URI="180p\/\d+\.0\.m4s",INDEPENDENT=YES/);
    const now = position(first);
    // The next part of the segment being written, or the next segment's first once this one has its full length.
    expect([`180p/${now.msn}.${now.parts}.m4s`, `180p/${now.msn + 1}.0.m4s`]).toContain(now.hint);

    // The whole segment is the concatenation of its parts (a segment of the playlist that lists several).
    const partsOf = (u: string) => parts.filter((m) => m[2]!.startsWith(u.replace(/\.m4s$/, '.'))).map((m) => m[2]!);
    const whole = [...now.segments].reverse().find((u) => partsOf(u).length > 1)!;
    expect(whole).toBeDefined();
    const bytes = (u: string) => named(hls.replace(/master\.m3u8$/, u), async (r) => Buffer.from(await r.arrayBuffer()));
    const joined = Buffer.concat(await Promise.all(partsOf(whole).map(bytes)));
    expect(joined.equals(await bytes(whole))).toBe(true);

    // Blocking reload: asking for the next part (not yet in the playlist) answers once it is published.
    const blocking = await get(`${media}?_HLS_msn=${now.msn}&_HLS_part=${now.parts}`);
    expect(blocking.status).toBe(200);
    const after = position(await blocking.text());
    expect(after.msn > now.msn || after.parts > now.parts).toBe(true);
    // The preload hint is fetched before it exists, and answers once the part is published. (A hint made void by a
    // run switch, the slate giving way to the encoder, answers 404 as RFC 8216bis allows: then the next hint.)
    const hinted = await until(
      async () => {
        const res = await get(hls.replace(/master\.m3u8$/, position(await text(media)).hint!));
        return { status: res.status, bytes: (await res.arrayBuffer()).byteLength };
      },
      (r) => r.status === 200,
      { timeoutMs: 30_000, what: 'a preload hint answered' },
    );
    expect(hinted.bytes).toBeGreaterThan(0);
    // Too far ahead, or a part without a segment: 400 at once.
    expect((await get(`${media}?_HLS_msn=${after.msn + 10}`)).status).toBe(400);
    expect((await get(`${media}?_HLS_part=1`)).status).toBe(400);
    expect((await get(`${media}?_HLS_msn=abc`)).status).toBe(400);

    // Delta update: the oldest segments replaced by EXT-X-SKIP, the rest as in the full playlist.
    const full = await until(
      () => text(media),
      (s) => (s.match(/#EXTINF/g) ?? []).length >= 9,
      { timeoutMs: 30_000 },
    );
    const fullAt = position(full);
    const delta = await text(`${media}?_HLS_msn=${fullAt.msn}&_HLS_skip=YES`);
    const deltaAt = position(delta);
    expect(deltaAt.skipped).toBeGreaterThan(0);
    expect(delta).toContain('#EXT-X-VERSION:9');
    expect(deltaAt.segments.length + deltaAt.skipped!).toBeGreaterThanOrEqual(fullAt.segments.length);
    expect(/#EXT-X-MEDIA-SEQUENCE:(\d+)/.exec(delta)![1]).toBe(/#EXT-X-MEDIA-SEQUENCE:(\d+)/.exec(full)![1]);

    // Low-latency DASH: segments announced a part after they begin, and one still being written is streamed whole.
    const mpd = await text(dash);
    expect(mpd).toMatch(/availabilityTimeOffset="[\d.]+" availabilityTimeComplete="false"/);
    const open = position(await text(media));
    const streamed = await bytes(`180p/${open.msn}.m4s`);
    expect(streamed.length).toBeGreaterThan(0);
    expect(streamed.equals(await bytes(`180p/${open.msn}.m4s`))).toBe(true);

    // hls.js in low-latency mode plays it, loading parts; the latency it measures is printed.
    const played = await playLowLatency(browser, page.url, hls, 8);
    expect(played.error).toBeUndefined();
    expect(played.times.length, JSON.stringify(played)).toBeGreaterThan(0);
    expect(played.videoHeight).toBe(180);
    expect(played.times.at(-1)!).toBeGreaterThan(played.times[0]!);
    expect(played.partsLoaded).toBeGreaterThan(0);
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
    console.log(
      `[${kind}] LL-HLS in hls.js (lowLatencyMode, part target ${partTarget} s, 1 s segments): ` +
        `latency to the live edge ${median(played.latency).toFixed(2)} s (hls.latency, median), ` +
        `${median(played.behindWallClock).toFixed(2)} s behind the wall clock (program date-time), ${played.partsLoaded} parts loaded`,
    );

    // dash.js plays the low-latency MPD (the same encode): the playhead moves on by two seconds.
    const dashPlayer = await playLive(browser, page.url, dash, 'dash');
    try {
      const start = await until(dashPlayer.state, (s) => s.currentTime > 0 || s.error !== undefined, { timeoutMs: 30_000, what: 'dash.js starts' });
      const moved = await until(dashPlayer.state, (s) => s.currentTime > start.currentTime + 2 || s.error !== undefined, {
        timeoutMs: 30_000,
        what: 'dash.js plays on',
      });
      expect(moved.error).toBeUndefined();
      expect(moved.videoHeight).toBe(180);
    } finally {
      await dashPlayer.close();
    }

    await live.stop(id);
    await live.waitStatus(id, 'Off', 30_000);
  }, 180_000);
});
