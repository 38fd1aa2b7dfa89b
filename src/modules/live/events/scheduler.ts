import { inArray, sql } from 'drizzle-orm';
import type { PlatformContext, WorkerStarter } from '../../../context.ts';
import { startPeriodic } from '../../../platform/periodic.ts';
import { recordLiveEvent } from '../service.ts';
import { channelsDue, holdWindow, settleChannel } from './holds.ts';
import { statusNow } from './status.ts';
import { liveEvents, type EventStatus } from './tables.ts';

const BATCH = 500;

/**
 * Announces every status change the clock has made since the last pass (`live.event.live`, `live.event.finished`), in
 * the transaction that records it as announced. Rows are taken with `for update skip locked` and changed only where
 * the announced status still differs: two processes never announce one change twice. An event whose whole time passed
 * between two passes (the platform was down) is announced `finished` once, with `previousStatus: Scheduled`.
 */
export async function announceStatuses(ctx: PlatformContext): Promise<number> {
  return ctx.db.transaction(async (tx) => {
    const due = await tx
      .select({
        id: liveEvents.id,
        tenantId: liveEvents.tenantId,
        channelId: liveEvents.channelId,
        previous: liveEvents.announcedStatus,
        status: statusNow,
        start: liveEvents.start,
        end: liveEvents.end,
      })
      .from(liveEvents)
      .where(
        sql`((${liveEvents.announcedStatus} = 'Scheduled' and ${liveEvents.start} <= now())
          or (${liveEvents.announcedStatus} = 'Live' and ${liveEvents.end} <= now()))`,
      )
      .limit(BATCH)
      .for('update', { skipLocked: true });
    const byStatus = new Map<EventStatus, string[]>();
    for (const e of due) byStatus.set(e.status, [...(byStatus.get(e.status) ?? []), e.id]);
    for (const [status, ids] of byStatus) await tx.update(liveEvents).set({ announcedStatus: status }).where(inArray(liveEvents.id, ids));
    for (const e of due) {
      if (e.status === e.previous) continue;
      await recordLiveEvent(tx, e.tenantId, e.status === 'Live' ? 'live.event.live' : 'live.event.finished', {
        id: e.id,
        channelId: e.channelId,
        status: e.status,
        previousStatus: e.previous,
        start: e.start.toISOString(),
        end: e.end.toISOString(),
      });
    }
    return due.length;
  });
}

/** Starts and stops the channels whose `ensureChannel` holds opened or closed; one transaction per channel. */
export async function settleDueChannels(ctx: PlatformContext): Promise<void> {
  const w = holdWindow(ctx.config);
  for (const { tenantId, channelId } of await channelsDue(ctx.db, w)) {
    try {
      const done = await ctx.db.transaction((tx) => settleChannel(tx, w, tenantId, channelId));
      if (done !== 'none') ctx.log.info({ module: 'live', channelId, action: done }, `live event ${done} its channel`);
    } catch (err) {
      // One channel's failure (a conflict) is retried at the next pass; the other channels go on.
      ctx.log.warn({ err, module: 'live', channelId }, 'live event could not settle its channel; retrying at the next pass');
    }
  }
}

/** One pass of the events scheduler; tests call it directly. */
export async function eventsPass(ctx: PlatformContext): Promise<void> {
  await settleDueChannels(ctx);
  await announceStatuses(ctx);
}

/**
 * The events scheduler runs on the `live` role, every `MEDIAPLANE_LIVE_POLL_MS`: the schedule is in rows, so a restart
 * or another live process carries it on; nothing is held in timers between passes.
 */
export const startEventScheduler: WorkerStarter = async (ctx) => {
  const task = startPeriodic('live events', ctx.config.live.pollMs, () => eventsPass(ctx), ctx.log);
  return () => task.stop();
};
