import { describe, expect, it } from 'vitest';
import { masterPlaylist } from '../../src/media/live/manifests.ts';
import { masterTracks, withoutCaptions } from '../../src/media/live/rangePlaylist.ts';
import { parseWordTimes } from '../../src/media/live/recognizer.ts';
import { SpeechWindows } from '../../src/media/live/speechWindows.ts';
import { cuesOf, subtitlePlaylist, webvttSegment } from '../../src/media/live/subtitles.ts';
import { wvttSamples, wvttSegment } from '../../src/media/live/wvtt.ts';
import { boxSize, parseBoxes, path } from '../../src/media/mp4boxes.ts';

/** 16 kHz mono s16le: `seconds` of a loud tone, or of silence. */
const tone = (seconds: number) => {
  const b = Buffer.alloc(Math.round(seconds * 16_000) * 2);
  for (let i = 0; i < b.length / 2; i++) b.writeInt16LE(Math.round(8000 * Math.sin(i / 5)), i * 2);
  return b;
};
const silence = (seconds: number) => Buffer.alloc(Math.round(seconds * 16_000) * 2);

describe('live captions', () => {
  it("leaves the captions out of a range's master playlist, whose tracks are then the timeline's audio and video", () => {
    const tracks = [
      { name: '360p', kind: 'video' as const, width: 640, height: 360, frameRate: 25, bandwidth: 800_000, codec: 'avc1.64001e', segments: [] },
      { name: 'audio', kind: 'audio' as const, bandwidth: 128_000, codec: 'mp4a.40.2', segments: [] },
    ];
    const live = masterPlaylist(tracks, { language: 'en-US', name: 'English (United States)', segments: () => [] });
    expect(masterTracks(live)).toContain('captions');
    const range = withoutCaptions(live);
    expect(masterTracks(range).sort()).toEqual(['360p', 'audio']);
    expect(range).not.toContain('SUBTITLES');
    expect(range).toContain('#EXT-X-STREAM-INF:BANDWIDTH=928000,RESOLUTION=640x360,FRAME-RATE=25.000,CODECS="avc1.64001e,mp4a.40.2",AUDIO="audio"\n360p.m3u8');
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
      'WEBVTT\nX-TIMESTAMP-MAP=MPEGTS:1260000,LOCAL:00:00:14.000\n\n00:00:13.000 --> 00:00:14.500\nover &lt;the&gt; boundary\n\n00:00:15.000 --> 00:00:15.500\ninside\n\n',
    );
    const playlist = subtitlePlaylist([seg, { ...seg, sequence: 8, start: 17, run: 2, discontinuity: 1 }], 10, 2, Date.UTC(2026, 0, 1));
    expect(playlist).toContain('#EXT-X-MEDIA-SEQUENCE:7\n#EXT-X-DISCONTINUITY-SEQUENCE:0\n');
    expect(playlist).toContain('captions/7.vtt\n#EXT-X-DISCONTINUITY\n#EXT-X-PROGRAM-DATE-TIME:2026-01-01T00:00:17.000Z\n#EXTINF:2.000000,\ncaptions/8.vtt');
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
