import { describe, expect, it } from 'vitest';
import { mediaPlaylist, nextDiscontinuity, type PublishedSegment, type Track } from '../../src/media/live/packaging/manifests.ts';

const WINDOW = 4;

/** Publishes one segment from `run` into `track` the way the packager does. */
function publish(track: Track & { discontinuities: number }, run: number, continues = false): void {
  const sequence = track.segments.length;
  // The run's init segment; a run that continues the stream keeps the one before (the packager only does so when its
  // bytes are the same).
  const previous = track.segments.at(-1);
  const same = previous && (continues || previous.run === run);
  const segment: PublishedSegment = {
    sequence,
    duration: 1,
    decodeTime: sequence * 1000,
    run,
    initKey: same ? previous.initKey : `v/init-${run}.mp4`,
    discontinuity: nextDiscontinuity(track, run, continues),
    period: same ? previous.period : run,
  };
  track.discontinuities = segment.discontinuity;
  track.segments.push(segment);
}

/** What hls.js checks: the sequence of a later window is the earlier one's plus the tags that slid out before it. */
function checkSlides(playlists: string[]): void {
  for (let i = 1; i < playlists.length; i++) {
    const earlier = playlists[i - 1]!.split('\n');
    const first = Number(/#EXT-X-MEDIA-SEQUENCE:(\d+)/.exec(playlists[i]!)![1]);
    let sequence = Number(/#EXT-X-DISCONTINUITY-SEQUENCE:(\d+)/.exec(playlists[i - 1]!)![1]);
    for (const line of earlier) {
      if (line === '#EXT-X-DISCONTINUITY') sequence += 1;
      if (line === `v/${first}.m4s`) break;
    }
    expect(playlists[i]).toContain(`#EXT-X-DISCONTINUITY-SEQUENCE:${sequence}\n`);
  }
}

describe('live discontinuities', () => {
  it('moves EXT-X-DISCONTINUITY-SEQUENCE only for the tags that leave the window, also across runs that published nothing', () => {
    const track: Track & { discontinuities: number } = { name: 'v', kind: 'video', bandwidth: 1, timescale: 1000, segments: [], discontinuities: 0 };
    const playlists: string[] = [];
    // Run 0 (the slate), run 1 (the encoder); runs 2 and 3 publish nothing (a slate cut short, an owner killed); run 4.
    for (const run of [0, 0, 0, 1, 1, 1, 4, 4, 4, 4, 4, 5, 5, 5, 5, 5]) {
      publish(track, run);
      playlists.push(mediaPlaylist(track, WINDOW, 1, 0));
    }
    checkSlides(playlists);
    expect(track.segments.map((s) => s.discontinuity)).toEqual([0, 0, 0, 1, 1, 1, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3]);
  });

  it('writes no tag where a run continues the stream (same init, no jump), and one where the next run does not', () => {
    const track: Track & { discontinuities: number } = { name: 'v', kind: 'video', bandwidth: 1, timescale: 1000, segments: [], discontinuities: 0 };
    const playlists: string[] = [];
    // The slate, the encoder and the slate again continue one stream; run 4 (a new init segment) does not.
    for (const [run, continues] of [
      [0, false],
      [0, false],
      [1, true],
      [1, false],
      [2, true],
      [2, false],
      [4, false],
      [4, false],
    ] as const) {
      publish(track, run, continues);
      playlists.push(mediaPlaylist(track, WINDOW, 1, 0));
    }
    checkSlides(playlists);
    expect(track.segments.map((s) => s.discontinuity)).toEqual([0, 0, 0, 0, 0, 0, 1, 1]);
    const last = playlists.at(-1)!;
    expect(last.match(/#EXT-X-DISCONTINUITY\n/g)).toHaveLength(1);
    expect(last).toContain('v/5.m4s\n#EXT-X-DISCONTINUITY\n#EXT-X-MAP:URI="v/init-4.mp4"\n');
    // One map for the continued runs: the init segment they share.
    expect(playlists[5]!.match(/#EXT-X-MAP/g)).toHaveLength(1);
  });

  it('continues the count of a resumed track from its last segment', () => {
    const track: Track & { discontinuities: number } = { name: 'v', kind: 'video', bandwidth: 1, timescale: 1000, segments: [], discontinuities: 7 };
    publish(track, 9);
    publish(track, 9);
    publish(track, 12);
    expect(track.segments.map((s) => s.discontinuity)).toEqual([7, 7, 8]);
  });
});
