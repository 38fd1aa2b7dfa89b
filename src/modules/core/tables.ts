import { index, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { createdAt } from '../../db/columns.ts';
import { tenants } from '../../db/tenants.ts';

export const apiKeys = pgTable(
  'api_keys',
  {
    id: uuid('id').primaryKey(),
    tenantId: uuid('tenant_id')
      .notNull()
      .references(() => tenants.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    roleType: text('role_type').notNull(),
    /** SHA-256 of the secret: keys are 256-bit random, so a fast hash is enough and keeps lookups cheap. */
    keyHash: text('key_hash').notNull().unique(),
    createdAt: createdAt('created_at'),
  },
  // The default list order (CreatedAt, then id) read straight off the index: a page costs its own rows, not a sort.
  (t) => [index('api_keys_tenant_created_id').on(t.tenantId, t.createdAt, t.id)],
);
