import { describe, expect, it } from 'vitest';
import { masterPlaylist } from '../../src/media/live/packaging/manifests.ts';
import { rangeMpd } from '../../src/media/live/packaging/rangeMpd.ts';
import { captionRendition, masterTracks, rangeMaster, rangeSubtitlePlaylist } from '../../src/media/live/packaging/rangePlaylist.ts';
import { parseWordTimes } from '../../src/media/live/captions/recognizer.ts';
import { SpeechWindows } from '../../src/media/live/captions/speechWindows.ts';
import { cuesOf, subtitlePlaylist, webvttSegment } from '../../src/media/live/captions/subtitles.ts';
import { wvttSamples, wvttSegment } from '../../src/media/live/captions/wvtt.ts';
import { boxSize, parseBoxes, path } from '../../src/media/mp4boxes.ts';

/** 16 kHz mono s16le: `seconds` of a loud tone, or of silence. */
const tone = (seconds: number) => {
  const b = Buffer.alloc(Math.round(seconds * 16_000) * 2);
  for (let i = 0; i < b.length / 2; i++) b.writeInt16LE(Math.round(8000 * Math.sin(i / 5)), i * 2);
  return b;
};
const silence = (seconds: number) => Buffer.alloc(Math.round(seconds * 16_000) * 2);

describe('live captions', () => {
  it("names the captions in a range's master playlist only when the range has them", () => {
    const tracks = [
      { name: '360p', kind: 'video' as const, width: 640, height: 360, frameRate: 25, bandwidth: 800_000, codec: 'avc1.64001e', segments: [] },
      { name: 'audio', kind: 'audio' as const, bandwidth: 128_000, codec: 'mp4a.40.2', segments: [] },
    ];
    const live = masterPlaylist(tracks, { language: 'en-US', name: 'English (United States)', segments: () => [] });
    expect(masterTracks(live)).toContain('captions');
    const line = captionRendition(live)!;
    expect(line).toContain('LANGUAGE="en-US"');
    const without = rangeMaster(live, undefined);
    expect(masterTracks(without).sort()).toEqual(['360p', 'audio']);
    expect(without).not.toContain('SUBTITLES');
    expect(without).toContain(
      '#EXT-X-STREAM-INF:BANDWIDTH=928000,RESOLUTION=640x360,FRAME-RATE=25.000,CODECS="avc1.64001e,mp4a.40.2",AUDIO="audio"\n360p.m3u8',
    );
    // Kept as the channel has it, and added back (once) to a master without it: the same playlist either way.
    expect(rangeMaster(live, line)).toBe(live);
    expect(rangeMaster(without, line)).toBe(live);
    expect(rangeMaster(rangeMaster(without, line), line)).toBe(live);
  });

  it("lists a range's caption segments on its audio segments' times, a missing one as a gap", () => {
    const audio = [10, 11, 12, 13, 14].map((n) => ({ sequence: n, startMs: 1_000_000 + n * 1000, durationMs: 1000, run: n < 13 ? 1 : 2 }));
    const uriOf = (n: number) => `../../captions/${n}.vtt`;
    const o = { type: 'EVENT' as const, segmentSeconds: 1 };
    // Growing: up to the last caption published (12); 11, missing before it, is a gap for good.
    const growing = rangeSubtitlePlaylist(audio, { sequences: new Set([10, 12]), uriOf }, { ...o, ended: false });
    expect(growing.split('\n').filter((l) => l.endsWith('.vtt'))).toEqual([uriOf(10), uriOf(11), uriOf(12)]);
    expect(growing).toContain('#EXT-X-GAP\n#EXTINF:1.000,\n../../captions/11.vtt');
    expect(growing.match(/#EXT-X-GAP/g)).toHaveLength(1);
    expect(growing).not.toContain('#EXT-X-ENDLIST');
    // Over: every audio segment is listed, those without captions as gaps; the run change is a discontinuity.
    const ended = rangeSubtitlePlaylist(audio, { sequences: new Set([10, 12, 13]), uriOf }, { ...o, ended: true });
    expect(ended.match(/#EXT-X-GAP/g)).toHaveLength(2);
    expect(ended).toContain(`#EXT-X-DISCONTINUITY\n#EXT-X-PROGRAM-DATE-TIME:${new Date(1_013_000).toISOString()}\n#EXTINF:1.000,\n${uriOf(13)}`);
    expect(ended.trim().endsWith('#EXT-X-ENDLIST')).toBe(true);
    expect(ended).not.toContain('EXT-X-MAP');
  });

  it("gives a range's MPD a wvtt text AdaptationSet that follows the media's Periods", () => {
    const seg = (track: string, n: number, ts: number, run = 1) => ({
      uri: `../../${track}/${n}.m4s`,
      initUri: `../../${track}/${track === 'captions' ? 'init' : `init-${run}`}.mp4`,
      startMs: 1_000_000 + n * 1000,
      durationMs: 1000,
      run,
      sequence: n,
      decodeTime: n * ts,
    });
    const ns = [10, 11, 12, 13];
    const mpd = rangeMpd(
      [
        { name: '360p', kind: 'video', bandwidth: 800_000, codec: 'avc1.64001e', timescale: 90_000, segments: ns.map((n) => seg('360p', n, 90_000)) },
        { name: 'audio', kind: 'audio', bandwidth: 128_000, codec: 'mp4a.40.2', timescale: 48_000, segments: ns.map((n) => seg('audio', n, 48_000)) },
        // 11 missing: the captions after it in the Period are left out, and no new Period begins there.
        {
          name: 'captions',
          kind: 'text',
          language: 'en-US',
          bandwidth: 1000,
          codec: 'wvtt',
          timescale: 1000,
          segments: [10, 12, 13].map((n) => seg('captions', n, 1000)),
        },
      ],
      { type: 'static', segmentSeconds: 1, now: 2_000_000, clock: { direct: true } },
    );
    expect(mpd.match(/<Period /g)).toHaveLength(1);
    expect(mpd).toContain('<AdaptationSet contentType="text" mimeType="application/mp4" codecs="wvtt" lang="en-US">');
    expect(mpd).toContain('<Role schemeIdUri="urn:mpeg:dash:role:2011" value="caption"/>');
    expect(mpd).toContain(
      '<SegmentTemplate timescale="1000" presentationTimeOffset="10000" initialization="../../captions/init.mp4" media="../../captions/$Number$.m4s" startNumber="10">',
    );
    const text = mpd.slice(mpd.indexOf('contentType="text"'));
    expect(text.match(/<S /g)).toHaveLength(1);
  });

  it('reads the word times pocketsphinx_continuous prints, without fillers or pronunciation variants', () => {
    // As pocketsphinx 0.8+5prealpha prints it with -time yes: the hypothesis, then `word start end confidence`.
    const out = [
      'well it is a test',
      '<s> 0.000 0.320 0.999100',
      'well 0.330 0.570 0.830007',
      '<sil> 0.580 0.690 0.970830',
      'the(2) 0.700 0.830 0.032615',
      '[NOISE] 0.9 1.0 1.0',
      '</s> 4.300 5.010 1.000000',
    ].join('\n');
    expect(parseWordTimes(out)).toEqual([
      { text: 'well', start: 0.33, end: 0.57 },
      { text: 'the', start: 0.7, end: 0.83 },
    ]);
  });

  it('groups words into cues at pauses and at a line length, held a little but never into the next cue', () => {
    const w = (text: string, start: number, end: number) => ({ text, start, end });
    const cues = cuesOf([w('hello', 10, 10.4), w('world', 10.5, 10.9), w('this', 12, 12.2), w('is', 12.3, 12.4)]);
    expect(cues).toEqual([
      { start: 10, end: 11.5, text: 'hello world' },
      { start: 12, end: 13, text: 'this is' },
    ]);
    const long = cuesOf(Array.from({ length: 9 }, (_, i) => w('word', i * 0.3, i * 0.3 + 0.2)));
    expect(long.map((c) => c.text.split(' ').length)).toEqual([7, 2]);
  });

  it('writes a WebVTT segment on the channel timeline with X-TIMESTAMP-MAP, and a playlist with the discontinuities', () => {
    const seg = { sequence: 7, start: 14, duration: 2, run: 1, discontinuity: 0, period: 1 };
    const vtt = webvttSegment(seg, [
      { start: 13, end: 14.5, text: 'over <the> boundary' },
      { start: 15, end: 15.5, text: 'inside' },
      { start: 16, end: 17, text: 'next segment' },
    ]);
    expect(vtt).toBe(
      'WEBVTT\nX-TIMESTAMP-MAP=MPEGTS:0,LOCAL:00:00:00.000\n\n00:00:13.000 --> 00:00:14.500\nover &lt;the&gt; boundary\n\n00:00:15.000 --> 00:00:15.500\ninside\n\n',
    );
    const playlist = subtitlePlaylist([seg, { ...seg, sequence: 8, start: 17, run: 2, discontinuity: 1 }], 10, 2, Date.UTC(2026, 0, 1));
    expect(playlist).toContain('#EXT-X-MEDIA-SEQUENCE:7\n#EXT-X-DISCONTINUITY-SEQUENCE:0\n');
    expect(playlist).toContain('captions/7.vtt\n#EXT-X-DISCONTINUITY\n#EXT-X-PROGRAM-DATE-TIME:2026-01-01T00:00:17.000Z\n#EXTINF:2.000000,\ncaptions/8.vtt');
  });

  it('writes a cue over segment boundaries into each file it overlaps in the same bytes, timestamp map included', () => {
    // Segment starts as AAC frames at 48 kHz put them (1024 samples: 21.333… ms), neither on the millisecond nor on
    // the 90 kHz clock exactly: a map per segment rounded them two ways, and hls.js saw each copy at other times.
    const frame = 1024 / 48_000;
    const segments = [0, 1, 2].map((i) => ({ sequence: 40 + i, start: (100 + 47 * i) * frame, duration: 47 * frame, run: 1, discontinuity: 0, period: 1 }));
    const long = { start: segments[0]!.start + 0.5, end: segments[2]!.start + 0.3, text: 'a long line' };
    const files = segments.map((s) => webvttSegment(s, [long]));
    const blocks = files.map((f) => f.split('\n\n'));
    // Header and cue block alike in all three: hls.js computes the same times, hence the same cue id, from each.
    expect(new Set(blocks.map((b) => b[0])).size).toBe(1);
    expect(blocks.map((b) => b[1])).toEqual(Array(3).fill('00:00:02.633 --> 00:00:04.439\na long line'));
  });

  it('cuts the audio into windows at pauses, at once where it is all quiet, and waits while speech goes on', () => {
    const w = new SpeechWindows();
    // Silence only: final at once, nothing to recognize.
    expect(w.push(0, silence(1)).map((x) => [x.start, x.speech])).toEqual([[0, false]]);
    // Speech that goes on: held.
    expect(w.push(1, tone(1))).toEqual([]);
    // A pause, then more speech: the window ends in the middle of the pause.
    const [first, ...rest] = w.push(2, Buffer.concat([silence(0.6), tone(0.5)]));
    expect(rest).toEqual([]);
    expect(first!.speech).toBe(true);
    expect(first!.start).toBe(1);
    expect(first!.pcm.length / 32_000).toBeCloseTo(1.3, 1);
    // Audio that does not continue where the last ended (a new run): what was held is a window of its own.
    const flushed = w.push(10, silence(1));
    expect(flushed[0]!.start).toBeCloseTo(2.3, 1);
    expect(flushed[0]!.speech).toBe(true);
    expect(flushed.at(-1)).toMatchObject({ start: 10, speech: false });
  });

  it('cuts a wvtt segment into samples at the cue times, cues over its boundaries clipped, and writes moof and mdat', () => {
    const seg = { sequence: 7, start: 14, duration: 2, run: 1, discontinuity: 0, period: 1 };
    const cues = [
      { start: 13, end: 14.5, text: 'over <the> boundary' },
      { start: 15, end: 15.5, text: 'inside' },
      { start: 15.2, end: 17, text: 'next segment' },
    ];
    expect(wvttSamples(seg, cues)).toEqual([
      { duration: 500, cues: ['over <the> boundary'] },
      { duration: 500, cues: [] },
      { duration: 200, cues: ['inside'] },
      { duration: 300, cues: ['inside', 'next segment'] },
      { duration: 500, cues: ['next segment'] },
    ]);
    const [moof, mdat] = parseBoxes(wvttSegment(seg, cues));
    expect(path(moof, 'mfhd')!.data.readUInt32BE(4)).toBe(7);
    expect(path(moof, 'traf', 'tfdt')!.data.readBigUInt64BE(4)).toBe(14_000n);
    const trun = path(moof, 'traf', 'trun')!.data;
    // Sample count 5; the data offset points past the moof and the mdat header, at the first sample.
    expect(trun.readUInt32BE(4)).toBe(5);
    expect(trun.readUInt32BE(8)).toBe(boxSize(moof!) + 8);
    const samples = parseBoxes(mdat!.data);
    expect(samples.map((b) => b.type)).toEqual(['vttc', 'vtte', 'vttc', 'vttc', 'vttc', 'vttc']);
    expect(samples.filter((b) => b.type === 'vttc').map((b) => parseBoxes(b.data).map((p) => [p.type, p.data.toString()]))[0]).toEqual([
      ['payl', 'over &lt;the&gt; boundary'],
    ]);
  });
});
