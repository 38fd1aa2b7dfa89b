/**
 * Live captions as WebVTT: cues from recognized words, one WebVTT file per media segment (the same times, the same
 * sequence numbers, the same discontinuities) and the HLS subtitle playlist over them (DASH's are in wvtt.ts).
 * Pure functions, like manifests.ts.
 */
import { discontinuityTags } from '../packaging/discontinuity.ts';
import type { Word } from './recognizer.ts';
import { MAX_WINDOW_SECONDS } from './speechWindows.ts';

export interface Cue {
  /** Seconds on the channel's timeline (since availabilityStart). */
  start: number;
  end: number;
  text: string;
}

/** A WebVTT segment: the span of the audio segment of the same sequence number. */
export interface SubtitleSegment {
  sequence: number;
  /** Seconds on the channel's timeline. */
  start: number;
  duration: number;
  run: number;
  discontinuity: number;
  period: number;
}

export const SUBTITLE_PLAYLIST = 'captions.m3u8';
/**
 * The captions' track on the channel's timeline (the name of its playlist): one row per caption segment, keyed by its
 * wvtt segment (`captions/<n>.m4s`, with `captions/init.mp4`, like the media tracks' CMAF segments); the WebVTT file of
 * the same number (`captionVttKey`) goes with it wherever it is copied or removed.
 */
export const CAPTION_TRACK = 'captions';
export const captionVttKey = (wvttKey: string) => wvttKey.replace(/\.m4s$/, '.vtt');

/**
 * How far behind the live edge players of a captioned channel should play (HLS `HOLD-BACK`), so that a cue's WebVTT
 * is out before the player reaches its time: the usual three segments, plus what captions take beyond their audio
 * segment (the rest of a window, at most MAX_WINDOW_SECONDS, and the recognizer's run on it, about half that again).
 * Without it hls.js plays three segments behind and shows no caption that took longer.
 */
export const captionHoldBack = (segmentSeconds: number): number => 3 * segmentSeconds + Math.ceil(MAX_WINDOW_SECONDS * 1.5);
export const subtitleKey = (sequence: number) => `captions/${sequence}.vtt`;

/** A cue ends at a pause this long, or at this many words or characters, so that it reads as a line. */
const CUE_GAP_S = 0.7;
const CUE_WORDS = 7;
const CUE_CHARS = 36;
/** A cue stays up this long after its last word (not into the next cue). */
const CUE_HOLD_S = 0.6;

/** Groups words (timeline seconds, in order) into caption lines. */
export function cuesOf(words: Word[]): Cue[] {
  const groups: Word[][] = [];
  for (const w of words) {
    const current = groups.at(-1);
    const last = current?.at(-1);
    const text = current ? current.map((x) => x.text).join(' ') : '';
    if (!current || !last || w.start - last.end > CUE_GAP_S || current.length >= CUE_WORDS || text.length + 1 + w.text.length > CUE_CHARS) groups.push([w]);
    else current.push(w);
  }
  return groups.map((g, i) => {
    const next = groups[i + 1]?.[0]?.start ?? Infinity;
    return { start: g[0]!.start, end: Math.max(g.at(-1)!.end, Math.min(g.at(-1)!.end + CUE_HOLD_S, next)), text: g.map((w) => w.text).join(' ') };
  });
}

/** `hh:mm:ss.mmm` */
export function vttTime(seconds: number): string {
  const ms = Math.max(0, Math.round(seconds * 1000));
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor(ms / 60_000) % 60;
  const s = Math.floor(ms / 1000) % 60;
  const pad = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${pad(h)}:${pad(m)}:${pad(s)}.${pad(ms % 1000, 3)}`;
}

/** WebVTT cue text: the characters WebVTT reserves are escaped. */
export const escapeText = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/**
 * Every WebVTT file's timestamp map: cue time 0 is MPEG-2 time 0, so the cue times (the channel's timeline, the media
 * segments' decode times in seconds) are the media's times. The same line in every file, on purpose: hls.js tells a
 * cue repeated in the next file (one over a boundary) from a new one only by an id hashed from its computed start and
 * end, and those come out of `cue + (MPEGTS - initPTS) / 90000 - LOCAL` in floating point. A map per segment
 * (MPEGTS = start × 90000, LOCAL = start rounded to the millisecond) made each copy's times differ by that rounding,
 * or in the last bits, and hls.js showed a cue once per segment it covers.
 * Past 2^33 ticks (26.5 hours) the cue times run on beyond the 33-bit clock, as the fMP4 decode times do: hls.js
 * subtracts the video's (unwrapped) initPTS, and brings a time more than 2^32 ticks from the segment's back by 2^33.
 */
export const TIMESTAMP_MAP = 'X-TIMESTAMP-MAP=MPEGTS:0,LOCAL:00:00:00.000';

/**
 * The WebVTT file of one segment: every cue that overlaps it. A cue over a boundary is in each file it overlaps, in
 * the same bytes (same times, same text, same TIMESTAMP_MAP), so that a player that starts or seeks into the middle
 * of it still shows it, and hls.js, which computes the same id for both copies, adds it once.
 */
export function webvttSegment(segment: SubtitleSegment, cues: Cue[]): string {
  const end = segment.start + segment.duration;
  const lines = ['WEBVTT', TIMESTAMP_MAP, ''];
  for (const c of cues) {
    if (c.end <= segment.start || c.start >= end) continue;
    lines.push(`${vttTime(c.start)} --> ${vttTime(c.end)}`, escapeText(c.text), '');
  }
  return `${lines.join('\n')}\n`;
}

/** A whole WebVTT file of cues (a VOD asset's captions made from its speech): cue times are the media's. */
export function webvttFile(cues: Cue[]): string {
  return `${['WEBVTT', '', ...cues.flatMap((c) => [`${vttTime(c.start)} --> ${vttTime(c.end)}`, escapeText(c.text), ''])].join('\n')}\n`;
}

/** The live subtitle playlist: the last `windowSegments` WebVTT segments, with the media playlists' discontinuities. */
export function subtitlePlaylist(segments: SubtitleSegment[], windowSegments: number, segmentSeconds: number, availabilityStart: number): string {
  const listed = segments.slice(-windowSegments);
  const target = Math.max(Math.ceil(segmentSeconds), ...listed.map((s) => Math.round(s.duration)));
  const first = listed[0];
  const lines = [
    '#EXTM3U',
    '#EXT-X-VERSION:6',
    `#EXT-X-TARGETDURATION:${target}`,
    `#EXT-X-MEDIA-SEQUENCE:${first?.sequence ?? 0}`,
    `#EXT-X-DISCONTINUITY-SEQUENCE:${first?.discontinuity ?? 0}`,
  ];
  let discontinuity: number | undefined;
  for (const s of listed) {
    if (discontinuity !== undefined) lines.push(...discontinuityTags(discontinuity, s.discontinuity));
    discontinuity = s.discontinuity;
    lines.push(
      `#EXT-X-PROGRAM-DATE-TIME:${new Date(availabilityStart + s.start * 1000).toISOString()}`,
      `#EXTINF:${s.duration.toFixed(6)},`,
      subtitleKey(s.sequence),
    );
  }
  return `${lines.join('\n')}\n`;
}

/** What the master playlist and the MPD say of the captions. */
export interface SubtitleTrack {
  language: string;
  name: string;
  segments(): SubtitleSegment[];
}

/** The master playlist's rendition of the captions (its variants name the group `subs`). */
export const subtitleMedia = (t: SubtitleTrack) =>
  `#EXT-X-MEDIA:TYPE=SUBTITLES,GROUP-ID="subs",NAME="${t.name.replace(/"/g, "'")}",LANGUAGE="${t.language}",DEFAULT=NO,AUTOSELECT=YES,FORCED=NO,URI="${SUBTITLE_PLAYLIST}"`;
