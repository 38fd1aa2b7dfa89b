import { integer, jsonb, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { createdAt, modifiedAt } from './columns.ts';

/** Every module's rows reference a tenant, so the table is shared ground; the admin module owns its rules. */
export const tenants = pgTable('tenants', {
  id: uuid('id').primaryKey(),
  name: text('name').notNull().unique(),
  status: text('status').notNull().default('Active'),
  statusMessage: text('status_message').notNull().default(''),
  channelsLimit: integer('channels_limit').notNull().default(5),
  settings: jsonb('settings').$type<Record<string, unknown>>().notNull().default({}),
  createDate: createdAt(),
  lastModificationDate: modifiedAt(),
});
