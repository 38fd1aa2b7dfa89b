import { sql } from 'drizzle-orm';
import type { Queryable } from '../../db/client.ts';
import { newId } from '../../platform/ids.ts';
import { isEventType } from './eventTypes.ts';
import { events } from './tables.ts';

/** What an event says: `data.id` is the id of the object it concerns (spec, "Events"). */
export type EventData = { id: string } & Record<string, unknown>;

/** Notified on commit of transactions that record events; the dispatcher listens on it (dispatcher.ts). */
export const EVENTS_CHANNEL = 'mediaplane_events';

/**
 * PostgreSQL serializes the commits of all transactions that NOTIFY (a global lock held through the commit's WAL
 * flush), which halves the commit rate of event-writing transactions. So one process notifies at most once per this
 * many milliseconds; a dispatcher stays in fast polling for longer than that after any activity (dispatcher.ts), so
 * the events committed in between are found just as soon.
 */
export const NOTIFY_INTERVAL_MS = 200;
let lastNotify = 0;

/**
 * Records an event. Call it with the transaction that makes the state change (`tx`), never after commit.
 * Types are `<module>.<object>.<change>` in lowercase, e.g. `vod.file.completed`, `vod.asset.created`, and must be
 * listed in eventTypes.ts.
 */
export async function recordEvent(tx: Queryable, tenantId: string, type: string, data: EventData): Promise<string> {
  if (!isEventType(type)) throw new Error(`event type "${type}" is not in src/modules/notifications/eventTypes.ts`);
  const id = newId();
  const insert = sql`insert into ${events} (id, tenant_id, type, data) values (${id}, ${tenantId}, ${type}, ${JSON.stringify(data)}::jsonb)`;
  const now = Date.now();
  if (now - lastNotify < NOTIFY_INTERVAL_MS) {
    await tx.execute(insert);
    return id;
  }
  lastNotify = now;
  // The notification is sent only when the transaction commits: the dispatcher wakes exactly when the event is visible.
  await tx.execute(sql`with e as (${insert} returning 1) select pg_notify(${EVENTS_CHANNEL}, '') from e`);
  return id;
}
