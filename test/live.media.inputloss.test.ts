import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runFfmpeg, runFfprobe } from '../src/media/ffmpeg.ts';
import { startRtmpIngest, type LivePipeline, type RtmpIngest } from '../src/media/live/index.ts';
import { framePixels, localPipeline, pushEncoder, quietLog, readPlaylist, segmentsOf, waitFor } from './helpers/live.ts';
import { makeClip, tempDir } from './helpers/media.ts';

const KEY = 'loss-key';
const CHANNEL = 'c-loss';
const COLOR = { r: 0x10, g: 0x60, b: 0xc0 };

type Pixels = Awaited<ReturnType<typeof framePixels>>;
const isColour = (p: Pixels, c: { r: number; g: number; b: number }) =>
  Math.abs(p.r - c.r) < 14 && Math.abs(p.g - c.g) < 14 && Math.abs(p.b - c.b) < 14 && p.spread < 40;
/** testsrc2 is a busy pattern: far from one uniform colour. */
const isPattern = (p: Pixels) => p.spread > 150;

/** The newest segment of a rung, with its index in the playlist, once there is one newer than `after`. */
async function newest(outDir: string, rung: string, afterUri?: string) {
  const playlist = readPlaylist(join(outDir, `${rung}.m3u8`));
  const last = playlist?.segments.at(-1);
  if (!last || last.uri === afterUri) return undefined;
  return { last, pixels: await framePixels(outDir, last.map, last.uri) };
}

/** Waits until the newest segment shows what `matches` wants (each new segment is looked at once). */
async function waitForPicture(what: string, outDir: string, matches: (p: Pixels) => boolean) {
  let seen: string | undefined;
  return waitFor(what, async () => {
    const n = await newest(outDir, '180p', seen);
    if (!n) return undefined;
    seen = n.last.uri;
    return matches(n.pixels) ? n : undefined;
  });
}

describe('live media: input loss and supervision', () => {
  const tmp = tempDir('mediaplane-live-loss-');
  let ingest: RtmpIngest;
  let pipeline: LivePipeline | undefined;

  beforeAll(async () => {
    ingest = await startRtmpIngest({
      host: '127.0.0.1',
      port: 0,
      authorize: (key) => (key === KEY ? { channelId: CHANNEL } : { refused: 'unknown stream key' }),
      onPublish: (id) => pipeline?.setInput({ url: ingest.inputUrl(id)!, bytesReceived: () => ingest.bytesReceived(id) ?? 0 }),
      onUnpublish: () => pipeline?.setInput(null),
      log: quietLog(),
    });
  });
  afterAll(async () => {
    await pipeline?.stop();
    await ingest?.close();
    tmp.cleanup();
  });

  it('COLOR: the publisher stops → the colour within a few segments → it returns → live frames, on one timeline', async () => {
    const p = localPipeline(join(tmp.dir, 'color'), { channelId: CHANNEL, windowSegments: 60 });
    pipeline = p.pipeline;
    await pipeline.start();
    await waitForPicture('the colour before any input', p.outDir, (px) => isColour(px, COLOR));

    let encoder = pushEncoder(`rtmp://127.0.0.1:${ingest.port}/live/${KEY}`);
    await waitForPicture('live frames', p.outDir, isPattern);
    await encoder.stop();
    await waitForPicture('the colour after the publisher left', p.outDir, (px) => isColour(px, COLOR));
    expect(p.events.filter((e) => e.type === 'input.lost')).toHaveLength(1);

    encoder = pushEncoder(`rtmp://127.0.0.1:${ingest.port}/live/${KEY}`);
    try {
      await waitForPicture('live frames again', p.outDir, isPattern);
    } finally {
      await encoder.stop();
    }
    expect(p.events.filter((e) => e.type === 'input.connected')).toHaveLength(2);

    for (const rung of ['180p', '90p', 'audio']) {
      const playlist = readPlaylist(join(p.outDir, `${rung}.m3u8`))!;
      // Runs: colour, live, colour, live (at least), all with the same init segments, each starting where the last
      // ended: one stream, with no discontinuity for players to cross (docs/decisions/live.md, "The packager").
      const runs = segmentsOf(p.events, rung).map((s) => s.run);
      expect(runs.filter((r, i) => i > 0 && r !== runs[i - 1]).length).toBeGreaterThanOrEqual(3);
      expect(playlist.discontinuitySequence).toBe(0);
      expect(playlist.segments.filter((s) => s.discontinuity)).toEqual([]);
      expect(new Set(playlist.segments.map((s) => s.map)).size).toBe(1);
      expect(playlist.segments.map((s) => s.uri)).toEqual(playlist.segments.map((_, i) => `${rung}/${playlist.sequence + i}.m4s`));
    }
    // Across every switch, a segment number is the same run and about the same time in every track (hls.js pairs the
    // audio playlist with the video's by number): each run ends with as many segments in each.
    const video = new Map(segmentsOf(p.events, '180p').map((s) => [s.sequence, s]));
    const audio = segmentsOf(p.events, 'audio');
    expect(audio.length).toBeGreaterThan(0);
    for (const a of audio) {
      const v = video.get(a.sequence);
      if (!v) continue;
      expect({ sequence: a.sequence, run: a.run }).toEqual({ sequence: a.sequence, run: v.run });
      expect(Math.abs(a.startMs - v.startMs)).toBeLessThan(250);
    }
    // Decode times never go back: every run continues the timeline where the previous one ended.
    const mpd = readFileSync(join(p.outDir, 'manifest.mpd'), 'utf8');
    for (const rep of mpd.matchAll(/<Representation id="(\w+)"[\s\S]*?<\/Representation>/g)) {
      const s = [...rep[0].matchAll(/<S t="(\d+)" d="(\d+)"\/>/g)].map((m) => ({ t: Number(m[1]), d: Number(m[2]) }));
      for (let i = 1; i < s.length; i++) expect(s[i]!.t).toBeGreaterThanOrEqual(s[i - 1]!.t + s[i - 1]!.d - 2048);
    }
    const stats = pipeline.stats();
    expect(stats.segmentsWritten).toBeGreaterThan(0);
    expect(stats.inputConnectedSeconds).toBeGreaterThan(0);
    await pipeline.stop();
    pipeline = undefined;
  });

  it('an encoder that sends video only goes live, with a silent audio track (no restarts, no slate)', async () => {
    const p = localPipeline(join(tmp.dir, 'video-only'), { channelId: CHANNEL });
    pipeline = p.pipeline;
    await pipeline.start();
    const encoder = pushEncoder(`rtmp://127.0.0.1:${ingest.port}/live/${KEY}`, { videoOnly: true });
    try {
      await waitForPicture('live frames from a video-only input', p.outDir, isPattern);
      // The audio rendition goes on through the live run: its newest segment holds one AAC stream.
      const audio = readPlaylist(join(p.outDir, 'audio.m3u8'))!.segments.at(-1)!;
      const probed = await runFfprobe([
        '-v',
        'error',
        '-show_entries',
        'stream=codec_name',
        '-of',
        'csv=p=0',
        `concat:${join(p.outDir, audio.map!)}|${join(p.outDir, audio.uri)}`,
      ]);
      expect(probed.trim()).toBe('aac');
    } finally {
      await encoder.stop();
    }
    expect(p.events.filter((e) => e.type === 'encoder.failed')).toEqual([]);
    expect(p.events.filter((e) => e.type === 'input.connected')).toHaveLength(1);
    await pipeline.stop();
    pipeline = undefined;
  });

  it('a stalled encoder (connected, sending nothing) is an input loss too', async () => {
    const p = localPipeline(join(tmp.dir, 'stall'), { channelId: CHANNEL });
    pipeline = p.pipeline;
    await pipeline.start();
    const encoder = pushEncoder(`rtmp://127.0.0.1:${ingest.port}/live/${KEY}`);
    try {
      await waitForPicture('live frames', p.outDir, isPattern);
      process.kill(encoder.child.pid!, 'SIGSTOP');
      await waitForPicture('the colour while the encoder hangs', p.outDir, (px) => isColour(px, COLOR));
      expect(p.events.some((e) => e.type === 'input.lost')).toBe(true);
    } finally {
      encoder.child.kill('SIGKILL');
      await encoder.exited;
    }
    await pipeline.stop();
    pipeline = undefined;
  });

  it('SLATE: a PNG slate until a looped file input, and again when the input is taken away', async () => {
    const dir = join(tmp.dir, 'slate');
    const p = localPipeline(dir, { inputLoss: { type: 'SLATE', imagePath: join(tmp.dir, 'slate.png') } });
    await runFfmpeg(['-f', 'lavfi', '-i', 'color=c=0xc03030:s=64x36', '-frames:v', '1', '-y', join(tmp.dir, 'slate.png')]);
    const clip = await makeClip(tmp.dir, 'source', { seconds: 2, fps: 25, audio: [{ language: 'eng', frequency: 440 }] });
    pipeline = p.pipeline;
    await pipeline.start();
    await waitForPicture('the slate', p.outDir, (px) => isColour(px, { r: 0xc0, g: 0x30, b: 0x30 }));
    pipeline.setInput({ url: clip, loop: true });
    await waitForPicture('the looped file', p.outDir, isPattern);
    pipeline.setInput(null);
    await waitForPicture('the slate again', p.outDir, (px) => isColour(px, { r: 0xc0, g: 0x30, b: 0x30 }));
    await pipeline.stop();
    pipeline = undefined;
  });

  it('audio only: the slate is silence in an audio playlist that the master lists, and the MPD has audio alone', async () => {
    const p = localPipeline(join(tmp.dir, 'audio'), { audioOnly: true, renditions: [] });
    pipeline = p.pipeline;
    await pipeline.start();
    await waitFor('audio segments', () => (readPlaylist(join(p.outDir, 'audio.m3u8'))?.segments.length ?? 0) >= 2);
    await waitFor('the MPD', () => existsSync(join(p.outDir, 'manifest.mpd')));
    expect(readFileSync(join(p.outDir, 'master.m3u8'), 'utf8')).toMatch(/#EXT-X-STREAM-INF:BANDWIDTH=\d+,CODECS="mp4a\.40\.2"\naudio\.m3u8/);
    const mpd = readFileSync(join(p.outDir, 'manifest.mpd'), 'utf8');
    expect(mpd).toContain('contentType="audio"');
    expect(mpd).not.toContain('contentType="video"');
    await pipeline.stop();
    pipeline = undefined;
  });

  it('never upscales: a rung taller than the input keeps its URL at the input height, in a new DASH Period', async () => {
    const small = await makeClip(tmp.dir, 'small', { width: 160, height: 90, seconds: 2, fps: 25, audio: [{ language: 'eng', frequency: 440 }] });
    const p = localPipeline(join(tmp.dir, 'upscale'));
    pipeline = p.pipeline;
    await pipeline.start();
    await waitFor('the colour', () => (readPlaylist(join(p.outDir, '180p.m3u8'))?.segments.length ?? 0) >= 1);
    pipeline.setInput({ url: small, loop: true });
    const last = await waitFor('the small input in the 180p rung', async () => {
      const seg = readPlaylist(join(p.outDir, '180p.m3u8'))!.segments.at(-1)!;
      if (!seg.discontinuity && readPlaylist(join(p.outDir, '180p.m3u8'))!.segments.filter((s) => s.discontinuity).length === 0) return undefined;
      const joined = join(p.outDir, 'probe.mp4');
      writeFileSync(joined, Buffer.concat([readFileSync(join(p.outDir, seg.map)), readFileSync(join(p.outDir, seg.uri))]));
      const { streams } = JSON.parse(await runFfprobe(['-show_streams', '-of', 'json', joined]));
      return streams[0].height === 90 ? seg : undefined;
    });
    expect(last.uri).toMatch(/^180p\/\d+\.m4s$/);
    const mpd = readFileSync(join(p.outDir, 'manifest.mpd'), 'utf8');
    expect(mpd.match(/<Period /g)!.length).toBe(2);
    await pipeline.stop();
    pipeline = undefined;
  });

  it('keeps a bounded retention: older segments are removed, never those in the window', async () => {
    const p = localPipeline(join(tmp.dir, 'retention'), { retentionSeconds: 2, windowSegments: 3 });
    pipeline = p.pipeline;
    await pipeline.start();
    await waitFor('expired segments', () => p.removed.some((k) => k.startsWith('180p/')) && p.removed.some((k) => k.startsWith('audio/')));
    const listed = readPlaylist(join(p.outDir, '180p.m3u8'))!.segments.map((s) => s.uri);
    expect(listed.some((u) => p.removed.includes(u))).toBe(false);
    for (const k of p.removed) expect(existsSync(join(p.outDir, k))).toBe(false);
    await pipeline.stop();
    pipeline = undefined;
  });

  it('a killed ffmpeg run is restarted and reported', async () => {
    const root = join(tmp.dir, 'kill');
    const p = localPipeline(root);
    pipeline = p.pipeline;
    await pipeline.start();
    await waitFor('segments', () => (readPlaylist(join(p.outDir, '180p.m3u8'))?.segments.length ?? 0) >= 2);
    const pid = await waitFor(
      'the ffmpeg run',
      () =>
        execFileSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' })
          .split('\n')
          .find((l) => l.includes(join(root, 'work')) && l.includes('ffmpeg'))
          ?.trim()
          .split(/\s+/)[0],
    );
    const before = readPlaylist(join(p.outDir, '180p.m3u8'))!.segments.length;
    process.kill(Number(pid), 'SIGKILL');
    await waitFor('the failure report', () => p.events.find((e) => e.type === 'encoder.failed'));
    await waitFor('the recovery report', () => p.events.find((e) => e.type === 'encoder.recovered'));
    await waitFor('segments after the restart', () => readPlaylist(join(p.outDir, '180p.m3u8'))!.segments.length > before + 1);
    // The restarted run continues the stream: a new run, no discontinuity.
    const runs = new Set(segmentsOf(p.events, '180p').map((s) => s.run));
    expect(runs.size).toBeGreaterThanOrEqual(2);
    expect(readPlaylist(join(p.outDir, '180p.m3u8'))!.segments.filter((s) => s.discontinuity)).toEqual([]);
    await pipeline.stop();
    pipeline = undefined;
  });
});
