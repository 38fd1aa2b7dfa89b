import type { Queryable } from '../../db/client.ts';
import { newId } from '../../platform/ids.ts';
import { events } from './tables.ts';

/** What an event says: `data.id` is the id of the object it concerns (spec, "Events"). */
export type EventData = { id: string } & Record<string, unknown>;

/**
 * Records an event. Call it with the transaction that makes the state change (`tx`), never after commit.
 * Types are `<module>.<object>.<change>` in lowercase, e.g. `vod.file.completed`, `vod.asset.created`.
 */
export async function recordEvent(tx: Queryable, tenantId: string, type: string, data: EventData): Promise<string> {
  const id = newId();
  await tx.insert(events).values({ id, tenantId, type, data });
  return id;
}
