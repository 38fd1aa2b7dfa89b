import { sql } from 'drizzle-orm';
import { boolean, index, jsonb, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { createdAt } from './columns.ts';
import { tenants } from './tenants.ts';

/**
 * The transactional outbox: every state change writes its event row in the same transaction as the change,
 * so a crash can never keep one without the other. Shared ground like `tenants`: every module records events
 * (`platform/events.ts`); the notifications module turns them into webhook deliveries.
 */
export const events = pgTable(
  'events',
  {
    id: uuid('id').primaryKey(),
    tenantId: uuid('tenant_id')
      .notNull()
      .references(() => tenants.id, { onDelete: 'cascade' }),
    type: text('type').notNull(),
    data: jsonb('data').$type<{ id: string } & Record<string, unknown>>().notNull(),
    occuredAt: createdAt('occured_at'),
    /** The request (or the job of the request) that caused the event; its deliveries are logged with it. */
    requestId: text('request_id'),
    /** Set once the dispatcher has turned the event into deliveries. */
    dispatched: boolean('dispatched').notNull().default(false),
  },
  (t) => [
    index('events_tenant_occured').on(t.tenantId, t.occuredAt),
    index('events_undispatched')
      .on(t.id)
      .where(sql`not ${t.dispatched}`),
    // The retention sweep reads the oldest events of all tenants.
    index('events_occured').on(t.occuredAt),
  ],
);
