import { sql } from 'drizzle-orm';
import type { Queryable } from '../db/client.ts';
import { events } from '../db/events.ts';
import { newId } from './ids.ts';
import { currentRequestId } from './requestContext.ts';

/**
 * Every event type the platform records, by module: each module declares its own list here by declaration merging
 * (`declare module '../../platform/events.ts' { interface EventTypes { vod: VodEventType } }`), next to the `as const`
 * list its manifest gives as `eventTypes`. The platform never imports a module to know them.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- modules add their event types to it by declaration merging
export interface EventTypes {}

/** `<module>.<object>.<change>`, lowercase: one of the types some module declared. */
export type EventType = EventTypes[keyof EventTypes];

/** What an event says: `data.id` is the id of the object it concerns (spec, "Events"). */
export type EventData = { id: string } & Record<string, unknown>;

/** Notified on commit of transactions that record events; the webhook dispatcher listens on it (`platform/wakeup.ts`). */
export const EVENTS_CHANNEL = 'mediaplane_events';
/** The payload of a notification on EVENTS_CHANNEL that says a tenant's signing secrets changed (events send ''). */
export const SECRETS_CHANGED = 'secrets';

/**
 * PostgreSQL serializes the commits of all transactions that NOTIFY (a global lock held through the commit's WAL
 * flush), which halves the commit rate of event-writing transactions. So one process notifies at most once per this
 * many milliseconds; a dispatcher stays in fast polling for longer than that after any activity, so the events
 * committed in between are found just as soon.
 */
export const NOTIFY_INTERVAL_MS = 200;
let lastNotify = 0;

/**
 * Records an event (the transactional outbox). Call it with the transaction that makes the state change (`tx`), never
 * after commit. The type is one a module declared to `EventTypes` (checked by the compiler); the manifests' lists of
 * the same types make the webhook catalogue (`ctx.catalogue.eventTypes`), and a test holds the two alike.
 */
export async function recordEvent(tx: Queryable, tenantId: string, type: EventType, data: EventData): Promise<string> {
  const id = newId();
  // The request being served (or whose job is running) is kept with the event: its deliveries are logged with it.
  const insert = sql`insert into ${events} (id, tenant_id, type, data, request_id) values (${id}, ${tenantId}, ${type}, ${JSON.stringify(data)}::jsonb, ${currentRequestId() ?? null})`;
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
