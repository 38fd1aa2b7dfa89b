import { and, desc, eq, lt, max, sql } from 'drizzle-orm';
import type { PlatformContext } from '../../context.ts';
import { CAPTION_TRACK, captionVttKey } from '../../media/live/captions/subtitles.ts';
import type { Logger } from '../../platform/logger.ts';
import type { LivePipelineEvent } from './media.ts';
import { liveChannels } from './tables.ts';
import { liveTimelineSegments } from './timeline.tables.ts';
import { channelPrefix } from './urls.ts';

type SegmentEvent = Extract<LivePipelineEvent, { type: 'segment' }>;
type Row = typeof liveTimelineSegments.$inferInsert;

/** Segments are written in one insert per this interval (a channel makes ~1.5 rows a second with 2 s segments). */
const FLUSH_MS = 1000;
/** Segments past the retention window are removed (rows and files) this often, or four times per window if shorter. */
const PRUNE_MS = 30_000;
/** Rows kept in memory when the database is away, before the oldest are dropped (a gap in the timeline). */
const MAX_PENDING = 50_000;

/**
 * Writes the live process's published segments into the timeline in batches, and removes what is older than the
 * retention window, rows and files together, for every channel (also the sessions of channels no longer running).
 */
export class TimelineWriter {
  private pending: Row[] = [];
  private readonly timer: NodeJS.Timeout;
  private flushing: Promise<void> = Promise.resolve();
  private lastPrune = 0;

  constructor(
    private readonly ctx: PlatformContext,
    private readonly log: Logger,
  ) {
    this.timer = setInterval(() => void this.flush(), FLUSH_MS);
    this.timer.unref();
  }

  push(tenantId: string, channelId: string, e: SegmentEvent): void {
    this.pending.push({
      channelId,
      tenantId,
      track: e.rendition,
      sequence: e.sequence,
      key: e.key,
      initKey: e.initKey,
      startMs: e.startMs,
      durationMs: Math.round(e.durationSeconds * 1000),
      decodeTime: e.decodeTime,
      timescale: e.timescale,
      run: e.run,
    });
    if (this.pending.length > MAX_PENDING) this.pending.splice(0, this.pending.length - MAX_PENDING);
  }

  /** Writes what is pending (one at a time); then prunes when it is due. */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(async () => {
      const rows = this.pending;
      this.pending = [];
      try {
        if (rows.length > 0) await this.ctx.db.insert(liveTimelineSegments).values(rows).onConflictDoNothing();
      } catch (err) {
        this.pending = [...rows, ...this.pending];
        this.log.warn({ err, rows: rows.length }, 'live timeline not written; kept for the next flush');
        return;
      }
      if (Date.now() - this.lastPrune >= Math.min(PRUNE_MS, this.ctx.config.live.retentionSeconds * 250)) {
        this.lastPrune = Date.now();
        await this.prune().catch((err) => this.log.warn({ err }, 'live timeline not pruned'));
      }
    });
    return this.flushing;
  }

  /** The numbers a channel's new session starts at, after everything its earlier sessions published. */
  async nextNumbers(channelId: string): Promise<{ firstSequence: number; firstRun: number }> {
    await this.flush();
    const [row] = await this.ctx.db
      .select({ sequence: max(liveTimelineSegments.sequence), run: max(liveTimelineSegments.run) })
      .from(liveTimelineSegments)
      .where(eq(liveTimelineSegments.channelId, channelId));
    return { firstSequence: (row?.sequence ?? -1) + 1, firstRun: (row?.run ?? 0) + 1 };
  }

  /** Removes the segments that ended before the retention window, and the init segments no segment uses any more. */
  private async prune(): Promise<void> {
    const cutoff = Date.now() - this.ctx.config.live.retentionSeconds * 1000;
    const gone = await this.ctx.db
      .delete(liveTimelineSegments)
      .where(lt(sql`${liveTimelineSegments.startMs} + ${liveTimelineSegments.durationMs}`, cutoff))
      .returning({
        tenantId: liveTimelineSegments.tenantId,
        channelId: liveTimelineSegments.channelId,
        track: liveTimelineSegments.track,
        key: liveTimelineSegments.key,
        initKey: liveTimelineSegments.initKey,
      });
    if (gone.length === 0) return;
    const keys = new Set<string>();
    const inits = new Map<string, { tenantId: string; channelId: string; initKey: string }>();
    for (const g of gone) {
      keys.add(channelPrefix(g.tenantId, g.channelId) + g.key);
      // A caption segment is two files: its wvtt (the row's key) and its WebVTT.
      if (g.track === CAPTION_TRACK) keys.add(channelPrefix(g.tenantId, g.channelId) + captionVttKey(g.key));
      inits.set(`${g.channelId}/${g.initKey}`, g);
    }
    for (const g of inits.values()) {
      const t = liveTimelineSegments;
      const [used] = await this.ctx.db
        .select({ n: t.sequence })
        .from(t)
        .where(and(eq(t.channelId, g.channelId), eq(t.initKey, g.initKey)))
        .limit(1);
      if (used) continue;
      // The running packager may still use an init segment all of whose rows are gone (its encoder lags the wall
      // clock by more than the window): it goes once the track has moved on to another one, or the channel stopped.
      const [latest] = await this.ctx.db
        .select({ initKey: t.initKey })
        .from(t)
        .where(and(eq(t.channelId, g.channelId), eq(t.track, g.initKey.split('/')[0]!)))
        .orderBy(desc(t.sequence))
        .limit(1);
      const [channel] = await this.ctx.db.select({ status: liveChannels.status }).from(liveChannels).where(eq(liveChannels.id, g.channelId));
      const running = !!channel && ['Starting', 'On', 'Stopping'].includes(channel.status);
      if (!running || (latest && latest.initKey !== g.initKey)) keys.add(channelPrefix(g.tenantId, g.channelId) + g.initKey);
    }
    await Promise.all([...keys].map((k) => this.ctx.store.delete(k).catch(() => {})));
    this.log.debug({ segments: gone.length }, 'live timeline pruned');
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }
}
