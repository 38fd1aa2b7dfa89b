import { bigint, index, integer, pgTable, primaryKey, text, uuid } from 'drizzle-orm/pg-core';
import { liveChannels } from './tables.ts';

/**
 * The channel's timeline: one row per published segment of every track, written in batches by the channel's owner
 * and removed with the segment at the end of the retention window (`MEDIAPLANE_LIVE_RETENTION_SECONDS`). Recordings
 * and event catch-up are ranges over it (`timeline.ts`). Keys are relative to the channel's output prefix.
 */
export const liveTimelineSegments = pgTable(
  'live_timeline_segments',
  {
    channelId: uuid('channel_id')
      .notNull()
      .references(() => liveChannels.id, { onDelete: 'cascade' }),
    tenantId: uuid('tenant_id').notNull(),
    /** The rendition (`720p`), `audio`, or `captions` (live captions: the key is the wvtt segment, its `.vtt` goes with it). */
    track: text('track').notNull(),
    sequence: integer('sequence').notNull(),
    key: text('key').notNull(),
    initKey: text('init_key').notNull(),
    /** Wall-clock time of its first frame (EXT-X-PROGRAM-DATE-TIME), ms since the epoch. */
    startMs: bigint('start_ms', { mode: 'number' }).notNull(),
    durationMs: integer('duration_ms').notNull(),
    /** baseMediaDecodeTime in `timescale` (DASH SegmentTimeline). */
    decodeTime: bigint('decode_time', { mode: 'number' }).notNull(),
    timescale: integer('timescale').notNull(),
    /** The encoder run that made it: runs change at an input loss or reconnect, and at every channel start. */
    run: integer('run').notNull(),
  },
  (t) => [primaryKey({ columns: [t.channelId, t.track, t.sequence] }), index('live_timeline_channel_start').on(t.channelId, t.startMs)],
);
