/**
 * HLS playlists of a time range of a live channel's timeline (a recording, an event's catch-up): every segment of the
 * range from the first, nothing ever removed from the top. Pure: the caller decides which segments and their URIs.
 */

export interface RangeSegment {
  uri: string;
  /** URI of the init segment it needs. */
  initUri: string;
  /** Wall-clock time of its first frame, ms. */
  startMs: number;
  durationMs: number;
  /** The encoder run that made it: a change of run is a discontinuity (input lost or back, channel restarted). */
  run: number;
}

export interface RangePlaylistOptions {
  /**
   * `EVENT`: the range may still grow (segments are only appended; `ended` adds the end tag). `VOD`: a finished
   * copy that never changes.
   */
  type: 'EVENT' | 'VOD';
  ended: boolean;
  /** The channel's segment duration: the target duration is never below it, so it does not change as the range grows. */
  segmentSeconds: number;
}

export function rangeMediaPlaylist(segments: RangeSegment[], o: RangePlaylistOptions): string {
  const target = Math.max(Math.ceil(o.segmentSeconds), ...segments.map((s) => Math.ceil(s.durationMs / 1000)));
  const lines = [
    '#EXTM3U',
    '#EXT-X-VERSION:7',
    `#EXT-X-TARGETDURATION:${target}`,
    '#EXT-X-MEDIA-SEQUENCE:0',
    `#EXT-X-PLAYLIST-TYPE:${o.type}`,
    '#EXT-X-INDEPENDENT-SEGMENTS',
  ];
  let run: number | undefined;
  let init: string | undefined;
  for (const s of segments) {
    if (run !== undefined && s.run !== run) lines.push('#EXT-X-DISCONTINUITY');
    if (s.run !== run || s.initUri !== init) lines.push(`#EXT-X-MAP:URI="${s.initUri}"`);
    run = s.run;
    init = s.initUri;
    lines.push(`#EXT-X-PROGRAM-DATE-TIME:${new Date(s.startMs).toISOString()}`, `#EXTINF:${(s.durationMs / 1000).toFixed(3)},`, s.uri);
  }
  if (o.ended) lines.push('#EXT-X-ENDLIST');
  return `${lines.join('\n')}\n`;
}

/** The variant playlists a master playlist names (`720p.m3u8`, `audio.m3u8`): the tracks of the range. */
export function masterTracks(master: string): string[] {
  const names = new Set<string>();
  for (const line of master.split('\n')) {
    const uri = line.startsWith('#EXT-X-MEDIA:') ? /URI="([^"]+)"/.exec(line)?.[1] : !line.startsWith('#') ? line.trim() : undefined;
    if (uri && uri.endsWith('.m3u8')) names.add(uri.slice(0, -'.m3u8'.length));
  }
  return [...names];
}

/**
 * A range's WebVTT playlist. Its segments are the audio track's (same numbers, spans and discontinuities): each is
 * the WebVTT file of the same number, or, where the recognizer produced none (a channel stopped before its captions
 * caught up, a failed write, captions still to come when the range ended), an `EXT-X-GAP` of the same span, so that
 * the captions after it stay on the video's times (players take a WebVTT playlist's times from its EXTINFs). While the
 * range grows, it lists up to the last caption published (captions come in order, seconds after their audio): a
 * segment missing before that one is a gap for good; once the range is over, every segment without captions is one.
 */
export function rangeSubtitlePlaylist(
  audio: (Omit<RangeSegment, 'uri' | 'initUri'> & { sequence: number })[],
  /** The sequence numbers that have captions, and the URI of a number's WebVTT file. */
  captions: { sequences: Set<number>; uriOf: (sequence: number) => string },
  o: RangePlaylistOptions,
): string {
  const last = Math.max(-1, ...captions.sequences);
  const listed = o.ended ? audio : audio.filter((s) => s.sequence <= last);
  const target = Math.max(Math.ceil(o.segmentSeconds), ...listed.map((s) => Math.ceil(s.durationMs / 1000)));
  const lines = ['#EXTM3U', '#EXT-X-VERSION:8', `#EXT-X-TARGETDURATION:${target}`, '#EXT-X-MEDIA-SEQUENCE:0', `#EXT-X-PLAYLIST-TYPE:${o.type}`];
  let run: number | undefined;
  for (const s of listed) {
    if (run !== undefined && s.run !== run) lines.push('#EXT-X-DISCONTINUITY');
    run = s.run;
    lines.push(`#EXT-X-PROGRAM-DATE-TIME:${new Date(s.startMs).toISOString()}`);
    // A gap keeps its URI (RFC 8216bis); players do not load it.
    if (!captions.sequences.has(s.sequence)) lines.push('#EXT-X-GAP');
    lines.push(`#EXTINF:${(s.durationMs / 1000).toFixed(3)},`, captions.uriOf(s.sequence));
  }
  if (o.ended) lines.push('#EXT-X-ENDLIST');
  return `${lines.join('\n')}\n`;
}

const SUBTITLE_MEDIA = '#EXT-X-MEDIA:TYPE=SUBTITLES';

/** The master playlist's caption rendition (`#EXT-X-MEDIA:TYPE=SUBTITLES,...`), if it names one. */
export const captionRendition = (master: string): string | undefined => master.split('\n').find((line) => line.startsWith(SUBTITLE_MEDIA));

/**
 * A range's master playlist: the channel's variants, with the caption rendition `captions` (every variant naming its
 * group) when the range has captions, and without any otherwise (a channel captioned now may not have been during the
 * range, and the other way round).
 */
export function rangeMaster(master: string, captions: string | undefined): string {
  const group = captions && /GROUP-ID="([^"]*)"/.exec(captions)?.[1];
  const lines: string[] = [];
  let placed = !captions;
  for (const line of master.split('\n')) {
    if (line.startsWith(SUBTITLE_MEDIA)) continue;
    // The rendition goes first of the renditions and variants, where the live master playlist has it.
    if (!placed && (line.startsWith('#EXT-X-MEDIA:') || line.startsWith('#EXT-X-STREAM-INF:'))) {
      lines.push(captions!);
      placed = true;
    }
    lines.push(line.startsWith('#EXT-X-STREAM-INF:') ? line.replace(/,SUBTITLES="[^"]*"/, '') + (group ? `,SUBTITLES="${group}"` : '') : line);
  }
  return lines.join('\n');
}
