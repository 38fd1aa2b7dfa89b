import { and, eq, gt, inArray, isNotNull, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import * as lease from '../../db/lease.ts';
import type { StoredEvent } from './signing.ts';
import { events } from '../../db/events.ts';
import { webhookDeliveries, webhooks, type SendAttempt } from './tables.ts';

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
      select e.id, e.tenant_id, e.type, e.occured_at from ${events} e, gate
      where gate.ok and not e.dispatched
      order by e.id limit ${limit}
      for update of e skip locked
    ),
    marked as (
      update ${events} set dispatched = true from picked where events.id = picked.id
      returning picked.id, picked.tenant_id, picked.type, picked.occured_at
    ),
    created as (
      insert into ${webhookDeliveries} (tenant_id, webhook_id, event_id)
      select m.tenant_id, w.id, m.id from marked m
      join ${webhooks} w on w.tenant_id = m.tenant_id and w.is_enabled and w.status = 'Healthy' and m.type = any(w.match_types)
        and m.occured_at >= w.subscribed_since
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

export interface PendingDelivery {
  seq: number;
  event: StoredEvent;
}

const LEASE = { owner: webhooks.leaseOwner, until: webhooks.leaseUntil };
/** The same columns as the claim's query names them. */
const LEASE_OF_W = { owner: sql.raw('w.lease_owner'), until: sql.raw('w.lease_until') };
const asDate = (v: Date | string | null) => (v === null ? null : new Date(v));

interface ClaimRow {
  webhookId: string;
  tenantId: string;
  url: string;
  failingSince: Date | null;
  failureCount: number;
  seq: number;
  eventId: string;
  type: string;
  data: StoredEvent['data'];
  occuredAt: Date;
  requestId: string | null;
}

/**
 * Leases up to `n` webhooks that have deliveries to send now, and returns each with its first `perWebhook`
 * deliveries, in one round trip. Leasable: free webhooks, and this process's own (it keeps a lease after a webhook's
 * queue runs dry, so that it takes the next events at once), except those in `busy`, which it is sending to already.
 */
export async function claimWebhooks(
  db: Db,
  owner: string,
  n: number,
  perWebhook: number,
  leaseMs: number,
  busy: string[],
): Promise<{ webhook: LeasedWebhook; deliveries: PendingDelivery[] }[]> {
  const result = await db.execute(sql`
    with claimed as (
      update ${webhooks} set lease_owner = ${owner}, lease_until = ${lease.leaseEnd(leaseMs)}
      where id in (
        select w.id from ${webhooks} w
        where w.is_enabled and w.status = 'Healthy'
          and (w.next_attempt_at is null or w.next_attempt_at <= now())
          and ${lease.claimable(LEASE_OF_W, owner)}
          and not (w.id = any(string_to_array(${busy.join(',')}, ',')::uuid[]))
          and exists (select 1 from ${webhookDeliveries} d where d.webhook_id = w.id and d.status in ('Pending', 'Retrying'))
        order by w.lease_until nulls first
        limit ${n}
        for update of w skip locked
      )
      returning id, tenant_id, url, failing_since, failure_count
    )
    select c.id as "webhookId", c.tenant_id as "tenantId", c.url, c.failing_since as "failingSince",
      c.failure_count as "failureCount", d.seq, e.id as "eventId", e.type, e.data, e.occured_at as "occuredAt", e.request_id as "requestId"
    from claimed c
    cross join lateral (
      select d.seq, d.event_id from ${webhookDeliveries} d
      where d.webhook_id = c.id and d.status in ('Pending', 'Retrying')
      order by d.seq limit ${perWebhook}
    ) d
    join ${events} e on e.id = d.event_id
    order by c.id, d.seq`);
  const byWebhook = new Map<string, { webhook: LeasedWebhook; deliveries: PendingDelivery[] }>();
  for (const r of rowsOf<ClaimRow>(result)) {
    let entry = byWebhook.get(r.webhookId);
    if (!entry) {
      const webhook = { id: r.webhookId, tenantId: r.tenantId, url: r.url, failingSince: asDate(r.failingSince), failureCount: r.failureCount };
      byWebhook.set(r.webhookId, (entry = { webhook, deliveries: [] }));
    }
    entry.deliveries.push({
      seq: Number(r.seq),
      event: { id: r.eventId, tenantId: r.tenantId, type: r.type, data: r.data, occuredAt: asDate(r.occuredAt)!, requestId: r.requestId },
    });
  }
  return [...byWebhook.values()];
}

/** Extends this process's lease; undefined when it is lost or the webhook may no longer be sent to. */
export async function renewLease(db: Db, id: string, owner: string, leaseMs: number): Promise<LeasedWebhook | undefined> {
  const [row] = await db
    .update(webhooks)
    .set(lease.renew(leaseMs))
    .where(and(eq(webhooks.id, id), lease.heldBy(LEASE, owner), eq(webhooks.isEnabled, true), eq(webhooks.status, 'Healthy')))
    .returning({
      id: webhooks.id,
      tenantId: webhooks.tenantId,
      url: webhooks.url,
      failingSince: webhooks.failingSince,
      failureCount: webhooks.failureCount,
    });
  return row;
}

/** Gives back every lease of a process that stops, so that other workers take over at once. */
export async function releaseLeases(db: Db, owner: string): Promise<void> {
  await db.update(webhooks).set(lease.release()).where(lease.heldBy(LEASE, owner));
}

/** On embedded PGlite only one process can run, so every lease found at start is a dead process's. */
export async function releaseAllLeases(db: Db): Promise<void> {
  await db.update(webhooks).set(lease.release()).where(isNotNull(webhooks.leaseOwner));
}

/** A webhook's next deliveries, in order, after `afterSeq`. */
export async function nextDeliveries(db: Db, webhookId: string, afterSeq: number, limit: number): Promise<PendingDelivery[]> {
  const rows = await db
    .select({
      seq: webhookDeliveries.seq,
      id: events.id,
      tenantId: events.tenantId,
      type: events.type,
      data: events.data,
      occuredAt: events.occuredAt,
      requestId: events.requestId,
    })
    .from(webhookDeliveries)
    .innerJoin(events, eq(events.id, webhookDeliveries.eventId))
    .where(and(eq(webhookDeliveries.webhookId, webhookId), inArray(webhookDeliveries.status, ['Pending', 'Retrying']), gt(webhookDeliveries.seq, afterSeq)))
    .orderBy(webhookDeliveries.seq)
    .limit(limit);
  return rows.map(({ seq, ...event }) => ({ seq, event }));
}

const appendAttempt = (attempt: SendAttempt) => sql`${webhookDeliveries.sendAttempts} || ${JSON.stringify([attempt])}::jsonb`;

/** Successful attempts (of any webhooks), recorded in one statement. */
export async function recordSuccesses(db: Db, done: { seq: number; attempt: SendAttempt }[]): Promise<void> {
  if (!done.length) return;
  const rows = JSON.stringify(done.map((d) => ({ seq: d.seq, time: d.attempt.time, attempt: [d.attempt] })));
  await db.execute(sql`
    update ${webhookDeliveries} d set status = 'Delivered', last_send_attempt = v.time, send_attempts = d.send_attempts || v.attempt
    from jsonb_to_recordset(${rows}::jsonb) as v(seq bigint, time timestamptz, attempt jsonb)
    where d.seq = v.seq`);
}

/** A success after a run of failures ends the run. */
export async function clearFailures(db: Db, w: LeasedWebhook): Promise<void> {
  await db.update(webhooks).set({ failingSince: null, failureCount: 0, nextAttemptAt: null }).where(eq(webhooks.id, w.id));
  w.failingSince = null;
  w.failureCount = 0;
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
      await tx
        .update(webhooks)
        .set({ ...failure, nextAttemptAt: outcome.retryAt })
        .where(eq(webhooks.id, w.id));
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
