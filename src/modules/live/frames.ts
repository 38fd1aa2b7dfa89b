import { and, desc, eq } from 'drizzle-orm';
import type { PlatformContext } from '../../context.ts';
import { masterTracks, rangeMediaPlaylist } from '../../media/live/packaging/rangePlaylist.ts';
import { isUuid } from '../../platform/ids.ts';
import type { FrameSource } from '../../platform/playables.ts';
import { liveChannels } from './tables.ts';
import { channelMaster, channelPrefix, channelRunning, rangeEnded, rangeSegments, type TimelineSegment } from './timeline.ts';
import { liveTimelineSegments } from './timeline.tables.ts';

/**
 * What the streaming frames of live content are taken from: a span of the channel's timeline, in its tallest video
 * rendition, as an HLS playlist of the segments' own store locations (a range has no file ffmpeg could open, and its
 * HTTP address may need a token). The playlist always ends: ffmpeg reads what is there now and stops.
 */
async function timelineStills(
  ctx: PlatformContext,
  tenantId: string,
  channelId: string,
  span: { startMs: number; endMs: number } | 'recent',
): Promise<{ playlist: string; complete: boolean } | undefined> {
  const master = await channelMaster(ctx, tenantId, channelId);
  const track = master && tallestVideo(masterTracks(master));
  if (!track) return undefined;
  let segments: TimelineSegment[];
  if (span === 'recent') {
    // What the channel's live playlist shows now (or showed last, while the retention keeps it).
    const t = liveTimelineSegments;
    segments = (
      await ctx.db
        .select()
        .from(t)
        .where(and(eq(t.channelId, channelId), eq(t.tenantId, tenantId), eq(t.track, track)))
        .orderBy(desc(t.startMs), desc(t.sequence))
        .limit(ctx.config.live.windowSegments)
    ).reverse();
  } else segments = await rangeSegments(ctx, tenantId, channelId, span.startMs, span.endMs, track);
  if (segments.length === 0) return undefined;
  const prefix = channelPrefix(tenantId, channelId);
  const inits = new Map<string, string>();
  const entries = [];
  for (const s of segments) {
    if (!inits.has(s.initKey)) inits.set(s.initKey, await ctx.store.readableLocation(prefix + s.initKey));
    entries.push({
      uri: await ctx.store.readableLocation(prefix + s.key),
      initUri: inits.get(s.initKey)!,
      startMs: s.startMs,
      durationMs: s.durationMs,
      run: s.run,
    });
  }
  const complete = span !== 'recent' && (rangeEnded(segments, span.endMs) || (Date.now() >= span.endMs && !(await channelRunning(ctx, tenantId, channelId))));
  return { playlist: rangeMediaPlaylist(entries, { type: 'VOD', ended: true, segmentSeconds: ctx.config.live.segmentSeconds }), complete };
}

/** The tallest video rendition of a master playlist's tracks (`720p` over `360p`; `audio` is none). */
const tallestVideo = (tracks: string[]): string | undefined =>
  tracks.filter((t) => t !== 'audio' && Number.parseInt(t) > 0).sort((a, b) => Number.parseInt(b) - Number.parseInt(a))[0];

/** A live channel's frames: its latest live window, taken again as it plays. */
export async function channelFrameSource(ctx: PlatformContext, tenantId: string, id: string): Promise<FrameSource | undefined> {
  if (!isUuid(id)) return undefined;
  const [row] = await ctx.db
    .select({ id: liveChannels.id })
    .from(liveChannels)
    .where(and(eq(liveChannels.tenantId, tenantId), eq(liveChannels.id, id.toLowerCase())));
  const stills = row && (await timelineStills(ctx, tenantId, row.id, 'recent'));
  return stills && { playlist: stills.playlist, final: false };
}

/**
 * An event's frames: its catch-up range of the channel's timeline, from `start` to what is published so far; final
 * once the event is `Finished` and its range is complete.
 */
export async function eventFrameSource(
  ctx: PlatformContext,
  e: { tenantId: string; channelId: string; start: Date; end: Date; status: string },
): Promise<FrameSource | undefined> {
  if (e.status === 'Scheduled') return undefined;
  const stills = await timelineStills(ctx, e.tenantId, e.channelId, { startMs: e.start.getTime(), endMs: e.end.getTime() });
  return stills && { playlist: stills.playlist, final: e.status === 'Finished' && stills.complete };
}
