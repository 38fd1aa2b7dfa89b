import { boolean, index, jsonb, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { createdAt, dateTime, modifiedAt, textArray } from '../../../db/columns.ts';
import { tenants } from '../../../db/tenants.ts';
import { liveChannels } from '../tables.ts';

/** The statuses the clock gives an event (the spec's AssetStatus values for events). */
export const EVENT_STATUSES = ['Scheduled', 'Live', 'Finished'] as const;
export type EventStatus = (typeof EVENT_STATUSES)[number];

/**
 * What an `ensureChannel` event has done to its channel: `Waiting` (nothing yet), `Holding` (it started the channel,
 * or found it running, and keeps it on), `Released` (its window is over; it no longer keeps the channel on).
 */
export type ChannelHold = 'Waiting' | 'Holding' | 'Released';

/** Events scheduled on a channel; they go with their channel when it is deleted. */
export const liveEvents = pgTable(
  'live_events',
  {
    /** `^[a-zA-Z0-9_-]{1,128}$` (spec); the service issues UUIDs, which match it. */
    id: text('id').primaryKey(),
    tenantId: uuid('tenant_id')
      .notNull()
      .references(() => tenants.id, { onDelete: 'cascade' }),
    channelId: uuid('channel_id')
      .notNull()
      .references(() => liveChannels.id, { onDelete: 'cascade' }),
    title: text('title'),
    start: dateTime('start_time').notNull(),
    end: dateTime('end_time').notNull(),
    ensureChannel: boolean('ensure_channel').notNull().default(false),
    metadata: jsonb('metadata').$type<Record<string, string>>().notNull().default({}),
    tags: textArray('tags'),
    attributes: textArray('attributes'),
    accessPolicyId: uuid('access_policy_id'),
    /**
     * The status last announced by a webhook event. What the API answers is computed from the database's clock
     * (`status.ts`); the scheduler moves this column to it, one process per change (a conditional UPDATE).
     */
    announcedStatus: text('announced_status').$type<EventStatus>().notNull(),
    channelHold: text('channel_hold').$type<ChannelHold>().notNull().default('Waiting'),
    createDate: createdAt(),
    lastModificationDate: modifiedAt(),
  },
  (t) => [
    index('live_events_tenant_start').on(t.tenantId, t.start),
    index('live_events_channel').on(t.channelId),
    // The scheduler's two questions: which announcements are due, which holds are due.
    index('live_events_announced_start').on(t.announcedStatus, t.start),
    index('live_events_hold_start').on(t.channelHold, t.start),
  ],
);

export type EventRow = typeof liveEvents.$inferSelect;
