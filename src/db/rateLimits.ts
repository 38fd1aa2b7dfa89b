import { bigint, integer, pgTable, primaryKey, text } from 'drizzle-orm/pg-core';

/**
 * Requests counted per rate-limit key (a tenant) and fixed window, shared by every API process on one PostgreSQL
 * database (`src/platform/rateLimit.ts`). Windows are numbered from the epoch, so processes agree on them without
 * talking to each other; rows of past windows are deleted as processes sync.
 */
export const rateLimitCounts = pgTable(
  'rate_limit_counts',
  {
    key: text('key').notNull(),
    /** The window's number: its start in milliseconds since the epoch divided by its length. */
    window: bigint('window', { mode: 'number' }).notNull(),
    count: integer('count').notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.key, t.window] })],
);
