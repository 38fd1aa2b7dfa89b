/**
 * The chunked path's HLS playlists (docs/decisions/vod-chunked.md): every chunk writes the segments of its own stretch
 * of the source, and the output's media playlists are laid together from what the chunks have stored. A player gets
 * the contiguous prefix: every finished chunk from the first on, and the segments so far of the first unfinished one.
 */

export interface Segment {
  /** Relative to its media playlist, as stored (`c0003_00002.ts`; `chunk-0-51200.m4s` for fMP4). */
  uri: string;
  durationS: number;
  /** fMP4 (DASH, CMAF): the segment's start and duration in its representation's timescale, as its timeline lists them. */
  t?: number;
  d?: number;
}

/**
 * A part's stored segments by media playlist (its path in the output directory, `hls/720p/index.m3u8`); for DASH and
 * CMAF by the representation's media playlist as CMAF names it (`dash/media_0.m3u8`), whether or not HLS serves it.
 */
export type PartPlaylists = Record<string, Segment[]>;

/** The media playlists (or representations) of an output, keys of `PartPlaylists`: the video rungs and the audio apart. */
export interface ChunkTracks {
  video: string[];
  audio: string[];
}

export interface ChunkPart {
  playlists: PartPlaylists;
  /** Finished: its lists are whole, and the next chunk's segments follow them. */
  done: boolean;
}

export interface ComposedPlaylists {
  /** Media playlist texts by path in the output directory. */
  playlists: Record<string, string>;
  /** Every playlist the master names has a segment: a player can start. */
  playable: boolean;
}

/** The media playlists a master names (relative to it), video rungs and audio renditions apart. */
function namedBy(master: string): ChunkTracks {
  const lines = master.split('\n').map((l) => l.trim());
  return {
    video: lines.filter((l) => l && !l.startsWith('#')),
    audio: lines.filter((l) => l.startsWith('#EXT-X-MEDIA:') && l.includes('TYPE=AUDIO')).flatMap((l) => /URI="([^"]+)"/.exec(l)?.[1] ?? []),
  };
}

/** Appends a new part's segments to what is recorded: a retried part lists its segments again from the first. */
export function mergeSegments(recorded: PartPlaylists, now: PartPlaylists): PartPlaylists {
  const merged = { ...recorded };
  for (const [path, segments] of Object.entries(now)) if (segments.length >= (merged[path]?.length ?? 0)) merged[path] = segments;
  return merged;
}

const sum = (segments: Segment[]) => segments.reduce((s, x) => s + x.durationS, 0);

/**
 * What a player may be given of the output's tracks (`tracks`, keys of the parts' playlists), from its chunks in source
 * order (the first also holds the audio, encoded once over the whole source): the contiguous prefix of the video while
 * it encodes, everything when `final`. The audio, far ahead of the video, is listed only as far as the video is, so
 * that a player never sees one track end before the other. `playable`: every track has a segment.
 */
export function contiguousSegments(tracks: ChunkTracks, parts: ChunkPart[], final = false): { lists: Map<string, Segment[]>; playable: boolean } {
  const video = new Map<string, Segment[]>();
  for (const path of tracks.video) {
    const segments: Segment[] = [];
    for (const part of parts) {
      segments.push(...(part.playlists[path] ?? []));
      if (!part.done) break;
    }
    video.set(path, segments);
  }
  const videoEnd = Math.min(...[...video.values()].map(sum));
  const lists = new Map(video);
  for (const path of tracks.audio) {
    const all = parts[0]?.playlists[path] ?? [];
    let start = 0;
    lists.set(
      path,
      final
        ? all
        : all.filter((s) => {
            const listed = start < videoEnd;
            start += s.durationS;
            return listed;
          }),
    );
  }
  return { lists, playable: [...lists.values()].every((s) => s.length > 0) };
}

/**
 * The output's HLS media playlists from its chunks (`contiguousSegments`): EVENT playlists while it encodes, VOD ones
 * when `final`. `dir` is the streaming folder the master's URIs are relative to.
 */
export function composeChunkedPlaylists(master: string, dir: string, parts: ChunkPart[], segmentSeconds: number, final = false): ComposedPlaylists {
  const named = namedBy(master);
  const { lists, playable } = contiguousSegments(
    { video: named.video.map((uri) => `${dir}/${uri}`), audio: named.audio.map((uri) => `${dir}/${uri}`) },
    parts,
    final,
  );
  return { playlists: playlistTexts(lists, segmentSeconds, final), playable };
}

/** Media playlist texts by path; `init` names an fMP4 playlist's initialisation segment (CMAF). */
export function playlistTexts(lists: Map<string, Segment[]>, segmentSeconds: number, final: boolean, init?: (path: string) => string): Record<string, string> {
  const playlists: Record<string, string> = {};
  for (const [path, segments] of lists) playlists[path] = mediaPlaylistText(segments, segmentSeconds, final, init?.(path));
  return playlists;
}

function mediaPlaylistText(segments: Segment[], segmentSeconds: number, final: boolean, init?: string): string {
  // The target duration may not change while the playlist grows (RFC 8216): the preset's, unless a segment is longer.
  const target = Math.max(Math.ceil(segmentSeconds), ...segments.map((s) => Math.round(s.durationS)));
  const lines = [
    '#EXTM3U',
    `#EXT-X-VERSION:${init ? 7 : 6}`,
    `#EXT-X-TARGETDURATION:${target}`,
    '#EXT-X-MEDIA-SEQUENCE:0',
    `#EXT-X-PLAYLIST-TYPE:${final ? 'VOD' : 'EVENT'}`,
    '#EXT-X-INDEPENDENT-SEGMENTS',
    ...(init ? [`#EXT-X-MAP:URI="${init}"`] : []),
    ...segments.flatMap((s) => [`#EXTINF:${s.durationS.toFixed(6)},`, s.uri]),
    ...(final ? ['#EXT-X-ENDLIST'] : []),
  ];
  return `${lines.join('\n')}\n`;
}
