/**
 * DASH manifests of a time range of a live channel's timeline (a recording, an event's catch-up), over the same CMAF
 * segments as its HLS range playlists (rangePlaylist.ts): `dynamic` while the range may still grow (every segment
 * from the first stays listed: start-over), `static` once it has ended. Pure: the caller decides which segments.
 */
import type { RangeSegment } from './rangePlaylist.ts';

export interface RangeMpdSegment extends RangeSegment {
  sequence: number;
  /** baseMediaDecodeTime, in the track's timescale (what the player finds in the segment's `tfdt`). */
  decodeTime: number;
}

export interface RangeMpdTrack {
  name: string;
  /** `text`: live captions, wvtt segments (their times are the audio's: the same spans and numbers). */
  kind: 'video' | 'audio' | 'text';
  /** A text track's language (BCP 47). */
  language?: string;
  width?: number;
  height?: number;
  frameRate?: number;
  bandwidth: number;
  codec: string;
  timescale: number;
  segments: RangeMpdSegment[];
}

export interface RangeMpdOptions {
  /** `static` once the range has ended (its HLS playlists have the end tag); `dynamic` while it may grow. */
  type: 'dynamic' | 'static';
  segmentSeconds: number;
  /** ms: the MPD's publishTime. */
  now: number;
  /**
   * How a player learns the server's clock in a dynamic MPD: `direct` (the time is written in: only for an MPD made
   * per request), or a GET of this URL answering the time as ISO 8601 (`http-iso`: an MPD stored and served as a file;
   * a public address, so a player needs no token for it).
   */
  clock: { direct: true } | { isoUrl: string };
}

/** A segment's `$Number$` template: its URI with its sequence number replaced (`../../720p/12.m4s` → `../../720p/$Number$.m4s`). */
function templateOf(s: RangeMpdSegment): string | undefined {
  const tail = `${s.sequence}.m4s`;
  return s.uri.endsWith(`/${tail}`) || s.uri === tail ? `${s.uri.slice(0, -tail.length)}$Number$.m4s` : undefined;
}

/** Where a segment cannot follow the one before in one SegmentTemplate: another run or init segment, a missing sequence. */
const breaks = (prev: RangeMpdSegment | undefined, s: RangeMpdSegment): boolean =>
  !prev || prev.run !== s.run || prev.initUri !== s.initUri || prev.sequence + 1 !== s.sequence || templateOf(prev) !== templateOf(s);

const iso = (seconds: number) => `PT${Number(seconds.toFixed(3))}S`;

/**
 * Periods begin where any track's segments break (an input loss and its slate, a channel restart, a segment lost to
 * retention); the tracks of one run begin a little apart, so breaks closer than half a segment are one Period. Each
 * track lists, per Period, only its segments that continue one template (a second break inside a Period is left out
 * rather than written wrong; a sliver before a break at the Period's start is left out instead).
 */
function periodsOf(all: RangeMpdTrack[], segmentSeconds: number): { startMs: number; tracks: Map<string, RangeMpdSegment[]> }[] {
  const tolerance = (segmentSeconds * 1000) / 2;
  // Captions follow the media's Periods, never begin one: a caption segment the recognizer did not make is left out
  // (with the rest of that Period's captions: one SegmentTemplate cannot skip a number), not a break in the video.
  const tracks = all.filter((t) => t.kind !== 'text');
  // Every track's first segment is in the first Period: a range's edge cuts the tracks' segments where they are, up to
  // a whole segment apart (a Period of video alone first would need an audio buffer added mid-play, which MSE refuses).
  const first = Math.min(...tracks.flatMap((t) => (t.segments[0] ? [t.segments[0].startMs] : [])));
  const starts = [first, ...tracks.flatMap((t) => t.segments.filter((s, i) => i > 0 && breaks(t.segments[i - 1], s)).map((s) => s.startMs))]
    .sort((a, b) => a - b)
    .filter((at, i, all) => i === 0 || at - all[i - 1]! > tolerance);
  const periods = starts.map((startMs) => ({ startMs, tracks: new Map<string, RangeMpdSegment[]>() }));
  for (const t of all) {
    for (const s of t.segments) {
      let index = periods.length - 1;
      while (index > 0 && periods[index]!.startMs > s.startMs + tolerance) index--;
      const list = periods[index]!.tracks.get(t.name) ?? [];
      if (list.length && breaks(list.at(-1), s)) {
        // A break within the Period's first half segment (the range's edge a moment before a run change: one short
        // segment of the old run) leaves out that sliver, not everything after the break.
        if (s.startMs - periods[index]!.startMs <= tolerance) periods[index]!.tracks.set(t.name, [s]);
        continue;
      }
      periods[index]!.tracks.set(t.name, [...list, s]);
    }
  }
  return periods.filter((p) => tracks.some((t) => p.tracks.has(t.name)));
}

/**
 * How far behind the wall clock a player should play (`suggestedPresentationDelay`). Players find the live edge from
 * the clock (now less `availabilityStartTime`, less this delay), not from the last segment listed; the timeline lags
 * the wall clock (the encoder's start-up, an encoder slower than real time on a loaded machine, the recorder's copy),
 * and a lag longer than the delay puts the edge past every listed segment. `availabilityStartTime` stays the first
 * segment's wall-clock start in every update (DASH-IF IOP: it is fixed for the presentation's life), so the lag goes
 * into the delay instead: three segments, plus what the last segment lags `publishTime` beyond one. A player takes the
 * delay when it starts (dash.js reads it once): a later, larger lag makes it wait at the edge, never skip.
 */
function presentationDelay(endMs: number, o: RangeMpdOptions): number {
  const segmentMs = o.segmentSeconds * 1000;
  return 3 * segmentMs + Math.max(0, o.now - endMs - segmentMs);
}

export function rangeMpd(tracks: RangeMpdTrack[], o: RangeMpdOptions): string {
  const periods = periodsOf(tracks, o.segmentSeconds);
  const origin = periods[0]?.startMs ?? o.now;
  const endMs = Math.max(origin, ...tracks.flatMap((t) => t.segments.map((s) => s.startMs + s.durationMs)));
  const common = `xmlns="urn:mpeg:dash:schema:mpd:2011" profiles="urn:mpeg:dash:profile:isoff-live:2011" minBufferTime="${iso(o.segmentSeconds * 2)}"`;
  const out = ['<?xml version="1.0" encoding="utf-8"?>'];
  if (o.type === 'static') {
    out.push(`<MPD ${common} type="static" mediaPresentationDuration="${iso((endMs - origin) / 1000)}">`);
  } else {
    // No timeShiftBufferDepth: the whole range stays seekable (start-over) while it grows.
    out.push(
      `<MPD ${common} type="dynamic" availabilityStartTime="${new Date(origin).toISOString()}" publishTime="${new Date(o.now).toISOString()}"` +
        ` minimumUpdatePeriod="${iso(o.segmentSeconds)}" suggestedPresentationDelay="${iso(presentationDelay(endMs, o) / 1000)}"` +
        ` maxSegmentDuration="${iso(o.segmentSeconds * 1.5)}">`,
    );
  }
  periods.forEach((p, i) => {
    out.push(`  <Period id="p${i}" start="${iso((p.startMs - origin) / 1000)}">`);
    for (const kind of ['video', 'audio', 'text'] as const) {
      const members = tracks.filter((t) => t.kind === kind && p.tracks.has(t.name));
      if (members.length === 0) continue;
      if (kind === 'text') {
        // As the channel's own MPD has its captions (wvtt.ts: dash.js shows text only from segmented fMP4).
        out.push(
          `    <AdaptationSet contentType="text" mimeType="application/mp4" codecs="wvtt" lang="${members[0]!.language ?? 'und'}">`,
          '      <Role schemeIdUri="urn:mpeg:dash:role:2011" value="caption"/>',
        );
      } else
        out.push(
          kind === 'video'
            ? '    <AdaptationSet contentType="video" mimeType="video/mp4" segmentAlignment="true" startWithSAP="1">'
            : '    <AdaptationSet contentType="audio" mimeType="audio/mp4" segmentAlignment="true" startWithSAP="1" lang="und">',
        );
      for (const t of members) {
        const segs = p.tracks.get(t.name)!;
        const first = segs[0]!;
        const ts = t.timescale;
        // The media time shown at the Period's start: the first segment's, less how far after the start it begins.
        const offset = Math.max(0, first.decodeTime - Math.round(((first.startMs - p.startMs) * ts) / 1000));
        const attrs =
          kind === 'video'
            ? `${t.width ? ` width="${t.width}" height="${t.height}"` : ''}${t.frameRate ? ` frameRate="${Number(t.frameRate.toFixed(3))}"` : ''} sar="1:1"`
            : kind === 'audio'
              ? ' audioSamplingRate="48000"'
              : '';
        out.push(`      <Representation id="${t.name}" bandwidth="${t.bandwidth}" codecs="${t.codec}"${attrs}>`);
        if (kind === 'audio') {
          out.push('        <AudioChannelConfiguration schemeIdUri="urn:mpeg:dash:23003:3:audio_channel_configuration:2011" value="2"/>');
        }
        out.push(
          `        <SegmentTemplate timescale="${ts}" presentationTimeOffset="${offset}" initialization="${first.initUri}"` +
            ` media="${templateOf(first)}" startNumber="${first.sequence}">`,
          '          <SegmentTimeline>',
        );
        segs.forEach((s, k) => {
          const next = segs[k + 1];
          const d = next ? next.decodeTime - s.decodeTime : Math.round((s.durationMs * ts) / 1000);
          out.push(`            <S t="${s.decodeTime}" d="${d}"/>`);
        });
        out.push('          </SegmentTimeline>', '        </SegmentTemplate>', '      </Representation>');
      }
      out.push('    </AdaptationSet>');
    }
    out.push('  </Period>');
  });
  if (o.type === 'dynamic') {
    out.push(
      'clock' in o && 'direct' in o.clock
        ? `  <UTCTiming schemeIdUri="urn:mpeg:dash:utc:direct:2014" value="${new Date(o.now).toISOString()}"/>`
        : `  <UTCTiming schemeIdUri="urn:mpeg:dash:utc:http-iso:2014" value="${(o.clock as { isoUrl: string }).isoUrl}"/>`,
    );
  }
  out.push('</MPD>');
  return `${out.join('\n')}\n`;
}

/** What a master playlist says of each variant it names (`720p`, `audio`): what an MPD's Representation needs besides the init segment. */
export interface VariantInfo {
  bandwidth?: number;
  width?: number;
  height?: number;
  frameRate?: number;
}

export function masterVariants(master: string): Map<string, VariantInfo> {
  const out = new Map<string, VariantInfo>();
  const lines = master.split('\n').map((l) => l.trim());
  const attr = (line: string, name: string) => new RegExp(`[:,]${name}=("[^"]*"|[^,]*)`).exec(line)?.[1]?.replace(/"/g, '');
  lines.forEach((line, i) => {
    if (line.startsWith('#EXT-X-MEDIA:')) {
      const uri = attr(line, 'URI');
      if (uri?.endsWith('.m3u8')) out.set(uri.slice(0, -5), {});
    } else if (line.startsWith('#EXT-X-STREAM-INF:')) {
      const uri = lines[i + 1];
      if (!uri?.endsWith('.m3u8')) return;
      const [w, h] = (attr(line, 'RESOLUTION') ?? '').split('x').map(Number);
      const rate = Number(attr(line, 'FRAME-RATE'));
      out.set(uri.slice(0, -5), {
        bandwidth: Number(attr(line, 'BANDWIDTH')) || undefined,
        width: w || undefined,
        height: h || undefined,
        frameRate: rate || undefined,
      });
    }
  });
  return out;
}
