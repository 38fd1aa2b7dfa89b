import { bigint, pgTable, primaryKey, text, uuid } from 'drizzle-orm/pg-core';

/**
 * A counter per tenant and collection, bumped by a database trigger in the transaction of every change to the
 * collection's rows (migration 0007). Rendered list pages are cached under the version the request reads
 * (`src/platform/listCache.ts`), so a change made by any process is seen by the next request of every process. No
 * foreign key: the trigger also fires for rows deleted with their tenant.
 */
export const collectionVersions = pgTable(
  'collection_versions',
  {
    tenantId: uuid('tenant_id').notNull(),
    collection: text('collection').notNull(),
    version: bigint('version', { mode: 'number' }).notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.collection] })],
);
