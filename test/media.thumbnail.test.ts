import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runFfmpeg } from '../src/media/ffmpeg.ts';
import { locatePicture, renderStill } from '../src/media/thumbnail.ts';
import { makeClip, tempDir } from './helpers/media.ts';

/** Raw RGB pixels of a picture file (or of a video's frame at `at`), at 160x90. */
async function rgb(path: string, out: string, at?: number): Promise<Buffer> {
  await runFfmpeg([
    '-y',
    ...(at === undefined ? [] : ['-ss', String(at)]),
    '-i',
    path,
    '-frames:v',
    '1',
    '-vf',
    'scale=160:90',
    '-f',
    'rawvideo',
    '-pix_fmt',
    'rgb24',
    out,
  ]);
  return readFileSync(out);
}
const difference = (a: Buffer, b: Buffer) => a.reduce((sum, v, i) => sum + Math.abs(v - b[i]), 0) / a.length;

/**
 * The video a thumbnail is made of when it is an HLS playlist (docs/decisions/streaming.md, "Thumbnails on the fly"):
 * a recording's rendition (a media playlist whose segments are relative to it, MPEG-TS or fMP4 after an
 * `#EXT-X-MAP`), a VOD output's master (its first variant). Only the segments holding the time are read.
 */
describe('thumbnails of HLS videos', () => {
  const { dir, cleanup } = tempDir('mediaplane-thumb-hls-');
  let clip = '';

  beforeAll(async () => {
    clip = await makeClip(dir, 'clip', { seconds: 6, width: 320, height: 180, fps: 25, audio: [] });
    for (const [name, type] of [
      ['ts', 'mpegts'],
      ['fmp4', 'fmp4'],
    ] as const) {
      mkdirSync(join(dir, name));
      await runFfmpeg([
        '-y',
        '-i',
        clip,
        '-c',
        'copy',
        '-f',
        'hls',
        '-hls_time',
        '1',
        '-hls_playlist_type',
        'vod',
        '-hls_segment_type',
        type,
        join(dir, name, 'index.m3u8'),
      ]);
    }
    writeFileSync(join(dir, 'master.m3u8'), '#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=100000,RESOLUTION=320x180\nfmp4/index.m3u8\n');
  }, 60_000);
  afterAll(() => cleanup());

  for (const [what, playlist] of [
    ['an MPEG-TS media playlist', 'ts/index.m3u8'],
    ['an fMP4 media playlist (its init segment before the segment)', 'fmp4/index.m3u8'],
    ['a master playlist (its first variant)', 'master.m3u8'],
  ] as const) {
    it(`answers the frame at the time asked of ${what}`, async () => {
      const work = join(dir, `work-${playlist.replace(/\W/g, '-')}`);
      mkdirSync(work, { recursive: true });
      const located = await locatePicture({ location: join(dir, playlist) }, 3.2, undefined, work);
      // One segment of the six: the one that holds 3.2 s.
      expect(readFileSync(located.input, 'utf8').match(/#EXTINF/g)).toHaveLength(1);
      const still = await renderStill(located, { width: 320, fit: 'preserve' }, 'jpg', join(work, 'still.jpg'), {});
      const got = await rgb(join(work, 'still.jpg'), join(work, 'still.rgb'));
      expect(still.length).toBeGreaterThan(1000);
      expect(difference(got, await rgb(clip, join(work, 'at.rgb'), 3.2))).toBeLessThan(8);
      expect(difference(got, await rgb(clip, join(work, 'other.rgb'), 1.2))).toBeGreaterThan(15);
    });
  }
});
