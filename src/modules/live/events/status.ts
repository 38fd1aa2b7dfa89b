import { sql, type SQL } from 'drizzle-orm';
import { liveEvents, type EventStatus } from './tables.ts';

/**
 * An event's status is a function of the clock, the DATABASE's (`now()`), so that every process answers the same:
 * `Scheduled` before `start`, `Live` from `start` until `end`, `Finished` from `end` on. Reads compute it; the
 * scheduler announces each change by a webhook event within one pass.
 */
export const statusNow: SQL<EventStatus> = sql<EventStatus>`(case when now() < ${liveEvents.start} then 'Scheduled' when now() < ${liveEvents.end} then 'Live' else 'Finished' end)`;

/** `ms` as an SQL interval. */
const interval = (ms: number): SQL => sql`(${ms} * interval '1 millisecond')`;

/**
 * The time an `ensureChannel` event keeps its channel on: from `lead` before `start` (the channel is playing when the
 * event begins) until `tail` after `end` (the last segment of the event is out before the encoder stops).
 */
export interface HoldWindow {
  leadMs: number;
  tailMs: number;
}

export const holdOpensBy = (w: HoldWindow): SQL<boolean> => sql<boolean>`(${liveEvents.start} - ${interval(w.leadMs)} <= now())`;
export const holdClosedBy = (w: HoldWindow): SQL<boolean> => sql<boolean>`(${liveEvents.end} + ${interval(w.tailMs)} <= now())`;
export const inHoldWindow = (w: HoldWindow): SQL<boolean> => sql<boolean>`(${holdOpensBy(w)} and not ${holdClosedBy(w)})`;
