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
 * A range's master playlist: the channel's without its live captions. The timeline keeps audio and video segments
 * only, so a range has no captions to offer (and a caption track there would never reach the range's end).
 */
export function withoutCaptions(master: string): string {
  return master
    .split('\n')
    .filter((line) => !line.startsWith('#EXT-X-MEDIA:TYPE=SUBTITLES'))
    .map((line) => (line.startsWith('#EXT-X-STREAM-INF:') ? line.replace(/,SUBTITLES="[^"]*"/, '') : line))
    .join('\n');
}
