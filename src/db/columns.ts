import { sql } from 'drizzle-orm';
import { text, timestamp } from 'drizzle-orm/pg-core';

/** Column helpers every table shares. */
export const createdAt = (name = 'create_date') => timestamp(name, { withTimezone: true, mode: 'date' }).notNull().defaultNow();
export const modifiedAt = () => timestamp('last_modification_date', { withTimezone: true, mode: 'date' }).notNull().defaultNow();
export const dateTime = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });
export const textArray = (name: string) =>
  text(name)
    .array()
    .notNull()
    .default(sql`'{}'::text[]`);
