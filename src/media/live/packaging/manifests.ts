/**
 * The channel's manifests, rendered from the packager's segment lists. Pure functions: the packager decides what is
 * listed, these decide how it is written (HLS: RFC 8216; DASH: ISO/IEC 23009-1 dynamic, SegmentTimeline).
 */
import { discontinuityTags } from './discontinuity.ts';
import { subtitleMedia, type SubtitleTrack } from '../captions/subtitles.ts';
import { subtitleAdaptationSet } from '../captions/wvtt.ts';

export interface PublishedSegment {
  sequence: number;
  /** Seconds, as ffmpeg's playlist says (EXTINF). */
  duration: number;
  /** baseMediaDecodeTime, in the track's timescale. */
  decodeTime: number;
  /** The run that encoded it: a new run is a discontinuity with a new init segment. */
  run: number;
  /** Key of the init segment this segment needs, relative to the channel prefix. */
  initKey: string;
  /**
   * How many discontinuities precede it in this track since the channel started (EXT-X-DISCONTINUITY-SEQUENCE): the
   * playlists write `EXT-X-DISCONTINUITY` where it changes.
   */
  discontinuity: number;
  /** The DASH Period it belongs to (a Period changes where the init segment's bytes change). */
  period: number;
  /** Low latency: the parts it was published as, in order (`partKey`); absent for whole segments. */
  parts?: Part[];
}

/** A partial segment (LL-HLS `EXT-X-PART`): one CMAF chunk. */
export interface Part {
  duration: number;
  /** Starts with a key frame. */
  independent: boolean;
}

/** Low latency: the segment being written, whose parts are already published. */
export interface OpenSegment extends Omit<PublishedSegment, 'duration' | 'parts'> {
  parts: Part[];
  /** It has its full length: the next part will be the next segment's first (the preload hint names that one). */
  complete?: boolean;
}

export interface Track {
  name: string; // `360p`, `audio`
  kind: 'video' | 'audio';
  width?: number;
  height?: number;
  frameRate?: number;
  bandwidth: number;
  codec?: string;
  timescale?: number;
  segments: PublishedSegment[];
  open?: OpenSegment;
  /**
   * A forensic watermark variant (`wmA`, `wmB`): published with its own media playlist for the watermarking
   * redirector, never named in the master playlist or the MPD.
   */
  forensic?: boolean;
}

export interface Period {
  id: number;
  /** Seconds since availabilityStartTime. */
  start: number;
}

export const segmentKey = (track: string, sequence: number) => `${track}/${sequence}.m4s`;
export const partKey = (track: string, sequence: number, part: number) => `${track}/${sequence}.${part}.m4s`;

/** Low-latency rendering of a media playlist (RFC 8216bis: parts, preload hint, server control, delta updates). */
export interface LowLatencyPlaylist {
  /** PART-TARGET, seconds: no part is longer. */
  partTarget: number;
  /** A delta update (`_HLS_skip=YES`): the oldest segments are replaced by `EXT-X-SKIP`. */
  skip?: boolean;
}

/** Complete segments that still list their parts: about three target durations, as RFC 8216bis asks. */
export const PART_SEGMENTS = 3;
/** CAN-SKIP-UNTIL, in target durations (RFC 8216bis: at least six). */
const SKIP_TARGETS = 6;
/** PART-HOLD-BACK, in part targets (RFC 8216bis: at least two, three recommended). */
const PART_HOLD_BACK = 3;

/** The audio rendition of a master playlist: group `audio`, which every video variant names. */
export const audioMedia = (audio: Track) =>
  `#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="audio",NAME="audio",DEFAULT=YES,AUTOSELECT=YES,CHANNELS="2",URI="${audio.name}.m3u8"`;

export function masterPlaylist(tracks: Track[], subtitles?: SubtitleTrack): string {
  const audio = tracks.find((t) => t.kind === 'audio');
  const video = tracks.filter((t) => t.kind === 'video' && !t.forensic);
  const lines = ['#EXTM3U', '#EXT-X-VERSION:7', '#EXT-X-INDEPENDENT-SEGMENTS'];
  if (subtitles) lines.push(subtitleMedia(subtitles));
  const subs = subtitles ? ',SUBTITLES="subs"' : '';
  if (video.length === 0 && audio) {
    lines.push(`#EXT-X-STREAM-INF:BANDWIDTH=${audio.bandwidth},CODECS="${audio.codec}"${subs}`, `${audio.name}.m3u8`);
    return `${lines.join('\n')}\n`;
  }
  if (audio) {
    lines.push(audioMedia(audio));
  }
  for (const v of [...video].sort((a, b) => b.bandwidth - a.bandwidth)) {
    const bandwidth = v.bandwidth + (audio?.bandwidth ?? 0);
    const codecs = [v.codec, audio?.codec].filter(Boolean).join(',');
    lines.push(
      `#EXT-X-STREAM-INF:BANDWIDTH=${bandwidth},RESOLUTION=${v.width}x${v.height},FRAME-RATE=${v.frameRate!.toFixed(3)},CODECS="${codecs}"${audio ? ',AUDIO="audio"' : ''}${subs}`,
      `${v.name}.m3u8`,
    );
  }
  return `${lines.join('\n')}\n`;
}

/**
 * A sliding window over the track's segments, with a discontinuity and a new map where the run changes. Low latency
 * adds the parts of the last segments and of the one being written, a preload hint for the next part, and the server
 * control that tells players they may block on reloads and ask for delta updates.
 */
export function mediaPlaylist(
  track: Track,
  windowSegments: number,
  segmentSeconds: number,
  availabilityStart: number,
  ll?: LowLatencyPlaylist,
  /** Seconds behind the live edge players should play (live captions: `captionHoldBack`); not with low latency. */
  holdBack?: number,
  /** The channel stopped: the playlist ends (`EXT-X-ENDLIST`), so players that watch it play to its end and stop. */
  ended = false,
): string {
  const listed = track.segments.slice(-windowSegments);
  const target = Math.max(Math.ceil(segmentSeconds), ...listed.map((s) => Math.round(s.duration)));
  const first = listed[0] ?? track.open;
  const lines = ['#EXTM3U', `#EXT-X-VERSION:${ll ? 9 : 7}`, `#EXT-X-TARGETDURATION:${target}`];
  if (ll) {
    lines.push(
      `#EXT-X-SERVER-CONTROL:CAN-BLOCK-RELOAD=YES,CAN-SKIP-UNTIL=${(target * SKIP_TARGETS).toFixed(1)},PART-HOLD-BACK=${(ll.partTarget * PART_HOLD_BACK).toFixed(3)}`,
      `#EXT-X-PART-INF:PART-TARGET=${ll.partTarget.toFixed(3)}`,
    );
  } else if (holdBack) {
    // RFC 8216bis: HOLD-BACK is at least three target durations.
    lines.push(`#EXT-X-SERVER-CONTROL:HOLD-BACK=${Math.max(holdBack, 3 * target).toFixed(1)}`);
  }
  lines.push(`#EXT-X-MEDIA-SEQUENCE:${first?.sequence ?? 0}`, `#EXT-X-DISCONTINUITY-SEQUENCE:${first?.discontinuity ?? 0}`, '#EXT-X-INDEPENDENT-SEGMENTS');
  let skipped = 0;
  if (ll?.skip) {
    // Only segments that end at least CAN-SKIP-UNTIL before the end of the playlist may be skipped.
    let after = listed.reduce((a, s) => a + s.duration, 0) + (track.open?.parts.reduce((a, p) => a + p.duration, 0) ?? 0);
    while (skipped < listed.length - 1 && after - listed[skipped]!.duration >= target * SKIP_TARGETS) after -= listed[skipped++]!.duration;
    lines.push(`#EXT-X-SKIP:SKIPPED-SEGMENTS=${skipped}`);
  }
  let previous: Omit<PublishedSegment, 'duration'> | undefined = skipped > 0 ? listed[skipped - 1] : undefined;
  let mapped = false;
  const begin = (s: Omit<PublishedSegment, 'duration'>) => {
    if (previous) lines.push(...discontinuityTags(previous.discontinuity, s.discontinuity));
    if (s.initKey !== previous?.initKey || s.discontinuity !== previous.discontinuity || !mapped) lines.push(`#EXT-X-MAP:URI="${s.initKey}"`);
    mapped = true;
    previous = s;
    const at = availabilityStart + (s.decodeTime / track.timescale!) * 1000;
    lines.push(`#EXT-X-PROGRAM-DATE-TIME:${new Date(at).toISOString()}`);
  };
  const parts = (s: { sequence: number; parts?: Part[] }) =>
    (s.parts ?? []).forEach((p, i) =>
      lines.push(`#EXT-X-PART:DURATION=${p.duration.toFixed(5)},URI="${partKey(track.name, s.sequence, i)}"${p.independent ? ',INDEPENDENT=YES' : ''}`),
    );
  listed.forEach((s, i) => {
    if (i < skipped) return;
    begin(s);
    if (ll && i >= listed.length - PART_SEGMENTS) parts(s);
    lines.push(`#EXTINF:${s.duration.toFixed(6)},`, segmentKey(track.name, s.sequence));
  });
  if (ended) {
    // Nothing more is coming: no open segment, no preload hint (the last run's open segment was closed at its end).
    lines.push('#EXT-X-ENDLIST');
  } else if (ll) {
    const open = track.open;
    if (open && open.parts.length > 0) {
      begin(open);
      parts(open);
    }
    const next =
      open && !open.complete
        ? { sequence: open.sequence, part: open.parts.length }
        : { sequence: (open?.sequence ?? listed.at(-1)?.sequence ?? -1) + 1, part: 0 };
    lines.push(`#EXT-X-PRELOAD-HINT:TYPE=PART,URI="${partKey(track.name, next.sequence, next.part)}"`);
  }
  return `${lines.join('\n')}\n`;
}

const iso = (seconds: number) => `PT${Number(seconds.toFixed(3))}S`;

export interface MpdOptions {
  tracks: Track[];
  periods: Period[];
  windowSegments: number;
  segmentSeconds: number;
  availabilityStart: number; // ms
  now: number; // ms
  /** Low-latency DASH: segments may be requested this long (a part) after they begin; the delivery streams them. */
  partSeconds?: number;
  /** Live captions: a text AdaptationSet of their wvtt segments in each Period. */
  subtitles?: SubtitleTrack;
  /** Seconds behind the live edge players should play (live captions: `captionHoldBack`); three segments otherwise. */
  presentationDelay?: number;
  /**
   * The channel stopped: a static MPD of the window, so players that watch it play to its end (`ended`). Presentation
   * times stay those of the dynamic MPD (a player that was watching keeps its position); the first Period starts at its
   * first listed segment and `mediaPresentationDuration` ends at the last one.
   */
  ended?: boolean;
}

/**
 * A dynamic MPD over the same CMAF segments as HLS. Each Period lists only its own segments of the window; a Period
 * changes only where a track's init segment changes, so the slate and the live input share one Period when the
 * encoder produced byte-identical init segments for both.
 */
export function dashManifest(o: MpdOptions): string {
  const windowSeconds = o.windowSegments * o.segmentSeconds;
  // Low latency lists the segment being written too (its duration is the nominal one until it is complete).
  const listed = new Map(
    o.tracks.map((t) => {
      const segs: PublishedSegment[] = t.segments.slice(-o.windowSegments);
      if (o.partSeconds && !o.ended && t.open && t.open.parts.length > 0)
        segs.push({ ...t.open, duration: o.segmentSeconds, parts: undefined, complete: undefined } as PublishedSegment);
      return [t.name, segs];
    }),
  );
  const periodIds = new Set([...listed.values()].flatMap((segs) => segs.map((s) => s.period)));
  let periods = o.periods.filter((p) => periodIds.has(p.id));
  const profiles = 'urn:mpeg:dash:profile:isoff-live:2011,http://dashif.org/guidelines/dash-if-simple';
  const out = ['<?xml version="1.0" encoding="utf-8"?>'];
  if (o.ended) {
    const seconds = (t: Track, at: number) => at / t.timescale!;
    const spans = o.tracks
      .filter((t) => !t.forensic && (listed.get(t.name) ?? []).length > 0)
      .map((t) => {
        const segs = listed.get(t.name)!;
        return { first: seconds(t, segs[0]!.decodeTime), end: seconds(t, segs.at(-1)!.decodeTime) + segs.at(-1)!.duration };
      });
    const first = Math.min(...spans.map((s) => s.first));
    const end = Math.max(...spans.map((s) => s.end));
    // The window has slid past the first Period's start: it starts where its first listed segment does.
    periods = periods.map((p, i) => (i === 0 ? { ...p, start: Math.max(p.start, first) } : p));
    out.push(
      `<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" profiles="${profiles}" type="static"` +
        ` mediaPresentationDuration="${iso(end)}" minBufferTime="${iso(o.segmentSeconds * 2)}" maxSegmentDuration="${iso(o.segmentSeconds * 1.5)}">`,
    );
  } else {
    out.push(
      `<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" profiles="${profiles}" type="dynamic"` +
        ` availabilityStartTime="${new Date(o.availabilityStart).toISOString()}" publishTime="${new Date(o.now).toISOString()}"` +
        ` minimumUpdatePeriod="${iso(o.segmentSeconds)}" minBufferTime="${iso(o.segmentSeconds * 2)}"` +
        ` timeShiftBufferDepth="${iso(windowSeconds)}" suggestedPresentationDelay="${iso(Math.max(o.presentationDelay ?? 0, o.segmentSeconds * 3))}"` +
        ` maxSegmentDuration="${iso(o.segmentSeconds * 1.5)}">`,
    );
  }
  if (o.partSeconds && !o.ended) {
    // dash.js reads its live delay from here: a part target or two behind the edge, as LL-HLS players hold back.
    const target = Math.round(o.partSeconds * 3000 + 500);
    out.push(`  <ServiceDescription id="0"><Latency target="${target}" min="${Math.round(o.partSeconds * 2000)}" max="${target * 3}"/></ServiceDescription>`);
  }
  for (const p of periods) {
    out.push(`  <Period id="p${p.id}" start="${iso(p.start)}">`);
    for (const kind of ['video', 'audio'] as const) {
      const tracks = o.tracks.filter((t) => t.kind === kind && !t.forensic && (listed.get(t.name) ?? []).some((s) => s.period === p.id));
      if (tracks.length === 0) continue;
      out.push(
        kind === 'video'
          ? '    <AdaptationSet contentType="video" mimeType="video/mp4" segmentAlignment="true" startWithSAP="1">'
          : '    <AdaptationSet contentType="audio" mimeType="audio/mp4" segmentAlignment="true" startWithSAP="1" lang="und">',
      );
      for (const t of tracks) {
        const segs = listed.get(t.name)!.filter((s) => s.period === p.id);
        const attrs = kind === 'video' ? ` width="${t.width}" height="${t.height}" frameRate="${t.frameRate}" sar="1:1"` : ' audioSamplingRate="48000"';
        out.push(`      <Representation id="${t.name}" bandwidth="${t.bandwidth}" codecs="${t.codec}"${attrs}>`);
        if (kind === 'audio') {
          out.push('        <AudioChannelConfiguration schemeIdUri="urn:mpeg:dash:23003:3:audio_channel_configuration:2011" value="2"/>');
        }
        const ts = t.timescale!;
        out.push(
          `        <SegmentTemplate timescale="${ts}" presentationTimeOffset="${Math.round(p.start * ts)}"` +
            ` initialization="${segs[0]!.initKey}" media="${t.name}/$Number$.m4s" startNumber="${segs[0]!.sequence}"` +
            (o.partSeconds && !o.ended ? ` availabilityTimeOffset="${(o.segmentSeconds - o.partSeconds).toFixed(3)}" availabilityTimeComplete="false">` : '>'),
          '          <SegmentTimeline>',
        );
        segs.forEach((s, i) => {
          // Within a run the next segment's decode time is exact; ffmpeg's EXTINF is rounded.
          const next = segs[i + 1];
          const d = next && next.run === s.run ? next.decodeTime - s.decodeTime : Math.round(s.duration * ts);
          out.push(`            <S t="${s.decodeTime}" d="${d}"/>`);
        });
        out.push('          </SegmentTimeline>', '        </SegmentTemplate>', '      </Representation>');
      }
      out.push('    </AdaptationSet>');
    }
    if (o.subtitles) out.push(...subtitleAdaptationSet(o.subtitles, o.subtitles.segments().slice(-o.windowSegments), p));
    out.push('  </Period>');
  }
  if (!o.ended) out.push(`  <UTCTiming schemeIdUri="urn:mpeg:dash:utc:direct:2014" value="${new Date(o.now).toISOString()}"/>`);
  out.push('</MPD>');
  return `${out.join('\n')}\n`;
}
