import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ffmpegPath } from '../src/media/ffmpeg.ts';
import { play } from './helpers/browser.ts';
import { describeOnDb, type TestPlatform, type TestTenant } from './helpers/platform.ts';
import { spokenClip } from './helpers/speech.ts';
import { until } from './helpers/until.ts';
import { startLivePlayback } from './helpers/live.ts';

/**
 * Live captions end to end: a spoken clip (espeak-ng) pushed over RTMP to a channel with `aiLiveCaptioningLanguageCode`,
 * recognized by pocketsphinx, served as WebVTT in the HLS output (a SUBTITLES rendition) and the DASH output (a text
 * AdaptationSet), and shown by hls.js in headless Chromium. The captions' lag behind the video is measured and printed.
 */
/** Words of the clip; the recognizer is imperfect, so a few of them are enough. */
const SPOKEN_WORDS = ['hello', 'world', 'this', 'is', 'test', 'live', 'captions'];

/** Pushes the clip in a loop, in real time, as an encoder would. */
function pushLoop(clip: string, url: string): { stop(): Promise<void> } {
  const child: ChildProcess = spawn(
    ffmpegPath(),
    ['-hide_banner', '-nostdin', '-loglevel', 'error', '-re', '-stream_loop', '-1', '-i', clip, '-c', 'copy', '-f', 'flv', url],
    {
      stdio: 'ignore',
    },
  );
  const exited = new Promise<void>((resolve) => child.on('close', () => resolve()));
  return {
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

const sequences = (playlist: string) => [...playlist.matchAll(/^(?:audio|captions)\/(\d+)\.(?:m4s|vtt)$/gm)].map((m) => Number(m[1]));

// The database work (the caption language, the channel) is the API tests' (live.channels.test.ts, on both databases).
describeOnDb('pglite', 'Live captions', (kind) => {
  let p: TestPlatform;
  let t: TestTenant;
  let browser: Browser;
  let page: { url: string; close(): Promise<void> };
  let encoder: { stop(): Promise<void> } | undefined;
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

  it('captions a spoken clip in WebVTT, in HLS and DASH, and hls.js shows the cues', async () => {
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
    expect(quiet).toMatch(/^WEBVTT\nX-TIMESTAMP-MAP=MPEGTS:\d+,LOCAL:\d\d:\d\d:\d\d\.\d{3}\n/);
    expect(quiet).not.toContain('-->');

    const conf = (await t.json('GET', `/live/v1/channels/${id}/configuration`)).body;
    expect(conf.aiLiveCaptioning).toEqual({ isEnabled: true, language: { name: 'English (United States)', code: 'en-US', code3Lettered: 'eng' } });
    encoder = pushLoop(await clip, conf.input.transportPrimaryIngestUrl.replace('localhost', '127.0.0.1'));

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
    expect(sample).toMatch(/^WEBVTT\nX-TIMESTAMP-MAP=MPEGTS:\d+,LOCAL:[\d:.]+\n\n\d\d:\d\d:\d\d\.\d{3} --> \d\d:\d\d:\d\d\.\d{3}\n/m);

    // HLS: a SUBTITLES rendition every variant names; DASH: a text AdaptationSet of the same WebVTT segments.
    const master = await text(hls);
    expect(master).toMatch(/#EXT-X-MEDIA:TYPE=SUBTITLES,GROUP-ID="subs",NAME="English \(United States\)",LANGUAGE="en-US",.*URI="captions\.m3u8"/);
    expect(master).toMatch(/#EXT-X-STREAM-INF:.*SUBTITLES="subs"/);
    // Players are told to play far enough behind the edge for captions to be out in time: 3 segments + 9 s.
    expect(await text(url('audio.m3u8'))).toContain('#EXT-X-SERVER-CONTROL:HOLD-BACK=12.0\n');
    const playlist = await text(url('captions.m3u8'));
    expect(playlist).toMatch(/#EXT-X-PROGRAM-DATE-TIME:.*\n#EXTINF:[\d.]+,\ncaptions\/\d+\.vtt/);
    const mpd = await text(dash);
    expect(mpd).toMatch(/<AdaptationSet contentType="text" mimeType="text\/vtt" lang="en-US">/);
    expect(mpd).toMatch(/media="captions\/\$Number\$\.vtt"/);

    // hls.js shows the subtitle track and its cues.
    const played = await play(browser, page.url, hls, { seconds: 6 });
    expect(played.error).toBeUndefined();
    expect(played.textTracks).toEqual(['en-US']);
    expect(played.cues.length, JSON.stringify(played)).toBeGreaterThan(0);
    // The cues are the platform's: texts of the WebVTT it serves (the recognized words checked above may be elsewhere).
    const listed = sequences(await text(url('captions.m3u8')));
    const served = new Set<string>();
    for (const n of listed) {
      for (const m of (await text(url(`captions/${n}.vtt`))).matchAll(/-->.*\n(.+)\n/g)) served.add(m[1]!);
    }
    for (const v of cued.values()) for (const m of v.matchAll(/-->.*\n(.+)\n/g)) served.add(m[1]!);
    expect(played.cues.some((c) => served.has(c.text))).toBe(true);
    // On the video's timeline: the cues are among the times the player played (not seconds since some other origin).
    const span = [Math.min(...played.times.filter((x) => x > 0)), Math.max(...played.times)];
    expect(played.cues.some((c) => c.end > span[0]! - 30 && c.start < span[1]! + 30)).toBe(true);

    // dash.js lists the text track and plays the video with it; it shows no cues of segmented text/vtt (docs/decisions/live.md).
    const dashPlayed = await play(browser, page.url, dash, { player: 'dash', seconds: 3 });
    expect(dashPlayed.error).toBeUndefined();
    expect(dashPlayed.textTracks).toEqual(['en-US']);
    expect(dashPlayed.times.at(-1)!).toBeGreaterThan(dashPlayed.times[0]!);

    const lags = [...seenCaptions].filter(([n]) => seenAudio.has(n) && cued.has(n)).map(([n, at]) => (at - seenAudio.get(n)!) / 1000);
    lags.sort((a, b) => a - b);
    console.log(
      `[${kind}] live captions (pocketsphinx en-US, 1 s segments): recognized "${[...cued.values()]
        .flatMap((v) => v.split('\n').filter((l) => l && !l.includes('-->') && !l.startsWith('WEBVTT') && !l.startsWith('X-')))
        .join(' / ')}"; ` +
        `words of the clip heard: ${[...words(heard)].join(', ')}; caption lag behind the audio segment (WebVTT segment listed after its media segment, ` +
        `${lags.length} segments with cues): median ${lags[Math.floor(lags.length / 2)]?.toFixed(2)} s, max ${lags.at(-1)?.toFixed(2)} s; hls.js cues: ${played.cues.length}, dash.js cues: ${dashPlayed.cues.length}`,
    );

    expect((await t.call('POST', `/live/v1/channels/${id}/stop`)).status).toBe(200);
    await until(status, (s) => s === 'Off', { timeoutMs: 30_000 });
  }, 180_000);
});
