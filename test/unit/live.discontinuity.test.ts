import { describe, expect, it } from 'vitest';
import { mediaPlaylist, nextDiscontinuity, type PublishedSegment, type Track } from '../../src/media/live/packaging/manifests.ts';

const WINDOW = 4;

/** Publishes one segment from `run` into `track` the way the packager does. */
function publish(track: Track & { discontinuities: number }, run: number): void {
  const sequence = track.segments.length;
  const segment: PublishedSegment = {
    sequence,
    duration: 1,
    decodeTime: sequence * 1000,
    run,
    initKey: `v/init-${run}.mp4`,
    discontinuity: nextDiscontinuity(track, run),
    period: run,
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

  it('continues the count of a resumed track from its last segment', () => {
    const track: Track & { discontinuities: number } = { name: 'v', kind: 'video', bandwidth: 1, timescale: 1000, segments: [], discontinuities: 7 };
    publish(track, 9);
    publish(track, 9);
    publish(track, 12);
    expect(track.segments.map((s) => s.discontinuity)).toEqual([7, 7, 8]);
  });
});
