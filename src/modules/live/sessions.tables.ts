import { bigint, index, jsonb, pgTable, uuid } from 'drizzle-orm/pg-core';
import { dateTime } from '../../db/columns.ts';
import { liveChannels, type AutoRecordRow } from './tables.ts';

/**
 * A channel's on-air sessions (docs/decisions/live.md, "Sessions"): from the first segment its input (the encoder)
 * produced until that input has been gone for MEDIAPLANE_AUTORECORD_RECONNECT_SECONDS, or the channel stopped. Times
 * are on the channel's timeline (`live_timeline_segments.start_ms`), so a session is a range of it. Written by the
 * channel's owner (the runner); read by the Recorder through live's front door (`autoRecordedSessions`).
 */
export const liveChannelSessions = pgTable(
  'live_channel_sessions',
  {
    id: uuid('id').primaryKey(),
    tenantId: uuid('tenant_id').notNull(),
    channelId: uuid('channel_id')
      .notNull()
      .references(() => liveChannels.id, { onDelete: 'cascade' }),
    /** The start of the first segment the input produced (ms on the timeline). */
    startMs: bigint('start_ms', { mode: 'number' }).notNull(),
    /** The end of the last segment the input produced, as last written (at an input loss, at the end). */
    liveUntilMs: bigint('live_until_ms', { mode: 'number' }),
    /** When the input was lost (wall clock), null while it is there: the reconnect window counts from it. */
    lostAt: dateTime('lost_at'),
    /** The session's end on the timeline (the end of the input's last segment); null while it is on air. */
    endMs: bigint('end_ms', { mode: 'number' }),
    /** The channel's `autoRecord` as the session began (an update of the channel applies to its open session too). */
    autoRecord: jsonb('auto_record').$type<AutoRecordRow>().notNull(),
    createDate: dateTime('create_date').notNull().defaultNow(),
  },
  (t) => [index('live_channel_sessions_channel').on(t.channelId, t.endMs), index('live_channel_sessions_end').on(t.endMs)],
);
