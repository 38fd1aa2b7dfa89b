/**
 * The chunked path's HLS playlists (docs/decisions/vod-chunked.md): every chunk writes the segments of its own stretch
 * of the source, and the output's media playlists are laid together from what the chunks have stored. A player gets
 * the contiguous prefix: every finished chunk from the first on, and the segments so far of the first unfinished one.
 */

export interface Segment {
  /** Relative to its media playlist, as ffmpeg names it (`c0003_00002.ts`). */
  uri: string;
  durationS: number;
}

/** A part's stored segments by media playlist (its path in the output directory, `hls/720p/index.m3u8`). */
export type PartPlaylists = Record<string, Segment[]>;

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
function namedBy(master: string): { video: string[]; audio: string[] } {
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
 * The output's media playlists from its chunks (in source order; the first also holds the audio, encoded once over the
 * whole source): EVENT playlists of the contiguous prefix while it encodes, VOD ones when `final`. The audio, far
 * ahead of the video, is listed only as far as the video is, so that a player never sees one track end before the
 * other.
 */
export function composeChunkedPlaylists(master: string, dir: string, parts: ChunkPart[], segmentSeconds: number, final = false): ComposedPlaylists {
  const named = namedBy(master);
  const video = new Map<string, Segment[]>();
  for (const uri of named.video) {
    const path = `${dir}/${uri}`;
    const segments: Segment[] = [];
    for (const part of parts) {
      segments.push(...(part.playlists[path] ?? []));
      if (!part.done) break;
    }
    video.set(path, segments);
  }
  const videoEnd = Math.min(...[...video.values()].map(sum));
  const audio = new Map<string, Segment[]>();
  for (const uri of named.audio) {
    const path = `${dir}/${uri}`;
    const all = parts[0]?.playlists[path] ?? [];
    let start = 0;
    audio.set(
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
  const playlists: Record<string, string> = {};
  for (const [path, segments] of [...video, ...audio]) playlists[path] = mediaPlaylistText(segments, segmentSeconds, final);
  return { playlists, playable: [...video.values(), ...audio.values()].every((s) => s.length > 0) };
}

function mediaPlaylistText(segments: Segment[], segmentSeconds: number, final: boolean): string {
  // The target duration may not change while the playlist grows (RFC 8216): the preset's, unless a segment is longer.
  const target = Math.max(Math.ceil(segmentSeconds), ...segments.map((s) => Math.round(s.durationS)));
  const lines = [
    '#EXTM3U',
    '#EXT-X-VERSION:6',
    `#EXT-X-TARGETDURATION:${target}`,
    '#EXT-X-MEDIA-SEQUENCE:0',
    `#EXT-X-PLAYLIST-TYPE:${final ? 'VOD' : 'EVENT'}`,
    '#EXT-X-INDEPENDENT-SEGMENTS',
    ...segments.flatMap((s) => [`#EXTINF:${s.durationS.toFixed(6)},`, s.uri]),
    ...(final ? ['#EXT-X-ENDLIST'] : []),
  ];
  return `${lines.join('\n')}\n`;
}
