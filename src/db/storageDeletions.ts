import { pgTable, text, timestamp } from 'drizzle-orm/pg-core';

/**
 * Files to delete, by store prefix: written in the transaction that deletes the rows they belong to, so that files
 * never outlive their rows whatever stops between the commit and the deletion (`src/platform/storageDeletions.ts`).
 * A row stays until `dueAt`, when its prefix is deleted once more: a worker that was still writing into it (an encode
 * that had not yet seen its output deleted) has surely stopped by then.
 */
export const storageDeletions = pgTable('storage_deletions', {
  prefix: text('prefix').primaryKey(),
  dueAt: timestamp('due_at', { withTimezone: true }).notNull(),
});
