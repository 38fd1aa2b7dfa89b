import { sql, type SQL, type SQLWrapper } from 'drizzle-orm';
import { text } from 'drizzle-orm/pg-core';
import { dateTime } from './columns.ts';

/**
 * Leases: one worker process at a time owns a row (a webhook it delivers to, an output it transcodes) and keeps it by
 * renewing before `lease_until`; a row whose lease ran out belongs to a dead owner and may be taken over. Every time
 * is the DATABASE's (`now()`): processes on several machines never compare their own clocks with a row.
 *
 * A leasable table spreads `leaseColumns()`; updates use `take`, `renew` and `release` as `.set()` values and
 * `claimable`, `expired` and `heldBy` as conditions. Raw SQL that names the table by an alias passes its columns.
 */
export const leaseColumns = () => ({
  leaseOwner: text('lease_owner'),
  leaseUntil: dateTime('lease_until'),
});

/** The two columns of a lease, as the query names them (table columns, or `sql.raw('w.lease_owner')` under an alias). */
export interface LeaseRef {
  owner: SQLWrapper;
  until: SQLWrapper;
}

/** `ms` from now on the database's clock. */
export const leaseEnd = (ms: number): SQL<Date> => sql<Date>`(now() + ${ms} * interval '1 millisecond')`;

/** `.set()` values: `owner` holds the row for `ms`. */
export const take = (owner: string, ms: number) => ({ leaseOwner: owner, leaseUntil: leaseEnd(ms) });

/** `.set()` values: the holder keeps the row `ms` longer (with `heldBy(owner)` in the condition). */
export const renew = (ms: number) => ({ leaseUntil: leaseEnd(ms) });

/** `.set()` values: the row is free for anyone at once. */
export const release = () => ({ leaseOwner: null, leaseUntil: sql<Date>`now()` });

/**
 * The row may be taken by `owner`: nobody holds it, its holder stopped renewing (dead), or `owner` holds it already.
 * `handoff` names an owner that gives the row to whoever asks first (a row waiting in a queue).
 */
export function claimable(ref: LeaseRef, owner: string, handoff?: string): SQL {
  const handedOff = handoff === undefined ? sql`` : sql` or ${ref.owner} = ${handoff}`;
  // A released row (no owner) is free at once: `until < now()` alone waits for the clock to tick past the release,
  // which on PGlite's millisecond clock may be the next statement's `now()` too.
  return sql`(${ref.owner} is null or ${ref.until} is null or ${ref.until} < now() or ${ref.owner} = ${owner}${handedOff})`;
}

/** The holder stopped renewing: its owner is dead (or gave it back). */
export const expired = (ref: LeaseRef): SQL => sql`(${ref.until} is not null and ${ref.until} < now())`;

/** `owner` holds the row (its lease may have run out without anyone taking it yet). */
export const heldBy = (ref: LeaseRef, owner: string): SQL => sql`${ref.owner} = ${owner}`;
