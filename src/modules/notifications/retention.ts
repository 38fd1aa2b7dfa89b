import { and, eq, inArray, lt, notExists } from 'drizzle-orm';
import type { WorkerStarter } from '../../context.ts';
import type { Queryable } from '../../db/client.ts';
import { startPeriodic } from '../../platform/periodic.ts';
import { events } from '../../db/events.ts';
import { webhookDeliveries } from './tables.ts';

const BATCH = 5000;
const SWEEP_EVERY_MS = 3_600_000;

/**
 * Deletes events that occurred before `before`, with their deliveries, a batch at a time so that no statement holds
 * many locks. An event is kept while it may still be delivered: not yet dispatched, or with a delivery pending or
 * retrying, however old. Answers how many were deleted.
 */
export async function deleteExpiredEvents(db: Queryable, before: Date): Promise<number> {
  let deleted = 0;
  for (;;) {
    const open = db
      .select({ id: webhookDeliveries.seq })
      .from(webhookDeliveries)
      .where(and(eq(webhookDeliveries.eventId, events.id), inArray(webhookDeliveries.status, ['Pending', 'Retrying'])));
    const batch = db
      .select({ id: events.id })
      .from(events)
      .where(and(lt(events.occuredAt, before), eq(events.dispatched, true), notExists(open)))
      .limit(BATCH);
    const rows = await db.delete(events).where(inArray(events.id, batch)).returning({ id: events.id });
    deleted += rows.length;
    if (rows.length < BATCH) return deleted;
  }
}

/** The event log keeps `MEDIAPLANE_EVENT_RETENTION_DAYS` of history; each worker sweeps at start and then hourly. */
export const startEventRetention: WorkerStarter = async (ctx) => {
  const days = ctx.config.eventRetentionDays;
  if (!days) return;
  const sweep = async () => void (await deleteExpiredEvents(ctx.db, new Date(Date.now() - days * 86_400_000)));
  const task = startPeriodic('event retention', SWEEP_EVERY_MS, sweep, ctx.log);
  return () => task.stop();
};
