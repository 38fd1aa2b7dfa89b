import { index, jsonb, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { createdAt } from '../../db/columns.ts';
import { tenants } from '../../db/tenants.ts';

/**
 * The transactional outbox: every state change writes its event row in the same transaction as the change,
 * so a crash can never keep one without the other. Deliveries to webhooks are derived from these rows.
 */
export const events = pgTable(
  'events',
  {
    id: uuid('id').primaryKey(),
    tenantId: uuid('tenant_id').notNull().references(() => tenants.id, { onDelete: 'cascade' }),
    type: text('type').notNull(),
    data: jsonb('data').$type<{ id: string } & Record<string, unknown>>().notNull(),
    occuredAt: createdAt('occured_at'),
  },
  (t) => [index('events_tenant_occured').on(t.tenantId, t.occuredAt)],
);
