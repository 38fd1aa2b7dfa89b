/**
 * The channel's manifests, rendered from the packager's segment lists. Pure functions: the packager decides what is
 * listed, these decide how it is written (HLS: RFC 8216; DASH: ISO/IEC 23009-1 dynamic, SegmentTimeline).
 */

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
  /** How many discontinuities precede it in this track since the channel started (EXT-X-DISCONTINUITY-SEQUENCE). */
  discontinuity: number;
  /** The DASH Period it belongs to (a Period changes where the init segment's bytes change). */
  period: number;
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
}

export interface Period {
  id: number;
  /** Seconds since availabilityStartTime. */
  start: number;
}

export const segmentKey = (track: string, sequence: number) => `${track}/${sequence}.m4s`;

export function masterPlaylist(tracks: Track[]): string {
  const audio = tracks.find((t) => t.kind === 'audio');
  const video = tracks.filter((t) => t.kind === 'video');
  const lines = ['#EXTM3U', '#EXT-X-VERSION:7', '#EXT-X-INDEPENDENT-SEGMENTS'];
  if (video.length === 0 && audio) {
    lines.push(`#EXT-X-STREAM-INF:BANDWIDTH=${audio.bandwidth},CODECS="${audio.codec}"`, `${audio.name}.m3u8`);
    return `${lines.join('\n')}\n`;
  }
  if (audio) {
    lines.push(`#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="audio",NAME="audio",DEFAULT=YES,AUTOSELECT=YES,CHANNELS="2",URI="${audio.name}.m3u8"`);
  }
  for (const v of [...video].sort((a, b) => b.bandwidth - a.bandwidth)) {
    const bandwidth = v.bandwidth + (audio?.bandwidth ?? 0);
    const codecs = [v.codec, audio?.codec].filter(Boolean).join(',');
    lines.push(
      `#EXT-X-STREAM-INF:BANDWIDTH=${bandwidth},RESOLUTION=${v.width}x${v.height},FRAME-RATE=${v.frameRate!.toFixed(3)},CODECS="${codecs}"${audio ? ',AUDIO="audio"' : ''}`,
      `${v.name}.m3u8`,
    );
  }
  return `${lines.join('\n')}\n`;
}

/** A sliding window over the track's segments, with a discontinuity and a new map where the run changes. */
export function mediaPlaylist(track: Track, windowSegments: number, segmentSeconds: number, availabilityStart: number): string {
  const listed = track.segments.slice(-windowSegments);
  const target = Math.max(Math.ceil(segmentSeconds), ...listed.map((s) => Math.round(s.duration)));
  const first = listed[0];
  const lines = [
    '#EXTM3U',
    '#EXT-X-VERSION:7',
    `#EXT-X-TARGETDURATION:${target}`,
    `#EXT-X-MEDIA-SEQUENCE:${first?.sequence ?? 0}`,
    `#EXT-X-DISCONTINUITY-SEQUENCE:${first?.discontinuity ?? 0}`,
    '#EXT-X-INDEPENDENT-SEGMENTS',
  ];
  let run: number | undefined;
  for (const s of listed) {
    if (run !== undefined && s.run !== run) lines.push('#EXT-X-DISCONTINUITY');
    if (s.run !== run) lines.push(`#EXT-X-MAP:URI="${s.initKey}"`);
    run = s.run;
    const at = availabilityStart + (s.decodeTime / track.timescale!) * 1000;
    lines.push(`#EXT-X-PROGRAM-DATE-TIME:${new Date(at).toISOString()}`, `#EXTINF:${s.duration.toFixed(6)},`, segmentKey(track.name, s.sequence));
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
}

/**
 * A dynamic MPD over the same CMAF segments as HLS. Each Period lists only its own segments of the window; a Period
 * changes only where a track's init segment changes, so the slate and the live input share one Period when the
 * encoder produced byte-identical init segments for both.
 */
export function dashManifest(o: MpdOptions): string {
  const windowSeconds = o.windowSegments * o.segmentSeconds;
  const listed = new Map(o.tracks.map((t) => [t.name, t.segments.slice(-o.windowSegments)]));
  const periodIds = new Set([...listed.values()].flatMap((segs) => segs.map((s) => s.period)));
  const periods = o.periods.filter((p) => periodIds.has(p.id));
  const out = [
    '<?xml version="1.0" encoding="utf-8"?>',
    `<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" profiles="urn:mpeg:dash:profile:isoff-live:2011,http://dashif.org/guidelines/dash-if-simple" type="dynamic"` +
      ` availabilityStartTime="${new Date(o.availabilityStart).toISOString()}" publishTime="${new Date(o.now).toISOString()}"` +
      ` minimumUpdatePeriod="${iso(o.segmentSeconds)}" minBufferTime="${iso(o.segmentSeconds * 2)}"` +
      ` timeShiftBufferDepth="${iso(windowSeconds)}" suggestedPresentationDelay="${iso(o.segmentSeconds * 3)}"` +
      ` maxSegmentDuration="${iso(o.segmentSeconds * 1.5)}">`,
  ];
  for (const p of periods) {
    out.push(`  <Period id="p${p.id}" start="${iso(p.start)}">`);
    for (const kind of ['video', 'audio'] as const) {
      const tracks = o.tracks.filter((t) => t.kind === kind && (listed.get(t.name) ?? []).some((s) => s.period === p.id));
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
            ` initialization="${segs[0]!.initKey}" media="${t.name}/$Number$.m4s" startNumber="${segs[0]!.sequence}">`,
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
    out.push('  </Period>');
  }
  out.push(`  <UTCTiming schemeIdUri="urn:mpeg:dash:utc:direct:2014" value="${new Date(o.now).toISOString()}"/>`, '</MPD>');
  return `${out.join('\n')}\n`;
}
