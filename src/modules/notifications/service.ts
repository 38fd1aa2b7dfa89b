import { and, count, eq, notInArray, sql } from 'drizzle-orm';
import type { WebhookConfig } from '../../config.ts';
import type { Db, Queryable } from '../../db/client.ts';
import { ApiError, notFound, validationError } from '../../platform/errors.ts';
import { textSearch } from '../../platform/filters.ts';
import { newId } from '../../platform/ids.ts';
import { currentRequestId } from '../../platform/requestContext.ts';
import { envelope, orderBy, pageWindow, type PageRequest } from '../../platform/paging.ts';
import { sendEvent, type DeliveryObservers } from './delivery.ts';
import { EVENTS_CHANNEL, type EventType } from '../../platform/events.ts';
import { canonicalEventType } from './eventTypes.ts';
import { rotateSigningSecret, signingSecret, signingSecrets } from './secrets.ts';
import type { StoredEvent } from './signing.ts';
import { events } from '../../db/events.ts';
import { webhookDeliveries, webhooks } from './tables.ts';
import { checkWebhookUrl } from './urlPolicy.ts';

/** Each webhook costs the dispatcher a look on every pass; a bound keeps one tenant from slowing everyone. */
const WEBHOOKS_PER_TENANT_MAX = 100;

export interface WebhookWrite {
  name?: string;
  url?: string;
  eventTypes?: string[];
  isEnabled?: boolean;
}

type WebhookRow = typeof webhooks.$inferSelect;

/** A password stored before URLs with credentials were refused is never shown back. */
function shownUrl(raw: string): string {
  if (!raw.includes('@')) return raw;
  try {
    const url = new URL(raw);
    if (url.password) url.password = '********';
    return url.toString();
  } catch {
    return raw;
  }
}

const present = (w: WebhookRow) => ({
  id: w.id,
  name: w.name,
  url: shownUrl(w.url),
  isEnabled: w.isEnabled,
  status: w.status,
  createDate: w.createDate,
  lastModificationDate: w.lastModificationDate,
  eventTypes: w.eventTypes,
});

/** The subscription as written (aliases kept) and the emitted types it matches. */
function subscription(eventTypes: string[], known: readonly EventType[]): { eventTypes: string[]; matchTypes: string[] } {
  const given = [...new Set(eventTypes)];
  const unknown = given.filter((t) => !canonicalEventType(t, known));
  if (unknown.length) {
    const list = unknown.map((t) => `"${t}"`).join(', ');
    throw validationError('eventTypes', `unknown event type ${list}; GET /notifications/v1/webhook-events/types lists them`);
  }
  return { eventTypes: given, matchTypes: [...new Set(given.map((t) => canonicalEventType(t, known)!))] };
}

/** The webhook event-type catalogue: `known` is the running platform's (`ctx.catalogue.eventTypes`). */
export const listEventTypes = (known: readonly EventType[]) => ({ data: [...known] });

export async function getSignatureSecret(db: Queryable, tenantId: string) {
  return { secret: await signingSecret(db, tenantId) };
}

export const rotateSignatureSecret = (db: Db, tenantId: string, overlapSeconds: number) => rotateSigningSecret(db, tenantId, overlapSeconds);

export async function createWebhook(
  db: Db,
  cfg: WebhookConfig,
  tenantId: string,
  body: Required<Pick<WebhookWrite, 'name' | 'url' | 'eventTypes'>> & WebhookWrite,
  known: readonly EventType[],
) {
  await checkWebhookUrl(body.url, cfg.allowPrivate);
  const sub = subscription(body.eventTypes, known);
  const [{ total }] = await db.select({ total: count() }).from(webhooks).where(eq(webhooks.tenantId, tenantId));
  if (total >= WEBHOOKS_PER_TENANT_MAX) {
    throw new ApiError(409, 'webhook_limit_reached', `A tenant can have at most ${WEBHOOKS_PER_TENANT_MAX} webhooks; delete one first`);
  }
  const [row] = await db
    .insert(webhooks)
    .values({ id: newId(), tenantId, name: body.name, url: body.url, ...sub, isEnabled: body.isEnabled ?? true })
    .returning();
  return present(row);
}

const SORTS = { CreateDate: webhooks.createDate, Name: webhooks.name, Url: webhooks.url, Status: webhooks.status };

export async function listWebhooks(db: Queryable, tenantId: string, req: PageRequest) {
  const where = and(eq(webhooks.tenantId, tenantId), textSearch(req.query, webhooks.name, webhooks.url));
  const { limit, offset } = pageWindow(req);
  const [rows, [{ total }]] = await Promise.all([
    db
      .select()
      .from(webhooks)
      .where(where)
      .orderBy(...orderBy(req, SORTS, 'CreateDate', webhooks.id))
      .limit(limit)
      .offset(offset),
    db.select({ total: count() }).from(webhooks).where(where),
  ]);
  return envelope(rows.map(present), total, req);
}

async function webhookRow(db: Queryable, tenantId: string, id: string): Promise<WebhookRow> {
  const [row] = await db
    .select()
    .from(webhooks)
    .where(and(eq(webhooks.tenantId, tenantId), eq(webhooks.id, id)));
  if (!row) throw notFound('webhook_not_found', 'Webhook', id);
  return row;
}

export const getWebhook = async (db: Queryable, tenantId: string, id: string) => present(await webhookRow(db, tenantId, id));

export async function updateWebhook(db: Db, cfg: WebhookConfig, tenantId: string, id: string, body: WebhookWrite, known: readonly EventType[]) {
  if (body.url !== undefined) await checkWebhookUrl(body.url, cfg.allowPrivate);
  const sub = body.eventTypes !== undefined ? subscription(body.eventTypes, known) : {};
  // Enabling always means "deliver now": an Unhealthy webhook is Healthy again, and a failing one retries at once.
  const health = body.isEnabled === true ? { status: 'Healthy', failingSince: null, failureCount: 0, nextAttemptAt: null } : {};
  return db.transaction(async (tx) => {
    if (body.isEnabled === true) {
      // Enabling a webhook that was off subscribes it from now on (events of the time it was off are not sent).
      await tx
        .update(webhooks)
        .set({ subscribedSince: sql`now()` })
        .where(and(eq(webhooks.tenantId, tenantId), eq(webhooks.id, id), eq(webhooks.isEnabled, false)));
    }
    const [row] = await tx
      .update(webhooks)
      .set({
        ...(body.name !== undefined ? { name: body.name } : {}),
        ...(body.url !== undefined ? { url: body.url } : {}),
        ...(body.isEnabled !== undefined ? { isEnabled: body.isEnabled } : {}),
        ...sub,
        ...health,
        lastModificationDate: new Date(),
      })
      .where(and(eq(webhooks.tenantId, tenantId), eq(webhooks.id, id)))
      .returning();
    if (!row) throw notFound('webhook_not_found', 'Webhook', id);
    if (body.isEnabled === true) {
      await tx
        .update(webhookDeliveries)
        .set({ status: sql`case when jsonb_array_length(${webhookDeliveries.sendAttempts}) > 0 then 'Retrying' else 'Pending' end` })
        .where(
          and(
            eq(webhookDeliveries.webhookId, id),
            eq(webhookDeliveries.status, 'Failed'),
            // Test events were sent once, on demand; they are never queued.
            notInArray(webhookDeliveries.eventId, tx.select({ id: events.id }).from(events).where(eq(events.type, 'webhook.test'))),
          ),
        );
      // Wakes the dispatcher (on any worker) as soon as this commits.
      await tx.execute(sql`select pg_notify(${EVENTS_CHANNEL}, '')`);
    }
    return present(row);
  });
}

export async function deleteWebhook(db: Queryable, tenantId: string, id: string): Promise<void> {
  const rows = await db
    .delete(webhooks)
    .where(and(eq(webhooks.tenantId, tenantId), eq(webhooks.id, id)))
    .returning({ id: webhooks.id });
  if (!rows.length) throw notFound('webhook_not_found', 'Webhook', id);
}

/**
 * Sends a `webhook.test` event to the webhook now, whatever its subscription, state or health, and answers what the
 * receiver said. The event and its one attempt are kept in the event log; a failure is not retried.
 */
export async function testWebhook(db: Db, cfg: WebhookConfig, tenantId: string, id: string, observers?: DeliveryObservers) {
  const w = await webhookRow(db, tenantId, id);
  const secrets = await signingSecrets(db, tenantId);
  const event: StoredEvent = {
    id: newId(),
    tenantId,
    type: 'webhook.test',
    data: { id: w.id, name: w.name },
    occuredAt: new Date(),
    requestId: currentRequestId(),
  };
  const { ok, attempt } = await sendEvent(w.url, secrets, event, cfg, observers);
  await db
    .transaction(async (tx) => {
      await tx.insert(events).values({ ...event, dispatched: true });
      await tx.insert(webhookDeliveries).values({
        tenantId,
        webhookId: w.id,
        eventId: event.id,
        status: ok ? 'Delivered' : 'Failed',
        lastSendAttempt: new Date(attempt.time),
        sendAttempts: [attempt],
      });
    })
    .catch((e) => {
      // The webhook was deleted while the test ran: the receiver's answer is still the answer.
      if (e?.code !== '23503' && e?.cause?.code !== '23503') throw e;
    });
  return { responseCode: attempt.responseCode, responseContent: attempt.responseContent };
}
