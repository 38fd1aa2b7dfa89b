import { sql } from 'drizzle-orm';
import { bigserial, boolean, index, integer, jsonb, pgTable, text, unique, uuid } from 'drizzle-orm/pg-core';
import { createdAt, dateTime, modifiedAt, textArray } from '../../db/columns.ts';
import { events } from '../../db/events.ts';
import { leaseColumns } from '../../db/lease.ts';
import { tenants } from '../../db/tenants.ts';

export const WEBHOOK_STATUSES = ['Healthy', 'Unhealthy'] as const;

export const webhooks = pgTable(
  'webhooks',
  {
    id: uuid('id').primaryKey(),
    tenantId: uuid('tenant_id')
      .notNull()
      .references(() => tenants.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    url: text('url').notNull(),
    /** As the client wrote them (aliases included), for reading back. */
    eventTypes: textArray('event_types'),
    /** The emitted types they stand for, matched against `events.type`. */
    matchTypes: textArray('match_types'),
    isEnabled: boolean('is_enabled').notNull().default(true),
    /** Events that occured before this (creation, or the last time it was enabled) are not delivered to it. */
    subscribedSince: dateTime('subscribed_since').notNull().defaultNow(),
    status: text('status').notNull().default('Healthy'),
    createDate: createdAt(),
    lastModificationDate: modifiedAt(),
    /** Start of the current run of failed attempts; the retry period counts from here. */
    failingSince: dateTime('failing_since'),
    failureCount: integer('failure_count').notNull().default(0),
    /** While failing: nothing is sent to this webhook before this time. */
    nextAttemptAt: dateTime('next_attempt_at'),
    /** The worker process delivering to this webhook, and until when it may: deliveries stay in order per webhook. */
    ...leaseColumns(),
  },
  (t) => [index('webhooks_tenant_created').on(t.tenantId, t.createDate)],
);

/** One signing secret per tenant, created on first use; after a rotation, the one it replaced until its window ends. */
export const webhookSecrets = pgTable('webhook_secrets', {
  tenantId: uuid('tenant_id')
    .primaryKey()
    .references(() => tenants.id, { onDelete: 'cascade' }),
  secret: text('secret').notNull(),
  createDate: createdAt(),
  previousSecret: text('previous_secret'),
  /** Until then, deliveries are signed with `previousSecret` too. */
  previousSecretExpirationDate: dateTime('previous_secret_expiration_date'),
});

/** `Pending` and `Retrying` are still to be sent; `Failed` is final, unless the webhook is enabled again. */
export const DELIVERY_STATUSES = ['Pending', 'Retrying', 'Delivered', 'Failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

export interface SendAttempt {
  time: string;
  responseCode: number;
  responseContent: string;
}

/** One event to one webhook; `seq` is the order in which a webhook receives its events. */
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    seq: bigserial('seq', { mode: 'number' }).primaryKey(),
    tenantId: uuid('tenant_id')
      .notNull()
      .references(() => tenants.id, { onDelete: 'cascade' }),
    webhookId: uuid('webhook_id')
      .notNull()
      .references(() => webhooks.id, { onDelete: 'cascade' }),
    eventId: uuid('event_id')
      .notNull()
      .references(() => events.id, { onDelete: 'cascade' }),
    status: text('status').$type<DeliveryStatus>().notNull().default('Pending'),
    lastSendAttempt: dateTime('last_send_attempt'),
    sendAttempts: jsonb('send_attempts').$type<SendAttempt[]>().notNull().default([]),
    createDate: createdAt(),
  },
  (t) => [
    unique('webhook_deliveries_webhook_event').on(t.webhookId, t.eventId),
    index('webhook_deliveries_open')
      .on(t.webhookId, t.seq)
      .where(sql`${t.status} in ('Pending', 'Retrying')`),
    index('webhook_deliveries_event').on(t.eventId),
    index('webhook_deliveries_tenant').on(t.tenantId, t.seq),
  ],
);
