import type { Segment } from './chunkPlaylists.ts';
import { mpdTimelines, type RepresentationTimeline } from './mpdTimeline.ts';

/**
 * The chunked path's DASH and CMAF (docs/decisions/vod-chunked.md): every chunk's muxer writes an MPD of its own
 * stretch, and the output's MPD is laid together from what the chunks stored, as the HLS playlists are
 * (`chunkPlaylists.ts`). Segments are stored under their start time (`chunk-0-51200.m4s`), so that no two chunks'
 * names meet and the MPD names them with one `$Time$` template; every chunk's fragments carry the source's decode
 * times, so the first chunk's initialisation segment serves them all.
 */

/** A DASH or CMAF output's adaptation sets as its first chunk's muxers described them, without their segments. */
export interface DashSkeleton {
  /** The Period's AdaptationSets; each Representation's timeline is a `<!--timeline:ID-->` marker. */
  sets: string;
  video: string[];
  audio: string[];
}

export const dashInitName = (id: string) => `init-${id}.m4s`;
export const dashSegmentName = (id: string, t: number) => `chunk-${id}-${t}.m4s`;
/** The key of a representation in the parts' records: its media playlist as CMAF names it (HLS serves it there). */
export const representationKey = (dir: string, id: string) => `${dir}/media_${id}.m3u8`;
const idOfKey = (key: string) => /media_([^/]+)\.m3u8$/.exec(key)?.[1];
/** The initialisation segment of a representation's key, beside its segments. */
export const initOfKey = (key: string) => dashInitName(idOfKey(key) ?? '');

/** A chunk muxer's MPD's representations with ids in the output's numbering (the audio muxer's follow the video's). */
export function chunkTimelines(xml: string, offset = 0): RepresentationTimeline[] {
  return mpdTimelines(xml).map((r) => ({ ...r, id: String(Number(r.id) + offset) }));
}

/** The skeleton of the output's MPD from the first chunk's video MPD and, beside it, the audio MPD. */
export function dashSkeleton(videoMpd: string, audioMpd: string | undefined): DashSkeleton {
  const video = periodSets(videoMpd, 0, 0);
  const audio = audioMpd ? periodSets(audioMpd, video.ids.length, 1) : { sets: '', ids: [] };
  return { sets: video.sets + audio.sets, video: video.ids, audio: audio.ids };
}

/** The sets of a muxer's MPD, its representations numbered from `offset` and its sets from `setOffset`. */
function periodSets(xml: string, offset: number, setOffset: number): { sets: string; ids: string[] } {
  const period = /<Period\b[^>]*>([\s\S]*?)<\/Period>/.exec(xml)?.[1];
  if (period === undefined) throw new Error('a chunk MPD has no Period');
  const ids: string[] = [];
  const renumbered = period.replace(
    /<AdaptationSet\b([^>]*)\bid="(\d+)"/g,
    (_, before: string, id: string) => `<AdaptationSet${before}id="${Number(id) + setOffset}"`,
  );
  const sets = renumbered.replace(
    /<Representation\b([^>]*)\bid="(\d+)"([^>]*)>([\s\S]*?)<\/Representation>/g,
    (_, before: string, id: string, after: string, body: string) => {
      const global = String(Number(id) + offset);
      ids.push(global);
      const timescale = /<SegmentTemplate\b[^>]*\btimescale="(\d+)"/.exec(body)?.[1] ?? '1';
      const template = [
        `<SegmentTemplate timescale="${timescale}" initialization="init-$RepresentationID$.m4s" media="chunk-$RepresentationID$-$Time$.m4s">`,
        `<SegmentTimeline><!--timeline:${global}--></SegmentTimeline>`,
        '</SegmentTemplate>',
      ].join('\n');
      const kept = body.replace(/<SegmentTemplate\b[^>]*?(?:\/>|>[\s\S]*?<\/SegmentTemplate>)/, template);
      return `<Representation${before}id="${global}"${after}>${kept}</Representation>`;
    },
  );
  return { sets, ids };
}

/** SegmentTimeline entries: a start on the first and after any jump, runs of equal durations as repeats. */
function timeline(segments: Segment[]): string {
  const entries: { t?: number; d: number; r: number }[] = [];
  let end: number | undefined;
  for (const s of segments) {
    const last = entries.at(-1);
    if (last && s.t === end && s.d === last.d) last.r++;
    else entries.push({ ...(s.t === end ? {} : { t: s.t }), d: s.d!, r: 0 });
    end = s.t! + s.d!;
  }
  return entries.map((e) => `<S${e.t === undefined ? '' : ` t="${e.t}"`} d="${e.d}"${e.r ? ` r="${e.r}"` : ''} />`).join('\n');
}

const seconds = (s: number) => `PT${s.toFixed(3)}S`;

/**
 * The output's MPD from the segments a player may be given (`contiguousSegments`): dynamic while it encodes (from
 * `availabilityStart` on, which must not change as it grows), static when `final`.
 */
export function chunkedMpd(
  skeleton: DashSkeleton,
  dir: string,
  lists: Map<string, Segment[]>,
  { final, availabilityStart, segmentSeconds }: { final: boolean; availabilityStart: Date; segmentSeconds: number },
): string {
  const sets = skeleton.sets.replace(/<!--timeline:(\d+)-->/g, (_, id: string) => timeline(lists.get(representationKey(dir, id)) ?? []));
  const longest = Math.max(0, ...[...lists.values()].flatMap((l) => l.map((s) => s.durationS)));
  const end = Math.max(0, ...[...lists.values()].map((l) => l.reduce((sum, s) => sum + s.durationS, 0)));
  const timing = final
    ? [`type="static"`, `mediaPresentationDuration="${seconds(end)}"`]
    : [
        `type="dynamic"`,
        `minimumUpdatePeriod="${seconds(segmentSeconds)}"`,
        `suggestedPresentationDelay="${seconds(segmentSeconds)}"`,
        `availabilityStartTime="${availabilityStart.toISOString()}"`,
        `publishTime="${new Date().toISOString()}"`,
      ];
  return [
    '<?xml version="1.0" encoding="utf-8"?>',
    `<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" profiles="urn:mpeg:dash:profile:isoff-live:2011" ${timing.join(' ')} maxSegmentDuration="${seconds(Math.max(longest, segmentSeconds))}" minBufferTime="${seconds(2 * segmentSeconds)}">`,
    '\t<Period id="0" start="PT0.0S">',
    sets.trim(),
    '\t</Period>',
    '</MPD>',
    '',
  ].join('\n');
}
