/**
 * Live captions for DASH players: each WebVTT segment again as ISO/IEC 14496-30 `wvtt` in fragmented MP4. dash.js
 * shows text only from fragmented MP4 when it comes in segments (a `text/vtt` segment it takes for a whole side-loaded
 * file), so the MPD's text AdaptationSet names these; HLS keeps the plain WebVTT files. Pure functions, like
 * subtitles.ts.
 */
import { container, fullBox, serializeBoxes, type Box } from '../../mp4boxes.ts';
import { escapeText, type Cue, type SubtitleSegment, type SubtitleTrack } from './subtitles.ts';

/** The text track's timescale: milliseconds, as WebVTT's cue times and the MPD's text SegmentTimeline. */
export const WVTT_TIMESCALE = 1000;
export const WVTT_INIT = 'captions/init.mp4';
export const wvttKey = (sequence: number) => `captions/${sequence}.m4s`;

const TRACK_ID = 1;
const u32 = (...values: number[]) => {
  const b = Buffer.alloc(4 * values.length);
  values.forEach((v, i) => b.writeUInt32BE(v, i * 4));
  return b;
};
const box = (type: string, data: Buffer): Box => ({ type, data });
/** The unity matrix of mvhd and tkhd. */
const MATRIX = u32(0x0001_0000, 0, 0, 0, 0x0001_0000, 0, 0, 0, 0x4000_0000);

/**
 * A segment's span on the text timeline (ms), as the MPD lists it: `t` from the segment's start, `d` from its
 * duration, each rounded, so that the samples fill exactly the span the player asks the segment for.
 */
export const wvttSpan = (s: SubtitleSegment) => {
  const start = Math.round(s.start * WVTT_TIMESCALE);
  return { start, duration: Math.round(s.duration * WVTT_TIMESCALE) };
};

/** The init segment: one `text` track whose sample entry is `wvtt` with the WebVTT file header in `vttC`. */
export function wvttInit(): Buffer {
  const ftyp = box('ftyp', Buffer.from('iso6\0\0\0\0iso6cmfcdash', 'latin1'));
  // version 0: times, timescale, duration 0 (live), rate 1.0, volume 1.0, reserved, matrix, pre_defined, next track
  const mvhd = fullBox(
    'mvhd',
    0,
    0,
    Buffer.concat([u32(0, 0, WVTT_TIMESCALE, 0, 0x0001_0000), Buffer.from([1, 0]), Buffer.alloc(10), MATRIX, Buffer.alloc(24), u32(TRACK_ID + 1)]),
  );
  // flags: enabled, in movie. Times, track id, reserved, duration, reserved, layer/group/volume/reserved, matrix, size 0.
  const tkhd = fullBox('tkhd', 0, 3, Buffer.concat([u32(0, 0, TRACK_ID, 0, 0), Buffer.alloc(16), MATRIX, u32(0, 0)]));
  // The language is the MPD's `lang` (BCP 47, which the three letters here cannot always say): `und` (packed ISO 639-2).
  const und = ((('u'.charCodeAt(0) - 0x60) << 10) | (('n'.charCodeAt(0) - 0x60) << 5) | ('d'.charCodeAt(0) - 0x60)) & 0x7fff;
  const mdhd = fullBox('mdhd', 0, 0, Buffer.concat([u32(0, 0, WVTT_TIMESCALE, 0), Buffer.from([und >> 8, und & 0xff, 0, 0])]));
  const hdlr = fullBox(
    'hdlr',
    0,
    0,
    Buffer.concat([u32(0), Buffer.from('text', 'latin1'), Buffer.alloc(12), Buffer.from('Mediaplane live captions\0', 'utf8')]),
  );
  const url = serializeBoxes([fullBox('url ', 0, 1, Buffer.alloc(0))]);
  const dinf = container('dinf', [fullBox('dref', 0, 0, Buffer.concat([u32(1), url]))]);
  // SampleEntry: 6 reserved bytes, data_reference_index 1; then the WebVTT configuration (the file's header).
  const wvtt: Box = { type: 'wvtt', data: Buffer.from([0, 0, 0, 0, 0, 0, 0, 1]), children: [box('vttC', Buffer.from('WEBVTT', 'utf8'))] };
  const stsd: Box = { ...fullBox('stsd', 0, 0, u32(1)), children: [wvtt] };
  const empty = (type: string) => fullBox(type, 0, 0, u32(0));
  const stbl = container('stbl', [stsd, empty('stts'), empty('stsc'), fullBox('stsz', 0, 0, u32(0, 0)), empty('stco')]);
  const minf = container('minf', [fullBox('nmhd', 0, 0, Buffer.alloc(0)), dinf, stbl]);
  const trak = container('trak', [tkhd, container('mdia', [mdhd, hdlr, minf])]);
  const trex = fullBox('trex', 0, 0, u32(TRACK_ID, 1, 0, 0, 0));
  return serializeBoxes([ftyp, container('moov', [mvhd, trak, container('mvex', [trex])])]);
}

/**
 * The samples of one segment: its span cut at every cue start and end inside it; a piece with cues is a `vttc` per cue
 * (its text in `payl`), a piece without is `vtte`. A cue over a segment boundary is cut there (players join the
 * halves: dash.js extends a cue continued by the next segment).
 */
export function wvttSamples(segment: SubtitleSegment, cues: Cue[]): { duration: number; cues: string[] }[] {
  const { start, duration } = wvttSpan(segment);
  const end = start + duration;
  const ms = cues.map((c) => ({ start: Math.round(c.start * WVTT_TIMESCALE), end: Math.round(c.end * WVTT_TIMESCALE), text: c.text }));
  const inside = ms.filter((c) => c.end > start && c.start < end && c.end > c.start);
  const cuts = [...new Set([start, end, ...inside.flatMap((c) => [c.start, c.end]).filter((t) => t > start && t < end)])].sort((a, b) => a - b);
  const samples: { duration: number; cues: string[] }[] = [];
  for (let i = 0; i + 1 < cuts.length; i++) {
    const [from, to] = [cuts[i]!, cuts[i + 1]!];
    samples.push({ duration: to - from, cues: inside.filter((c) => c.start <= from && c.end >= to).map((c) => c.text) });
  }
  return samples;
}

/** A media segment: `moof` (decode time = the segment's start in ms) and `mdat` with the samples of `wvttSamples`. */
export function wvttSegment(segment: SubtitleSegment, cues: Cue[]): Buffer {
  const samples = wvttSamples(segment, cues).map((s) => ({
    duration: s.duration,
    // Cue text as in a WebVTT file (the reserved characters escaped).
    data:
      s.cues.length === 0
        ? serializeBoxes([box('vtte', Buffer.alloc(0))])
        : serializeBoxes(s.cues.map((text) => container('vttc', [box('payl', Buffer.from(escapeText(text), 'utf8'))]))),
  }));
  // tfhd: default-base-is-moof; trun: data offset, and each sample's duration and size.
  const tfhd = fullBox('tfhd', 0, 0x02_0000, u32(TRACK_ID));
  const decodeTime = Buffer.alloc(8);
  decodeTime.writeBigUInt64BE(BigInt(wvttSpan(segment).start));
  const tfdt = fullBox('tfdt', 1, 0, decodeTime);
  const trun = (dataOffset: number) =>
    fullBox('trun', 0, 0x0001 | 0x0100 | 0x0200, Buffer.concat([u32(samples.length, dataOffset), ...samples.map((s) => u32(s.duration, s.data.length))]));
  const moof = (dataOffset: number) => container('moof', [fullBox('mfhd', 0, 0, u32(segment.sequence)), container('traf', [tfhd, tfdt, trun(dataOffset)])]);
  // The data offset counts from the moof's start to the first sample: the moof's size (fixed) and the mdat header.
  const moofSize = serializeBoxes([moof(0)]).length;
  return serializeBoxes([moof(moofSize + 8), box('mdat', Buffer.concat(samples.map((s) => s.data)))]);
}

/**
 * The DASH text AdaptationSet of one Period: its wvtt segments on the millisecond timeline whose times are the other
 * tracks' decode times in seconds (so dash.js places each cue on the video of the same moment).
 */
export function subtitleAdaptationSet(t: SubtitleTrack, segments: SubtitleSegment[], period: { id: number; start: number }): string[] {
  const segs = segments.filter((s) => s.period === period.id);
  if (segs.length === 0) return [];
  return [
    `    <AdaptationSet contentType="text" mimeType="application/mp4" codecs="wvtt" lang="${t.language}">`,
    '      <Role schemeIdUri="urn:mpeg:dash:role:2011" value="caption"/>',
    '      <Representation id="captions" bandwidth="1000">',
    `        <SegmentTemplate timescale="${WVTT_TIMESCALE}" presentationTimeOffset="${Math.round(period.start * WVTT_TIMESCALE)}"` +
      ` initialization="${WVTT_INIT}" media="captions/$Number$.m4s" startNumber="${segs[0]!.sequence}">`,
    '          <SegmentTimeline>',
    ...segs.map((s) => {
      const { start, duration } = wvttSpan(s);
      return `            <S t="${start}" d="${duration}"/>`;
    }),
    '          </SegmentTimeline>',
    '        </SegmentTemplate>',
    '      </Representation>',
    '    </AdaptationSet>',
  ];
}
