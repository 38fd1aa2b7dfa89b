/**
 * The segments an MPD from ffmpeg's DASH muxer (or the chunked path's, `chunkMpd.ts`) lists: per Representation its
 * init segment and one media segment per SegmentTimeline entry (`r` repeats), named through `$RepresentationID$` and
 * `$Number%05d$` (numbered from `startNumber`) or `$Time$`.
 */
export interface RepresentationTimeline {
  id: string;
  timescale: number;
  init?: string;
  /** In timeline order: each media segment's file, and its start and duration in `timescale`. */
  segments: { file: string; t: number; d: number }[];
}

const attribute = (attrs: string, name: string) => new RegExp(`\\b${name}="([^"]*)"`).exec(attrs)?.[1];

export function mpdTimelines(xml: string): RepresentationTimeline[] {
  const timelines: RepresentationTimeline[] = [];
  for (const rep of xml.matchAll(/<Representation\b[^>]*\bid="([^"]+)"[^>]*>([\s\S]*?)<\/Representation>/g)) {
    const [, id, body] = rep;
    const template = /<SegmentTemplate\b([^>]*)>/.exec(body)?.[1];
    if (!template) continue;
    const fill = (t: string, n?: number, time?: number) =>
      t
        .replace(/\$RepresentationID\$/g, id)
        .replace(/\$Number(?:%0(\d+)d)?\$/g, (_, w?: string) => String(n ?? 0).padStart(Number(w ?? 0), '0'))
        .replace(/\$Time\$/g, String(time ?? 0));
    const init = attribute(template, 'initialization');
    const media = attribute(template, 'media');
    const segments: RepresentationTimeline['segments'] = [];
    let number = Number(attribute(template, 'startNumber') ?? 1);
    let at = 0;
    for (const s of body.matchAll(/<S\b([^>]*)\/?>/g)) {
      const t = attribute(s[1], 't');
      if (t !== undefined) at = Number(t);
      const d = Number(attribute(s[1], 'd'));
      for (let k = 0; k <= Number(attribute(s[1], 'r') ?? 0); k++, at += d) segments.push({ file: media ? fill(media, number++, at) : '', t: at, d });
    }
    timelines.push({ id, timescale: Number(attribute(template, 'timescale') ?? 1), init: init && fill(init), segments: media ? segments : [] });
  }
  return timelines;
}
