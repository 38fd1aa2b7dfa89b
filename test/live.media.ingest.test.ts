import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runFfprobe } from '../src/media/ffmpeg.ts';
import { startRtmpIngest, type RtmpIngest } from '../src/media/live/index.ts';
import { localPipeline, pushEncoder, quietLog, readPlaylist, waitFor } from './helpers/live.ts';
import { tempDir } from './helpers/media.ts';

const KEY = 'k3y_right-one';
const CHANNEL = '0b4f3c9e-2f0e-4a57-9d43-1c2b3a4d5e6f';

describe('live media: RTMP ingest into the pipeline', () => {
  const tmp = tempDir('mediaplane-live-');
  let ingest: RtmpIngest;
  const published: string[] = [];
  const unpublished: string[] = [];
  const refusedAddresses = new Set<string>();

  beforeAll(async () => {
    ingest = await startRtmpIngest({
      host: '127.0.0.1',
      port: 0,
      authorize: (key, address) => {
        if (refusedAddresses.has(address)) return { refused: 'address not allowed' };
        return key === KEY ? { channelId: CHANNEL } : { refused: 'unknown stream key' };
      },
      onPublish: (id) => published.push(id),
      onUnpublish: (id) => unpublished.push(id),
      log: quietLog(),
    });
  });
  afterAll(async () => {
    await ingest?.close();
    tmp.cleanup();
  });

  it('a wrong key is refused at connect, and so is an address the authorizer refuses', async () => {
    const wrong = pushEncoder(`rtmp://127.0.0.1:${ingest.port}/live/not-the-key`, { seconds: 5 });
    expect(await wrong.exited).not.toBe(0);
    refusedAddresses.add('127.0.0.1');
    try {
      const fromRefusedAddress = pushEncoder(`rtmp://127.0.0.1:${ingest.port}/live/${KEY}`, { seconds: 5 });
      expect(await fromRefusedAddress.exited).not.toBe(0);
    } finally {
      refusedAddresses.delete('127.0.0.1');
    }
    expect(published).toEqual([]);
    expect(ingest.inputUrl(CHANNEL)).toBeUndefined();
  });

  it('nobody may play a published stream back but the local pipeline, and a kicked publisher is disconnected', async () => {
    const encoder = pushEncoder(`rtmp://127.0.0.1:${ingest.port}/live/${KEY}`);
    try {
      await waitFor('the publish', () => published.includes(CHANNEL));
      const url = ingest.inputUrl(CHANNEL)!;
      // The channel's stream without the process's play token is refused.
      const noToken = url.replace(/\?.*$/, '');
      await expect(runFfprobe(['-rw_timeout', '5000000', '-show_streams', '-of', 'json', noToken])).rejects.toThrow();
      const streams = JSON.parse(await runFfprobe(['-rw_timeout', '5000000', '-show_streams', '-of', 'json', url])).streams;
      expect(streams.map((s: { codec_type: string }) => s.codec_type).sort()).toEqual(['audio', 'video']);
      expect(ingest.bytesReceived(CHANNEL)).toBeGreaterThan(0);
      // The encoder sends 25 fps: the ingest counts the video frames (not the codec headers) it received.
      expect(ingest.framesReceived(CHANNEL)).toBeGreaterThan(0);
      // Kicking the publisher (key rotated, channel stopped) disconnects the encoder.
      ingest.kick(CHANNEL);
      expect(await encoder.exited).not.toBe(0);
    } finally {
      await encoder.stop();
    }
    await waitFor('the unpublish', () => unpublished.includes(CHANNEL));
    expect(ingest.inputUrl(CHANNEL)).toBeUndefined();
  });

  it('ffmpeg pushes RTMP with the right key: the pipeline publishes HLS and DASH over the same segments', async () => {
    const { pipeline, outDir, events } = localPipeline(join(tmp.dir, 'p1'), { channelId: CHANNEL });
    const encoder = pushEncoder(`rtmp://127.0.0.1:${ingest.port}/live/${KEY}`);
    try {
      await pipeline.start();
      await waitFor('the publish', () => ingest.inputUrl(CHANNEL));
      pipeline.setInput({ url: ingest.inputUrl(CHANNEL)!, bytesReceived: () => ingest.bytesReceived(CHANNEL) ?? 0 });
      await waitFor(
        'live segments',
        () => events.some((e) => e.type === 'input.connected') && (readPlaylist(join(outDir, '180p.m3u8'))?.segments.length ?? 0) >= 6,
      );
      await waitFor('input stats', () => pipeline.stats().inputBitrateKbps > 0 && pipeline.stats().inputFrameRate > 0);

      const master = readFileSync(join(outDir, 'master.m3u8'), 'utf8');
      expect(master).toContain('RESOLUTION=320x180');
      expect(master).toContain('RESOLUTION=160x90');
      expect(master).toMatch(/TYPE=AUDIO,GROUP-ID="audio".*URI="audio.m3u8"/);
      expect(master).toMatch(/CODECS="avc1\.[0-9a-f]{6},mp4a\.40\.2"/);

      // ffprobe reads the live HLS as a player would: every rung and the audio.
      const probe = JSON.parse(await runFfprobe(['-show_streams', '-of', 'json', join(outDir, 'master.m3u8')])).streams as {
        codec_type: string;
        height?: number;
      }[];
      expect(
        probe
          .filter((s) => s.codec_type === 'video')
          .map((s) => s.height)
          .sort(),
      ).toEqual([180, 90].sort());
      expect(probe.some((s) => s.codec_type === 'audio')).toBe(true);

      for (const rung of ['180p', '90p', 'audio']) {
        const playlist = readPlaylist(join(outDir, `${rung}.m3u8`))!;
        expect(playlist.segments.length).toBeGreaterThan(0);
        expect(playlist.segments.length).toBeLessThanOrEqual(6);
        for (const s of playlist.segments) expect(readFileSync(join(outDir, s.uri)).length).toBeGreaterThan(0);
      }

      // The MPD lists the same segments with their real decode times: each segment starts where the last ended.
      const mpd = readFileSync(join(outDir, 'manifest.mpd'), 'utf8');
      expect(mpd).toContain('type="dynamic"');
      const rep = [...mpd.matchAll(/<Representation id="180p"[\s\S]*?<\/Representation>/g)].at(-1)![0];
      const timescale = Number(/timescale="(\d+)"/.exec(rep)![1]);
      const startNumber = Number(/startNumber="(\d+)"/.exec(rep)![1]);
      const times = [...rep.matchAll(/<S t="(\d+)" d="(\d+)"\/>/g)].map((m) => ({ t: Number(m[1]), d: Number(m[2]) }));
      expect(times.length).toBeGreaterThan(1);
      const hls = readPlaylist(join(outDir, '180p.m3u8'))!;
      const lastStart = hls.segments.map((s) => s.discontinuity).lastIndexOf(true);
      const lastRun = hls.segments.slice(Math.max(0, lastStart));
      // Within one run (one encoder process) the HLS durations add up to the DASH timeline's span.
      const runStart = times.length - lastRun.length;
      const span = (times.at(-1)!.t + times.at(-1)!.d - times[runStart]!.t) / timescale;
      expect(lastRun.reduce((sum, s) => sum + s.duration, 0)).toBeCloseTo(span, 1);
      for (let i = runStart + 1; i < times.length; i++) expect(times[i]!.t).toBe(times[i - 1]!.t + times[i - 1]!.d);
      // $Number$ addresses the same files HLS lists.
      expect(`180p/${startNumber + times.length - 1}.m4s`).toBe(hls.segments.at(-1)!.uri);
      for (const s of hls.segments.slice(-3)) expect(s.duration).toBeCloseTo(1, 1);
      expect(events.some((e) => e.type === 'segment' && e.rendition === '90p')).toBe(true);
    } finally {
      await encoder.stop();
      await pipeline.stop();
    }
  });
});
