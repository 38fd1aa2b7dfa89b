import { describe, expect, it } from 'vitest';
import { masterVariants, rangeMpd, type RangeMpdTrack } from '../../src/media/live/packaging/rangeMpd.ts';

/** Two runs (live, then slate after an input loss) of a video and an audio track, 2 s segments. */
function tracks(): RangeMpdTrack[] {
  const seg = (track: string, sequence: number, run: number, startMs: number, ts: number, decodeTime: number) => ({
    uri: `../../${track}/${sequence}.m4s`,
    initUri: `../../${track}/init-${run}.mp4`,
    sequence,
    run,
    startMs,
    durationMs: 2000,
    decodeTime,
  });
  const t0 = 1_700_000_000_000;
  return [
    {
      name: '360p',
      kind: 'video',
      width: 640,
      height: 360,
      frameRate: 30,
      bandwidth: 900_000,
      codec: 'avc1.64001e',
      timescale: 15360,
      segments: [seg('360p', 10, 1, t0, 15360, 307200), seg('360p', 11, 1, t0 + 2000, 15360, 337920), seg('360p', 12, 2, t0 + 4010, 15360, 0)],
    },
    {
      name: 'audio',
      kind: 'audio',
      bandwidth: 128_000,
      codec: 'mp4a.40.2',
      timescale: 48000,
      segments: [seg('audio', 10, 1, t0 + 5, 48000, 960240), seg('audio', 11, 1, t0 + 2005, 48000, 1056240), seg('audio', 12, 2, t0 + 4000, 48000, 0)],
    },
  ];
}

describe('range MPD', () => {
  it("puts every track's first segment in the first Period, however far apart the range's edge cuts them", () => {
    const t = tracks();
    // Audio's first segment begins 1.5 s after video's (more than half a segment): still one Period until the run changes.
    t[1]!.segments[0]!.startMs += 1500;
    const mpd = rangeMpd(t, { type: 'static', segmentSeconds: 2, now: 0, clock: { direct: true } });
    expect([...mpd.matchAll(/<Period id="p\d" start="([^"]+)"/g)].map((m) => m[1])).toEqual(['PT0S', 'PT4S']);
    expect(mpd.split('<Period')[1]).toContain('contentType="audio"');
  });

  it("leaves out a sliver of the old run when the range's edge falls just before a run change, not the run after it", () => {
    const t = tracks();
    // The range begins 0.4 s before run 2: one short segment of run 1 per track, then run 2 (one Period: within half a segment).
    for (const track of t) {
      track.segments = track.segments.slice(1);
      track.segments[0]!.startMs = track.segments[1]!.startMs - 400;
      track.segments[0]!.durationMs = 400;
    }
    const mpd = rangeMpd(t, { type: 'static', segmentSeconds: 2, now: 0, clock: { direct: true } });
    expect([...mpd.matchAll(/<Period id="p\d"/g)]).toHaveLength(1);
    // Each track lists run 2's segment (its init segment), not the sliver.
    expect(mpd).toContain('initialization="../../360p/init-2.mp4"');
    expect(mpd).toContain('initialization="../../audio/init-2.mp4"');
    expect(mpd).not.toContain('init-1.mp4');
  });

  it('keeps availabilityStartTime fixed as the range grows, and covers what the timeline lags the clock with its delay', () => {
    const attr = (mpd: string, name: string) => new RegExp(`${name}="([^"]+)"`).exec(mpd)?.[1];
    const full = tracks();
    // Successive updates: one, two, then three segments per track, each written later than the last segment's end by
    // more (0.5 s, then 3 s, then 5 s: the encoder falls behind the wall clock).
    const renders = [1, 2, 3].map((n, i) => {
      const grown = full.map((t) => ({ ...t, segments: t.segments.slice(0, n) }));
      const end = Math.max(...grown.flatMap((t) => t.segments.map((s) => s.startMs + s.durationMs)));
      return rangeMpd(grown, { type: 'dynamic', segmentSeconds: 2, now: end + [500, 3000, 5000][i]!, clock: { direct: true } });
    });
    // The first segment's wall-clock start, in every update (DASH-IF IOP: fixed for the presentation's life).
    expect(renders.map((m) => attr(m, 'availabilityStartTime'))).toEqual(Array(3).fill('2023-11-14T22:13:20.000Z'));
    // Three segments, plus the lag beyond one segment: the live edge (now less the two) stays within the listed segments.
    expect(renders.map((m) => attr(m, 'suggestedPresentationDelay'))).toEqual(['PT6S', 'PT7S', 'PT9S']);
    // Periods stay where they were on the media timeline.
    expect([...renders[2]!.matchAll(/<Period id="p\d" start="([^"]+)"/g)].map((m) => m[1])).toEqual(['PT0S', 'PT4S']);
  });

  it('is dynamic while the range grows, with a Period per run and the whole range seekable', () => {
    const mpd = rangeMpd(tracks(), { type: 'dynamic', segmentSeconds: 2, now: 1_700_000_008_000, clock: { isoUrl: 'http://x/media/time' } });
    expect(mpd).toContain('type="dynamic"');
    expect(mpd).not.toContain('timeShiftBufferDepth');
    expect(mpd).toContain('availabilityStartTime="2023-11-14T22:13:20.000Z"');
    // A stored MPD's clock: the delivery's public time (no token needed), as ISO 8601.
    expect(mpd).toContain('<UTCTiming schemeIdUri="urn:mpeg:dash:utc:http-iso:2014" value="http://x/media/time"/>');
    // The two tracks' runs begin 10 ms apart: one Period each, at the earlier start.
    expect([...mpd.matchAll(/<Period id="(p\d)" start="([^"]+)"/g)].map((m) => [m[1], m[2]])).toEqual([
      ['p0', 'PT0S'],
      ['p1', 'PT4S'],
    ]);
    expect(mpd).toContain('media="../../360p/$Number$.m4s" startNumber="10"');
    expect(mpd).toContain('initialization="../../360p/init-2.mp4" media="../../360p/$Number$.m4s" startNumber="12"');
    // Within a run the durations are the decode times' differences; audio began 5 ms after the Period: its offset is
    // the media time at the Period's start.
    expect(mpd).toContain('<S t="307200" d="30720"/>');
    expect(mpd).toContain('presentationTimeOffset="960000"');
    // The video's second run begins 10 ms into its Period.
    expect(mpd).toMatch(/presentationTimeOffset="0" initialization="..\/..\/360p\/init-2.mp4"/);
  });

  it("is static with the range's duration once it has ended, and splits where a segment is missing", () => {
    const t = tracks();
    // The video's segment 11 was lost: 14 follows 10 in the same run.
    Object.assign(t[0]!.segments[1]!, { sequence: 14, uri: '../../360p/14.m4s' });
    const mpd = rangeMpd(t, { type: 'static', segmentSeconds: 2, now: 0, clock: { direct: true } });
    expect(mpd).toContain('type="static" mediaPresentationDuration="PT6.01S"');
    expect(mpd).not.toContain('UTCTiming');
    expect(mpd.match(/<Period /g)).toHaveLength(3);
    expect(mpd).toContain('media="../../360p/$Number$.m4s" startNumber="14"');
  });

  it('reads the variants of a master playlist', () => {
    const master =
      '#EXTM3U\n#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="audio",NAME="audio",DEFAULT=YES,URI="audio.m3u8"\n' +
      '#EXT-X-STREAM-INF:BANDWIDTH=928000,RESOLUTION=640x360,FRAME-RATE=30.000,CODECS="avc1.64001e,mp4a.40.2",AUDIO="audio"\n360p.m3u8\n';
    expect(Object.fromEntries(masterVariants(master))).toEqual({ audio: {}, '360p': { bandwidth: 928000, width: 640, height: 360, frameRate: 30 } });
  });
});
