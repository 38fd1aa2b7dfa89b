import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runFfprobe } from '../src/media/ffmpeg.ts';
import { startRtmpIngest, type LiveRendition, type RtmpIngest } from '../src/media/live/index.ts';
import { localPipeline, pushEncoder, quietLog, readPlaylist, segmentsOf, waitFor } from './helpers/live.ts';
import { tempDir } from './helpers/media.ts';

const KEY = 'k3y_frame-rate';
const CHANNEL = '5d0c1f7e-8a2b-4c3d-9e4f-0a1b2c3d4e5f';

/**
 * A quality without `frameRate` keeps the encoder's own rate up to 30 (issue 25 item 4): 25 fps stays 25 instead of 30
 * with every fifth picture repeated, 60 becomes 30; a quality with a rate is encoded at exactly that rate. Both ways
 * of writing a run are checked: ffmpeg's HLS muxer (normal latency) and the chunked outputs of low latency.
 */
describe('live media: the frame rate of a quality follows the encoder unless one is set', () => {
  const tmp = tempDir('mediaplane-live-rate-');
  let ingest: RtmpIngest;
  const LADDER: LiveRendition[] = [
    { name: '180p', width: 320, height: 180, videoBitrate: 300_000, frameRate: 30, followsSource: true },
    { name: '90p', width: 160, height: 90, videoBitrate: 120_000, frameRate: 30 },
  ];

  beforeAll(async () => {
    ingest = await startRtmpIngest({
      host: '127.0.0.1',
      port: 0,
      authorize: (key) => (key === KEY ? { channelId: CHANNEL } : { refused: 'unknown stream key' }),
      onPublish: () => {},
      onUnpublish: () => {},
      log: quietLog(),
    });
  });
  afterAll(async () => {
    await ingest?.close();
    tmp.cleanup();
  });

  /** Pictures per second of a rung's last complete segment, counted by ffprobe over its init segment and media. */
  async function segmentRate(outDir: string, rung: string): Promise<number> {
    const playlist = readPlaylist(join(outDir, `${rung}.m3u8`))!;
    const segment = playlist.segments.at(-2)!;
    const file = join(outDir, `${rung}-probe.mp4`);
    writeFileSync(file, Buffer.concat([readFileSync(join(outDir, segment.map)), readFileSync(join(outDir, segment.uri))]));
    const [stream] = JSON.parse(
      await runFfprobe(['-count_frames', '-select_streams', 'v:0', '-show_entries', 'stream=nb_read_frames', '-of', 'json', file]),
    ).streams;
    return Number(stream.nb_read_frames) / segment.duration;
  }

  async function encodedRates(name: string, pushed: number, partSeconds?: number) {
    const { pipeline, outDir, events } = localPipeline(join(tmp.dir, name), { channelId: CHANNEL, renditions: LADDER, segmentSeconds: 2, partSeconds });
    const encoder = pushEncoder(`rtmp://127.0.0.1:${ingest.port}/live/${KEY}`, { rate: pushed });
    try {
      await pipeline.start();
      await waitFor('the publish', () => ingest.inputUrl(CHANNEL));
      pipeline.setInput({ url: ingest.inputUrl(CHANNEL)!, bytesReceived: () => ingest.bytesReceived(CHANNEL) ?? 0 });
      await waitFor('the input', () => events.some((e) => e.type === 'input.connected'));
      // Two segments of the encoder's run: the one before the last is complete.
      await waitFor('two segments from the encoder', () => segmentsOf(events, '180p').filter((s) => s.live).length >= 3);
      return { followed: await segmentRate(outDir, '180p'), fixed: await segmentRate(outDir, '90p') };
    } finally {
      await encoder.stop();
      await pipeline.stop();
    }
  }

  it('normal latency: a 25 fps encoder gives 25 fps where no rate is set, 30 where 30 is', async () => {
    const rates = await encodedRates('hls-25', 25);
    expect(rates.followed).toBeCloseTo(25, 0);
    expect(rates.fixed).toBeCloseTo(30, 0);
  }, 90_000);

  it('normal latency: a 60 fps encoder gives 30 fps, the most a quality without a rate is encoded at', async () => {
    const rates = await encodedRates('hls-60', 60);
    expect(rates.followed).toBeCloseTo(30, 0);
    expect(rates.fixed).toBeCloseTo(30, 0);
  }, 90_000);

  it('low latency: a 25 fps encoder gives 25 fps in its parts and segments where no rate is set', async () => {
    const rates = await encodedRates('ll-25', 25, 0.5);
    expect(rates.followed).toBeCloseTo(25, 0);
    expect(rates.fixed).toBeCloseTo(30, 0);
  }, 90_000);
});
