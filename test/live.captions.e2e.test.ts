import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { readDecodeTime } from '../src/media/live/packaging/mp4.ts';
import { parseBoxes, path } from '../src/media/mp4boxes.ts';
import { liveTimelineSegments } from '../src/modules/live/timeline.tables.ts';
import { play } from './helpers/browser.ts';
import { describeOnDb, type TestPlatform, type TestTenant } from './helpers/platform.ts';
import { spokenClip } from './helpers/speech.ts';
import { until } from './helpers/until.ts';
import { pushEncoder, startLivePlayback, type Encoder } from './helpers/live.ts';

/**
 * Live captions end to end: a spoken clip (espeak-ng) pushed over RTMP to a channel with `aiLiveCaptioningLanguageCode`,
 * recognized by pocketsphinx, served as WebVTT in the HLS output (a SUBTITLES rendition) and as wvtt in fragmented MP4
 * in the DASH output (a text AdaptationSet), and shown by hls.js and dash.js in headless Chromium. The captions' lag behind the video is measured and printed.
 */
/** Words of the clip; the recognizer is imperfect, so a few of them are enough. */
const SPOKEN_WORDS = ['hello', 'world', 'this', 'is', 'test', 'live', 'captions'];

/**
 * The DASH captions of the WebVTT segments with cues (`cued`): a wvtt init segment, and media segments whose decode
 * time is the WebVTT segment's start and the audio segment's of the same number (one timeline), with the same texts.
 */
async function expectWvtt(cued: Map<number, string>, p: TestPlatform, url: (file: string) => string, mpd: string) {
  const bytes = async (u: string) => {
    const res = await p.fetch(u);
    return res.status === 200 ? Buffer.from(await res.arrayBuffer()) : undefined;
  };
  const init = parseBoxes((await bytes(url('captions/init.mp4')))!);
  const moov = init.find((b) => b.type === 'moov');
  expect(path(moov, 'trak', 'mdia', 'hdlr')!.data.toString('latin1', 8, 12)).toBe('text');
  expect(path(moov, 'trak', 'mdia', 'mdhd')!.data.readUInt32BE(12)).toBe(1000);
  const entry = path(moov, 'trak', 'mdia', 'minf', 'stbl', 'stsd')!.children![0]!;
  expect(entry.type).toBe('wvtt');
  // After the SampleEntry's 8 bytes: the WebVTT configuration, the file header.
  expect(parseBoxes(entry.data, 8).map((b) => [b.type, b.data.toString('utf8')])).toEqual([['vttC', 'WEBVTT']]);
  const audioTimescale = Number(/<Representation id="audio"[^]*?timescale="(\d+)"/.exec(mpd)![1]);
  let checked = 0;
  for (const [n, vtt] of cued) {
    const [segment, audio] = await Promise.all([bytes(url(`captions/${n}.m4s`)), bytes(url(`audio/${n}.m4s`))]);
    if (!segment || !audio) continue; // gone from the window already
    const boxes = parseBoxes(segment);
    const decodeTime = Number(path(boxes[0], 'traf', 'tfdt')!.data.readBigUInt64BE(4));
    expect(Math.abs(decodeTime / 1000 - readDecodeTime(audio) / audioTimescale)).toBeLessThan(0.001);
    // Every cue text of the WebVTT segment is a `payl` of a `vttc` sample in the wvtt one.
    const mdat = boxes.find((b) => b.type === 'mdat')!.data;
    const texts = new Set(
      parseBoxes(mdat)
        .flatMap((b) => (b.type === 'vttc' ? parseBoxes(b.data) : []))
        .map((b) => b.data.toString('utf8')),
    );
    expect(texts).toEqual(new Set([...vtt.matchAll(/-->.*\n(.+)\n/g)].map((m) => m[1]!)));
    checked++;
  }
  expect(checked).toBeGreaterThan(0);
}

/**
 * The cues a player holds more than once: the same text at overlapping times (one spoken line, written into each
 * WebVTT segment it overlaps, shown once per segment). Distinct cues never overlap in time (cuesOf ends a line before
 * the next), so any pair is a copy.
 */
const repeated = (cues: { start: number; end: number; text: string }[]) =>
  cues.filter((c, i) => cues.some((d, j) => j < i && d.text === c.text && d.start < c.end && c.start < d.end));

const sequences = (playlist: string) => [...playlist.matchAll(/^(?:audio|captions)\/(\d+)\.(?:m4s|vtt)$/gm)].map((m) => Number(m[1]));

// The database work (the caption language, the channel) is the API tests' (live.channels.test.ts, on both databases).
describeOnDb('pglite', 'Live captions', (kind) => {
  let p: TestPlatform;
  let t: TestTenant;
  let browser: Browser;
  let page: { url: string; close(): Promise<void> };
  let encoder: Encoder | undefined;
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'captions-'));
    ({ p, browser, page } = await startLivePlayback(kind));
    t = await p.createTenant();
  });
  afterAll(async () => {
    await encoder?.stop();
    await Promise.all([browser?.close(), page?.close()]);
    await p?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('captions a spoken clip in WebVTT (HLS) and wvtt (DASH), and hls.js and dash.js show the cues', async () => {
    const clip = spokenClip(dir);
    const created = await t.json('POST', '/live/v1/channels', {
      name: 'captions',
      aiLiveCaptioningLanguageCode: 'en-US',
      input: { inputLoss: { type: 'COLOR', color: '#1060C0' } },
      qualities: [{ resolution: '180p', frameRate: 25 }],
    });
    expect(created.status).toBe(200);
    const id = created.body.id as string;
    expect((await t.call('POST', `/live/v1/channels/${id}/start`)).status).toBe(200);
    const status = async () => (await t.json('GET', `/live/v1/channels/${id}/status`)).body.status as string;
    await until(status, (s) => s === 'On', { timeoutMs: 60_000 });
    const ch = (await t.json('GET', `/live/v1/channels/${id}`)).body;
    const hls = ch.endpoints.find((e: any) => e.format === 'HLS').url as string;
    const dash = ch.endpoints.find((e: any) => e.format === 'DASH').url as string;
    const url = (file: string) => hls.replace(/master\.m3u8$/, file);
    const text = async (u: string) => {
      const res = await p.fetch(u);
      return res.status === 200 ? res.text() : '';
    };

    // The slate's silence: WebVTT segments without a cue.
    const silent = await until(
      () => text(url('captions.m3u8')),
      (s) => sequences(s).length > 0,
      { timeoutMs: 30_000, what: 'the first WebVTT segments' },
    );
    const quiet = await text(url(`captions/${sequences(silent)[0]}.vtt`));
    // One timestamp map for every file (cue times are the channel's timeline): hls.js then computes the same times for
    // the copies of a cue in the files it overlaps.
    expect(quiet).toMatch(/^WEBVTT\nX-TIMESTAMP-MAP=MPEGTS:0,LOCAL:00:00:00\.000\n/);
    expect(quiet).not.toContain('-->');

    const conf = (await t.json('GET', `/live/v1/channels/${id}/configuration`)).body;
    expect(conf.aiLiveCaptioning).toEqual({ isEnabled: true, language: { name: 'English (United States)', code: 'en-US', code3Lettered: 'eng' } });
    encoder = pushEncoder(conf.input.transportPrimaryIngestUrl.replace('localhost', '127.0.0.1'), { clip: await clip });

    // The lag: when each sequence number first appears in the audio playlist, and when in the subtitle playlist.
    const seenAudio = new Map<number, number>();
    const seenCaptions = new Map<number, number>();
    const cued = new Map<number, string>();
    const watch = async () => {
      const [audio, captions] = await Promise.all([text(url('audio.m3u8')), text(url('captions.m3u8'))]);
      const now = Date.now();
      for (const n of sequences(audio)) if (!seenAudio.has(n)) seenAudio.set(n, now);
      for (const n of sequences(captions)) {
        if (seenCaptions.has(n)) continue;
        seenCaptions.set(n, now);
        const vtt = await text(url(`captions/${n}.vtt`));
        if (vtt.includes('-->')) cued.set(n, vtt);
      }
      return [...cued.values()].join('\n').toLowerCase();
    };
    const words = (vtt: string) => new Set(vtt.split(/\s+/).filter((w) => SPOKEN_WORDS.includes(w)));
    const heard = await until(watch, (all) => words(all).size >= 2, { timeoutMs: 60_000, everyMs: 100, what: 'two spoken words in the captions' });
    const sample = [...cued.values()][0]!;
    expect(sample).toMatch(/^WEBVTT\nX-TIMESTAMP-MAP=MPEGTS:0,LOCAL:00:00:00\.000\n\n\d\d:\d\d:\d\d\.\d{3} --> \d\d:\d\d:\d\d\.\d{3}\n/m);

    // HLS: a SUBTITLES rendition every variant names; DASH: a text AdaptationSet of the same WebVTT segments.
    const master = await text(hls);
    expect(master).toMatch(/#EXT-X-MEDIA:TYPE=SUBTITLES,GROUP-ID="subs",NAME="English \(United States\)",LANGUAGE="en-US",.*URI="captions\.m3u8"/);
    expect(master).toMatch(/#EXT-X-STREAM-INF:.*SUBTITLES="subs"/);
    // Players are told to play far enough behind the edge for captions to be out in time: 3 segments + 9 s.
    expect(await text(url('audio.m3u8'))).toContain('#EXT-X-SERVER-CONTROL:HOLD-BACK=12.0\n');
    const playlist = await text(url('captions.m3u8'));
    expect(playlist).toMatch(/#EXT-X-PROGRAM-DATE-TIME:.*\n#EXTINF:[\d.]+,\ncaptions\/\d+\.vtt/);
    const mpd = await text(dash);
    expect(mpd).toMatch(/<AdaptationSet contentType="text" mimeType="application\/mp4" codecs="wvtt" lang="en-US">/);
    expect(mpd).toMatch(/initialization="captions\/init\.mp4" media="captions\/\$Number\$\.m4s"/);
    // dash.js plays as far behind the edge as hls.js (HOLD-BACK above), for the captions to be out in time.
    expect(mpd).toContain('suggestedPresentationDelay="PT12S"');
    await expectWvtt(cued, p, url, mpd);

    // hls.js shows the subtitle track and its cues.
    const played = await play(browser, page.url, hls, { seconds: 6 });
    expect(played.error).toBeUndefined();
    expect(played.textTracks).toEqual(['en-US']);
    expect(played.cues.length, JSON.stringify(played)).toBeGreaterThan(0);
    // The cues are the platform's: texts of the WebVTT it serves (the recognized words checked above may be elsewhere).
    const vtts = new Map(cued);
    for (const n of sequences(await text(url('captions.m3u8')))) if (!vtts.has(n)) vtts.set(n, await text(url(`captions/${n}.vtt`)));
    const served = new Set([...vtts.values()].flatMap((v) => [...v.matchAll(/-->.*\n(.+)\n/g)].map((m) => m[1]!)));
    expect(played.cues.some((c) => served.has(c.text))).toBe(true);
    // Each spoken line once, though most of them (1 s segments, lines of 1 to 3 s) are in two or three WebVTT files.
    const files = new Map<string, number>();
    for (const v of vtts.values()) for (const m of v.matchAll(/^(.+ --> .+\n.+)\n/gm)) files.set(m[1]!, (files.get(m[1]!) ?? 0) + 1);
    const overBoundaries = new Set([...files].filter(([, n]) => n > 1).map(([cue]) => cue.split('\n')[1]!));
    console.log(
      `[${kind}] hls.js cues (live): ${played.cues.length}, ${played.cues.filter((c) => overBoundaries.has(c.text)).length} of them in more than one WebVTT segment`,
    );
    expect(played.cues.some((c) => overBoundaries.has(c.text))).toBe(true);
    expect(repeated(played.cues), JSON.stringify(played.cues)).toEqual([]);
    // On the video's timeline: the cues are among the times the player played (not seconds since some other origin).
    const span = [Math.min(...played.times.filter((x) => x > 0)), Math.max(...played.times)];
    expect(played.cues.some((c) => c.end > span[0]! - 30 && c.start < span[1]! + 30)).toBe(true);

    // dash.js shows the cues of the wvtt segments, on the video's timeline too. It starts at a cue (a busy machine
    // leaves stretches without captions): the latest in the window that is at least its 12 s delay (+ 2 s) behind the edge,
    // since dash.js starts no nearer (1 s segments: sequence numbers count seconds).
    await watch();
    // On a quick machine the first cues may still be nearer the edge than that: wait until one is far enough behind.
    await until(
      () => text(url('audio.m3u8')),
      (a) => sequences(a).at(-1)! - 14 >= Math.min(...cued.keys()),
      { timeoutMs: 30_000, what: 'a cue 14 s behind the live edge' },
    );
    const audioListed = sequences(await text(url('audio.m3u8')));
    const latest = Math.max(...[...cued.keys()].filter((n) => n <= audioListed.at(-1)! - 14 && n >= audioListed[0]! + 2));
    expect(latest, `a cued segment in the window: ${[...cued.keys()]} of ${audioListed[0]}..${audioListed.at(-1)}`).toBeGreaterThan(0);
    const cueStart = /^(\d\d):(\d\d):(\d\d\.\d{3}) -->/m.exec(cued.get(latest)!)!.slice(1).map(Number);
    const startTime = (cueStart[0]! * 60 + cueStart[1]!) * 60 + cueStart[2]! - 1;
    const dashPlayed = await play(browser, page.url, dash, { player: 'dash', seconds: 4, startTime });
    expect(dashPlayed.error).toBeUndefined();
    expect(dashPlayed.textTracks).toEqual(['en-US']);
    expect(dashPlayed.times.at(-1)!).toBeGreaterThan(dashPlayed.times[0]!);
    expect(dashPlayed.cues.length, JSON.stringify(dashPlayed)).toBeGreaterThan(0);
    // That cue, at its time: text and timeline are the WebVTT's (the player cuts it at segment boundaries, then joins).
    const [, cueEnd, cueText] = /^[\d:.]+ --> ([\d:.]+)\n(.+)\n/m.exec(cued.get(latest)!)!;
    const end = cueEnd!
      .split(':')
      .map(Number)
      .reduce((a, x) => a * 60 + x, 0);
    expect(dashPlayed.cues.some((c) => c.text === cueText && c.start < end && c.end > startTime + 1)).toBe(true);
    expect(repeated(dashPlayed.cues), JSON.stringify(dashPlayed.cues)).toEqual([]);

    // Ranges of the timeline keep the captions: an event's catch-up and a recording of a past range (catch-up and
    // archive) list the subtitles track over the caption segments of the range, and its WebVTT holds the clip's words.
    const audioPlaylist = await text(url('audio.m3u8'));
    const startOf = new Map(
      [...audioPlaylist.matchAll(/#EXT-X-PROGRAM-DATE-TIME:(.+)\n#EXTINF:.*\naudio\/(\d+)\.m4s/g)].map((m) => [Number(m[2]), Date.parse(m[1]!)]),
    );
    const inWindow = [...cued.keys()].filter((n) => startOf.has(n)).sort((a, b) => a - b);
    expect(inWindow.length).toBeGreaterThan(0);
    const rangeStart = new Date(startOf.get(inWindow[0]!)!);
    // Ends inside the last cued segment: a range is every segment that overlaps it.
    const rangeEnd = new Date(startOf.get(inWindow.at(-1)!)! + 500);
    const rangesFrom = Date.now();
    // A caption segment the recognizer did not make (a channel stopped before its captions caught up): its row taken
    // off the timeline. Ranges list a gap there, on its audio segment's span, and play on.
    const missing = inWindow[0]! + 1;
    expect(missing).toBeLessThan(inWindow.at(-1)!);
    const removed = await p.ctx.db
      .delete(liveTimelineSegments)
      .where(and(eq(liveTimelineSegments.channelId, id), eq(liveTimelineSegments.track, 'captions'), eq(liveTimelineSegments.sequence, missing)))
      .returning();
    expect(removed).toHaveLength(1);
    const spokenIn = (vtt: string) => words(vtt.toLowerCase());
    const heardInRange = spokenIn(
      inWindow
        .filter((n) => n !== missing)
        .map((n) => cued.get(n)!)
        .join('\n'),
    );
    /** A range's HLS catch-up: its master names the captions, and their playlist lists WebVTT segments with the clip's words. */
    const expectCaptionedHls = async (masterUrl: string, type: 'EVENT' | 'VOD') => {
      const rangeMaster = await text(masterUrl);
      expect(rangeMaster).toMatch(/#EXT-X-MEDIA:TYPE=SUBTITLES,GROUP-ID="subs",NAME="English \(United States\)",LANGUAGE="en-US",.*URI="captions\.m3u8"/);
      expect(rangeMaster).toMatch(/#EXT-X-STREAM-INF:.*SUBTITLES="subs"/);
      const captionsUrl = new URL('captions.m3u8', masterUrl).href;
      const list = await text(captionsUrl);
      expect(list).toContain(`#EXT-X-PLAYLIST-TYPE:${type}`);
      expect(list).toContain('#EXT-X-ENDLIST');
      expect(list).not.toContain('#EXT-X-MAP');
      expect(list).toMatch(new RegExp(`#EXT-X-GAP\\n#EXTINF:[\\d.]+,\\n[^\\n]*captions/${missing}\\.vtt\\n`));
      expect(list.match(/#EXT-X-GAP/g)).toHaveLength(1);
      const files = [...list.matchAll(/^#EXTINF:.*\n(.+\.vtt)$/gm)].map((m) => m[1]!).filter((f) => !f.endsWith(`/${missing}.vtt`));
      expect(files.length).toBeGreaterThan(0);
      const vtts = await Promise.all(files.map((f) => text(new URL(f, captionsUrl).href)));
      expect(vtts.every((v) => v.startsWith('WEBVTT\nX-TIMESTAMP-MAP='))).toBe(true);
      const found = spokenIn(vtts.join('\n'));
      expect([...found].sort(), `words in ${masterUrl}'s captions`).toEqual(expect.arrayContaining([...heardInRange]));
      expect(found.size).toBeGreaterThan(0);
      return { list, found };
    };
    const expectCaptionedDash = async (mpdUrl: string) => {
      const rangeMpd = await text(mpdUrl);
      expect(rangeMpd).toMatch(/<AdaptationSet contentType="text" mimeType="application\/mp4" codecs="wvtt" lang="en-US">/);
      expect(rangeMpd).toMatch(
        /<Representation id="captions" bandwidth="\d+" codecs="wvtt">\n\s*<SegmentTemplate timescale="1000" [^>]*initialization="[^"]*captions\/init\.mp4" media="[^"]*captions\/\$Number\$\.m4s"/,
      );
      const init = await p.fetch(new URL(/initialization="([^"]*captions\/init\.mp4)"/.exec(rangeMpd)![1]!, mpdUrl).href);
      expect(init.status).toBe(200);
    };

    const event = await t.json('POST', '/live/v1/events', { channelId: id, start: rangeStart.toISOString(), end: rangeEnd.toISOString(), title: 'captioned' });
    expect(event.status).toBe(200);
    const eventEndpoints = (await t.json('GET', `/live/v1/events/${event.body.id}`)).body.catchup.endpoints as any[];
    const eventHls = await expectCaptionedHls(eventEndpoints.find((e) => e.format === 'HLS').url, 'EVENT');
    await expectCaptionedDash(eventEndpoints.find((e) => e.format === 'DASH').url);

    const recorded = Date.now();
    const recording = await t.json('POST', '/cvr/v1/recordings', {
      source: { type: 'LiveChannel', liveChannelDetails: { channelId: id, start: rangeStart.toISOString(), end: rangeEnd.toISOString() } },
      catchup: { enabled: true },
      archive: { enabled: true, delaySeconds: 0, public: true },
      title: 'captioned',
    });
    expect(recording.status, JSON.stringify(recording.body)).toBe(200);
    const rec = await until(
      async () => (await t.json('GET', `/cvr/v1/recordings/${recording.body.id}`)).body,
      (r) => r.status === 'Available' && r.archive.status === 'Available',
      { timeoutMs: 30_000, everyMs: 200, what: 'the recording and its archive' },
    );
    const recordedIn = Date.now() - recorded;
    const catchupHls = rec.catchup.endpoints.find((e: any) => e.format === 'HLS').url as string;
    const recHls = await expectCaptionedHls(catchupHls, 'EVENT');
    // The recording's own copies: its caption segments are beside its media segments.
    expect(recHls.list).toMatch(/^captions\/\d+\.vtt$/m);
    await expectCaptionedDash(rec.catchup.endpoints.find((e: any) => e.format === 'DASH').url);
    await expectCaptionedHls(rec.archive.endpoints.find((e: any) => e.format === 'HLS').url, 'VOD');
    await expectCaptionedDash(rec.archive.endpoints.find((e: any) => e.format === 'DASH').url);

    // hls.js lists the recording's subtitle track and shows its cues (the range begins at a segment with a cue), and
    // plays on across the gap.
    const recPlayed = await play(browser, page.url, catchupHls, { seconds: 4 });
    expect(recPlayed.times.at(-1)!).toBeGreaterThan(recPlayed.times[0]!);
    expect(recPlayed.error).toBeUndefined();
    expect(recPlayed.textTracks).toEqual(['en-US']);
    console.log(
      `[${kind}] captions of ranges: ${inWindow.length} captioned segments; event catch-up words: ${[...eventHls.found].join(', ')}; ` +
        `recording (past range, catch-up + archive) Available in ${recordedIn} ms; hls.js cues on the recording's catch-up: ` +
        `${JSON.stringify(recPlayed.cues.map((c) => [c.start, c.end]))} over ${recPlayed.times[0]}..${recPlayed.times.at(-1)} s`,
    );
    expect(recPlayed.cues.length, JSON.stringify(recPlayed)).toBeGreaterThan(0);
    // The recording's WebVTT files are copies of the channel's: its lines over boundaries are there too, and shown once.
    expect(recPlayed.cues.some((c) => overBoundaries.has(c.text))).toBe(true);
    expect(repeated(recPlayed.cues), JSON.stringify(recPlayed.cues)).toEqual([]);
    // dash.js shows the wvtt cues of the recording's static MPD (its first caption segment, before the gap, holds one).
    const recDash = await play(browser, page.url, rec.catchup.endpoints.find((e: any) => e.format === 'DASH').url, { player: 'dash', seconds: 3 });
    console.log(
      `[${kind}] dash.js cues on the recording's catch-up: ${JSON.stringify(recDash.cues)} over ${recDash.times[0]}..${recDash.times.at(-1)} s; ranges checked in ${Date.now() - rangesFrom} ms`,
    );
    expect(recDash.error).toBeUndefined();
    expect(recDash.textTracks).toEqual(['en-US']);
    expect(recDash.cues.length, JSON.stringify(recDash)).toBeGreaterThan(0);
    expect(repeated(recDash.cues), JSON.stringify(recDash.cues)).toEqual([]);

    const lags = [...seenCaptions].filter(([n]) => seenAudio.has(n) && cued.has(n)).map(([n, at]) => (at - seenAudio.get(n)!) / 1000);
    lags.sort((a, b) => a - b);
    console.log(
      `[${kind}] live captions (pocketsphinx en-US, 1 s segments): recognized "${[...cued.values()]
        .flatMap((v) => v.split('\n').filter((l) => l && !l.includes('-->') && !l.startsWith('WEBVTT') && !l.startsWith('X-')))
        .join(' / ')}"; ` +
        `words of the clip heard: ${[...words(heard)].join(', ')}; caption lag behind the audio segment (WebVTT segment listed after its media segment, ` +
        `${lags.length} segments with cues): median ${lags[Math.floor(lags.length / 2)]?.toFixed(2)} s, max ${lags.at(-1)?.toFixed(2)} s; hls.js cues: ${played.cues.length}, dash.js cues: ${JSON.stringify(dashPlayed.cues)}`,
    );

    expect((await t.call('POST', `/live/v1/channels/${id}/stop`)).status).toBe(200);
    await until(status, (s) => s === 'Off', { timeoutMs: 30_000 });
  }, 180_000);
});
