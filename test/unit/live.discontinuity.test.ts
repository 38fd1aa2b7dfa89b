import { describe, expect, it } from 'vitest';
import { runDiscontinuity } from '../../src/media/live/packaging/discontinuity.ts';
import { mediaPlaylist, type PublishedSegment, type Track } from '../../src/media/live/packaging/manifests.ts';

const WINDOW = 4;

type TestTrack = Track & { discontinuities: number };
const newTrack = (name: string, discontinuities = 0): TestTrack => ({
  name,
  kind: name === 'a' ? 'audio' : 'video',
  bandwidth: 1,
  timescale: 1000,
  segments: [],
  discontinuities,
});

/** Opens `run` over `tracks` as the packager does; the result publishes one segment of it in a track. */
function openRun(tracks: TestTrack[], run: number, continues = false): (track: TestTrack) => void {
  const discontinuity = runDiscontinuity(tracks, continues);
  return (track) => {
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
      initKey: same ? previous.initKey : `${track.name}/init-${run}.mp4`,
      discontinuity,
      period: same ? previous.period : run,
    };
    track.discontinuities = segment.discontinuity;
    track.segments.push(segment);
  };
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
    const track = newTrack('v');
    const playlists: string[] = [];
    // Run 0 (the slate), run 1 (the encoder); runs 2 and 3 publish nothing (a slate cut short, an owner killed); run 4.
    for (const [run, count] of [
      [0, 3],
      [1, 3],
      [2, 0],
      [3, 0],
      [4, 5],
      [5, 5],
    ] as const) {
      const publish = openRun([track], run);
      for (let n = 0; n < count; n++) {
        publish(track);
        playlists.push(mediaPlaylist(track, WINDOW, 1, 0));
      }
    }
    checkSlides(playlists);
    expect(track.segments.map((s) => s.discontinuity)).toEqual([0, 0, 0, 1, 1, 1, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3]);
  });

  it('writes no tag where a run continues the stream (same init, no jump), and one where the next run does not', () => {
    const track = newTrack('v');
    const playlists: string[] = [];
    // The slate, the encoder and the slate again continue one stream; run 4 (a new init segment) does not.
    for (const [run, continues] of [
      [0, false],
      [1, true],
      [2, true],
      [4, false],
    ] as const) {
      const publish = openRun([track], run, continues);
      for (let n = 0; n < 2; n++) {
        publish(track);
        playlists.push(mediaPlaylist(track, WINDOW, 1, 0));
      }
    }
    checkSlides(playlists);
    expect(track.segments.map((s) => s.discontinuity)).toEqual([0, 0, 0, 0, 0, 0, 1, 1]);
    const last = playlists.at(-1)!;
    expect(last.match(/#EXT-X-DISCONTINUITY\n/g)).toHaveLength(1);
    expect(last).toContain('v/5.m4s\n#EXT-X-DISCONTINUITY\n#EXT-X-MAP:URI="v/init-4.mp4"\n');
    // One map for the continued runs: the init segment they share.
    expect(playlists[5]!.match(/#EXT-X-MAP/g)).toHaveLength(1);
  });

  it('gives a run the same number in every track, also when a track published nothing in the run before', () => {
    const video = newTrack('v');
    const audio = newTrack('a');
    // Run 1 left no audio segment (its audio was unreadable); run 2 continues neither track's stream.
    const run0 = openRun([video, audio], 0);
    run0(video);
    run0(audio);
    openRun([video, audio], 1)(video);
    const run2 = openRun([video, audio], 2);
    run2(video);
    run2(audio);
    expect(video.segments.map((s) => s.discontinuity)).toEqual([0, 1, 2]);
    expect(audio.segments.map((s) => s.discontinuity)).toEqual([0, 2]);
    // Both playlists end in the same discontinuity domain: hls.js pairs their segments by it.
    const endOf = (t: TestTrack) => {
      const text = mediaPlaylist(t, WINDOW, 1, 0);
      return Number(/#EXT-X-DISCONTINUITY-SEQUENCE:(\d+)/.exec(text)![1]) + (text.match(/#EXT-X-DISCONTINUITY\n/g)?.length ?? 0);
    };
    expect(endOf(audio)).toBe(endOf(video));
  });

  it('continues the count of a resumed track from its last segment', () => {
    const track = newTrack('v', 7);
    const run9 = openRun([track], 9);
    run9(track);
    run9(track);
    openRun([track], 12)(track);
    expect(track.segments.map((s) => s.discontinuity)).toEqual([7, 7, 8]);
  });
});
