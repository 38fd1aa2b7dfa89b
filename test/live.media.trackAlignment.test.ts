import { cpSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runFfmpeg } from '../src/media/ffmpeg.ts';
import { runArgs } from '../src/media/live/args.ts';
import { Packager } from '../src/media/live/packaging/packager.ts';
import { TINY_LADDER } from './helpers/live.ts';
import { tempDir } from './helpers/media.ts';

/** The first `count` segments of one of ffmpeg's run playlists, as it lists them while the run goes on. */
function firstEntries(playlist: string, count: number): string {
  const lines = playlist.split('\n');
  const out: string[] = [];
  let n = 0;
  for (const line of lines) {
    if (line.startsWith('#EXT-X-ENDLIST')) continue;
    if (line.startsWith('#EXTINF:') && n === count) break;
    out.push(line);
    if (line && !line.startsWith('#')) n += 1;
  }
  return `${out.join('\n')}\n`;
}

/**
 * A run's n-th segment gets the same number in every track: ffmpeg lists the audio ahead of the video (its encoder
 * runs ahead by the video encoder's delay) and may leave one audio segment more when it exits, and hls.js pairs the
 * audio playlist with the video's by number. Driven on a real run's output, with the video listed behind the audio.
 */
/** A packager of one 90p video track and the audio, publishing into `published` (and its playlists into `playlists`). */
function packagerInto(published: string[], playlists = new Map<string, string>()): Packager {
  return new Packager({
    tracks: [
      { name: '90p', kind: 'video', width: 160, height: 90, frameRate: 25, bandwidth: 120_000 },
      { name: 'audio', kind: 'audio', bandwidth: 128_000 },
    ],
    segmentSeconds: 1,
    windowSegments: 10,
    retentionSeconds: 60,
    availabilityStart: Date.now(),
    publish: async (key, body) => {
      published.push(key);
      if (key.endsWith('.m3u8')) playlists.set(key, body.toString());
    },
    remove: async () => {},
    onSegment: () => {},
    log: pino({ level: 'silent' }),
  });
}

/**
 * A run's n-th segment gets the same number in every track: ffmpeg lists the audio ahead of the video (its encoder
 * runs ahead by the video encoder's delay) and may leave one audio segment more when it exits, and hls.js pairs the
 * audio playlist with the video's by number. Driven on a real run's output, with the video listed behind the audio.
 */
describe('live packager: the tracks of a run keep the same segment numbers', () => {
  const tmp = tempDir('mediaplane-live-align-');
  const made = join(tmp.dir, 'made');
  let video = '';
  let audio = '';
  let videoCount = 0;

  beforeAll(async () => {
    // One real run of the colour slate: four segments or so of each track.
    const abort = new AbortController();
    setTimeout(() => abort.abort(), 4_500);
    const args = runArgs({
      source: { kind: 'slate', loss: { type: 'COLOR', color: '#1060c0' } },
      renditions: [TINY_LADDER[1]!],
      audioOnly: false,
      segmentSeconds: 1,
      offset: 0,
      dir: made,
    });
    await runFfmpeg(args, { signal: abort.signal }).catch(() => {});
    video = readFileSync(join(made, '90p', 'index.m3u8'), 'utf8');
    audio = readFileSync(join(made, 'audio', 'index.m3u8'), 'utf8');
    videoCount = video.split('\n').filter((l) => l.startsWith('#EXTINF:')).length;
  }, 60_000);
  afterAll(() => tmp.cleanup());

  const segmentsOf = (published: string[], track: string) => published.filter((k) => new RegExp(`^${track}/\\d+\\.m4s$`).test(k));

  it('publishes a segment number in every track at once, and never the audio segment the video does not have', async () => {
    expect(videoCount).toBeGreaterThanOrEqual(3);
    const run = join(tmp.dir, 'run');
    cpSync(made, run, { recursive: true });
    const published: string[] = [];
    const packager = packagerInto(published);
    packager.beginRun(1, run, 0);
    const segments = (track: string) => segmentsOf(published, track);

    // The audio listed to its end, the video two segments behind: the audio waits for the video.
    writeFileSync(join(run, '90p', 'index.m3u8'), firstEntries(video, videoCount - 2));
    writeFileSync(join(run, 'audio', 'index.m3u8'), audio);
    await packager.poll();
    expect(segments('90p')).toHaveLength(videoCount - 2);
    expect(segments('audio')).toEqual(segments('90p').map((k) => k.replace('90p/', 'audio/')));

    // The video catches up; an audio segment beyond the video's last one (a tail at the run's end) is never published.
    writeFileSync(join(run, '90p', 'index.m3u8'), video);
    writeFileSync(join(run, 'audio', 'index.m3u8'), `${audio.replace('#EXT-X-ENDLIST\n', '')}#EXTINF:0.021333,\n${audio.match(/^[^#\n].*$/gm)!.at(-1)}\n`);
    await packager.poll();
    expect(segments('90p')).toHaveLength(videoCount);
    expect(segments('audio')).toEqual(segments('90p').map((k) => k.replace('90p/', 'audio/')));
  }, 60_000);

  it('skips a segment one track cannot read in every track, so that the numbers stay the same', async () => {
    const run = join(tmp.dir, 'unreadable');
    cpSync(made, run, { recursive: true });
    // The audio's second segment is gone: it can never be read.
    rmSync(join(run, 'audio', audio.match(/^[^#\n].*$/gm)![1]!));
    const published: string[] = [];
    const playlists = new Map<string, string>();
    const packager = packagerInto(published, playlists);
    packager.beginRun(1, run, 0);
    await packager.poll();
    // The first segment of each track; the video's second waits for the audio's.
    expect(segmentsOf(published, '90p')).toEqual(['90p/0.m4s']);
    expect(segmentsOf(published, 'audio')).toEqual(['audio/0.m4s']);
    for (let i = 0; i < 25; i++) await packager.poll();
    // Given up on after its tries, the second segment is skipped in both tracks and the rest numbered alike.
    const videoKeys = segmentsOf(published, '90p');
    expect(videoKeys).toHaveLength(videoCount - 1);
    expect(segmentsOf(published, 'audio')).toEqual(videoKeys.map((k) => k.replace('90p/', 'audio/')));
    // And the playlists say so: the same segment names after the same media sequence.
    const listed = (track: string) =>
      playlists
        .get(`${track}.m3u8`)!
        .split('\n')
        .filter((l) => l.startsWith('#EXT-X-MEDIA-SEQUENCE') || l.endsWith('.m4s'));
    expect(listed('90p')).toHaveLength(videoCount);
    expect(listed('audio')).toEqual(listed('90p').map((l) => l.replace('90p/', 'audio/')));
  }, 60_000);
});
