import { and, eq, inArray, isNotNull, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import type { StoredEvent } from './signing.ts';
import { events, webhookDeliveries, webhooks, type SendAttempt } from './tables.ts';

/** The SQL of delivery: fan-out of outbox events into deliveries, leases on webhooks, and results of attempts. */

// Any constant works; it only has to be the same for every Mediaplane process on one database.
const FAN_OUT_LOCK_KEY = 727_100_005;

/** Rows of a raw statement; node-postgres and PGlite both answer `{ rows }`. */
const rowsOf = <T>(result: unknown): T[] => (result as { rows: T[] }).rows;

/**
 * Turns undispatched events into one delivery per subscribed, enabled webhook, in one statement. One process at a
 * time (advisory lock), so that deliveries are numbered in the order their events were picked up. Returns how many
 * events it took.
 */
export async function fanOut(db: Db, limit: number): Promise<number> {
  const result = await db.execute(sql`
    with gate as (select pg_try_advisory_xact_lock(${FAN_OUT_LOCK_KEY}) as ok),
    picked as (
      select e.id, e.tenant_id, e.type from ${events} e, gate
      where gate.ok and not e.dispatched
      order by e.id limit ${limit}
      for update of e skip locked
    ),
    marked as (
      update ${events} set dispatched = true from picked where events.id = picked.id
      returning picked.id, picked.tenant_id, picked.type
    ),
    created as (
      insert into ${webhookDeliveries} (tenant_id, webhook_id, event_id)
      select m.tenant_id, w.id, m.id from marked m
      join ${webhooks} w on w.tenant_id = m.tenant_id and w.is_enabled and w.status = 'Healthy' and m.type = any(w.match_types)
      order by m.id, w.id
      on conflict do nothing
      returning 1
    )
    select (select count(*) from marked)::int as events, (select count(*) from created)::int as deliveries`);
  return Number(rowsOf<{ events: number }>(result)[0].events);
}

export interface LeasedWebhook {
  id: string;
  tenantId: string;
  url: string;
  failingSince: Date | null;
  failureCount: number;
}

const leaseInterval = (ms: number) => sql`(now() + ${ms} * interval '1 millisecond')`;

/** Leases up to `n` webhooks that have deliveries to send now; the ones in `busy` are this process's already. */
export async function claimWebhooks(db: Db, owner: string, n: number, leaseMs: number, busy: string[]): Promise<string[]> {
  const result = await db.execute(sql`
    update ${webhooks} set lease_owner = ${owner}, lease_until = ${leaseInterval(leaseMs)}
    where id in (
      select w.id from ${webhooks} w
      where w.is_enabled and w.status = 'Healthy'
        and (w.next_attempt_at is null or w.next_attempt_at <= now())
        and (w.lease_until is null or w.lease_until < now())
        and not (w.id = any(string_to_array(${busy.join(',')}, ',')::uuid[]))
        and exists (select 1 from ${webhookDeliveries} d where d.webhook_id = w.id and d.status in ('Pending', 'Retrying'))
      order by w.lease_until nulls first
      limit ${n}
      for update of w skip locked
    )
    returning id`);
  return rowsOf<{ id: string }>(result).map((r) => r.id);
}

/** Extends this process's lease; undefined when it is lost or the webhook may no longer be sent to. */
export async function renewLease(db: Db, id: string, owner: string, leaseMs: number): Promise<LeasedWebhook | undefined> {
  const [row] = await db
    .update(webhooks)
    .set({ leaseUntil: leaseInterval(leaseMs) })
    .where(and(eq(webhooks.id, id), eq(webhooks.leaseOwner, owner), eq(webhooks.isEnabled, true), eq(webhooks.status, 'Healthy')))
    .returning({
      id: webhooks.id,
      tenantId: webhooks.tenantId,
      url: webhooks.url,
      failingSince: webhooks.failingSince,
      failureCount: webhooks.failureCount,
    });
  return row;
}

export async function releaseLease(db: Db, id: string, owner: string): Promise<void> {
  await db
    .update(webhooks)
    .set({ leaseOwner: null, leaseUntil: sql`now()` })
    .where(and(eq(webhooks.id, id), eq(webhooks.leaseOwner, owner)));
}

/** On embedded PGlite only one process can run, so every lease found at start is a dead process's. */
export async function releaseAllLeases(db: Db): Promise<void> {
  await db.update(webhooks).set({ leaseOwner: null, leaseUntil: null }).where(isNotNull(webhooks.leaseOwner));
}

export interface PendingDelivery {
  seq: number;
  event: StoredEvent;
}

/** The next deliveries of a webhook, in order. */
export async function nextDeliveries(db: Db, webhookId: string, limit: number): Promise<PendingDelivery[]> {
  const rows = await db
    .select({
      seq: webhookDeliveries.seq,
      id: events.id,
      tenantId: events.tenantId,
      type: events.type,
      data: events.data,
      occuredAt: events.occuredAt,
    })
    .from(webhookDeliveries)
    .innerJoin(events, eq(events.id, webhookDeliveries.eventId))
    .where(and(eq(webhookDeliveries.webhookId, webhookId), inArray(webhookDeliveries.status, ['Pending', 'Retrying'])))
    .orderBy(webhookDeliveries.seq)
    .limit(limit);
  return rows.map(({ seq, ...event }) => ({ seq, event }));
}

const appendAttempt = (attempt: SendAttempt) => sql`${webhookDeliveries.sendAttempts} || ${JSON.stringify([attempt])}::jsonb`;

export async function recordSuccess(db: Db, w: LeasedWebhook, seq: number, attempt: SendAttempt): Promise<void> {
  await db
    .update(webhookDeliveries)
    .set({ status: 'Delivered', lastSendAttempt: new Date(attempt.time), sendAttempts: appendAttempt(attempt) })
    .where(eq(webhookDeliveries.seq, seq));
  if (w.failureCount > 0 || w.failingSince) {
    await db.update(webhooks).set({ failingSince: null, failureCount: 0, nextAttemptAt: null }).where(eq(webhooks.id, w.id));
    w.failingSince = null;
    w.failureCount = 0;
  }
}

/** A failed attempt: either a retry later, or (retries exhausted) the webhook turns Unhealthy and stops. */
export async function recordFailure(
  db: Db,
  w: LeasedWebhook,
  seq: number,
  attempt: SendAttempt,
  outcome: { exhausted: true; failingSince: Date } | { exhausted: false; failingSince: Date; retryAt: Date },
): Promise<void> {
  await db.transaction(async (tx) => {
    await tx
      .update(webhookDeliveries)
      .set({ status: outcome.exhausted ? 'Failed' : 'Retrying', lastSendAttempt: new Date(attempt.time), sendAttempts: appendAttempt(attempt) })
      .where(eq(webhookDeliveries.seq, seq));
    const failure = { failingSince: outcome.failingSince, failureCount: w.failureCount + 1 };
    if (!outcome.exhausted) {
      await tx.update(webhooks).set({ ...failure, nextAttemptAt: outcome.retryAt }).where(eq(webhooks.id, w.id));
      return;
    }
    await tx
      .update(webhooks)
      .set({ ...failure, status: 'Unhealthy', isEnabled: false, nextAttemptAt: null, lastModificationDate: new Date() })
      .where(eq(webhooks.id, w.id));
    // Everything still waiting for this webhook is reported Failed too; enabling the webhook again resumes it.
    await tx
      .update(webhookDeliveries)
      .set({ status: 'Failed' })
      .where(and(eq(webhookDeliveries.webhookId, w.id), inArray(webhookDeliveries.status, ['Pending', 'Retrying'])));
  });
  w.failingSince = outcome.failingSince;
  w.failureCount += 1;
}
