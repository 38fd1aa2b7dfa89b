/** A finished segment of one run, as ffmpeg lists it. */
export interface Entry {
  duration: number;
  uri: string;
}

/** ffmpeg's per-variant playlist: the init segment's name and every finished segment, in order. */
export function parseVariant(text: string): { map?: string; entries: Entry[] } {
  let map: string | undefined;
  const entries: Entry[] = [];
  let duration: number | undefined;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line.startsWith('#EXT-X-MAP:')) map = /URI="([^"]+)"/.exec(line)?.[1];
    else if (line.startsWith('#EXTINF:')) duration = Number.parseFloat(line.slice(8));
    else if (line && !line.startsWith('#') && duration !== undefined) {
      entries.push({ duration, uri: line });
      duration = undefined;
    }
  }
  return { map, entries };
}
