import { sql } from 'drizzle-orm';
import type { Queryable } from '../../db/client.ts';
import { newId } from '../../platform/ids.ts';
import { isEventType } from './eventTypes.ts';
import { events } from './tables.ts';

/** What an event says: `data.id` is the id of the object it concerns (spec, "Events"). */
export type EventData = { id: string } & Record<string, unknown>;

/** Notified on commit of every transaction that records events; the dispatcher listens on it (dispatcher.ts). */
export const EVENTS_CHANNEL = 'mediaplane_events';

/**
 * Records an event. Call it with the transaction that makes the state change (`tx`), never after commit.
 * Types are `<module>.<object>.<change>` in lowercase, e.g. `vod.file.completed`, `vod.asset.created`, and must be
 * listed in eventTypes.ts.
 */
export async function recordEvent(tx: Queryable, tenantId: string, type: string, data: EventData): Promise<string> {
  if (!isEventType(type)) throw new Error(`event type "${type}" is not in src/modules/notifications/eventTypes.ts`);
  const id = newId();
  // The notification is sent by PostgreSQL only when the transaction commits, so the dispatcher wakes exactly when the
  // event becomes visible. Identical notifications of one transaction are folded into one.
  await tx.execute(sql`
    with e as (
      insert into ${events} (id, tenant_id, type, data) values (${id}, ${tenantId}, ${type}, ${JSON.stringify(data)}::jsonb) returning 1
    )
    select pg_notify(${EVENTS_CHANNEL}, '') from e`);
  return id;
}
