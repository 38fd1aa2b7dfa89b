import { index, integer, pgTable, real, smallint, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { tenants } from '../../db/tenants.ts';

/**
 * Every beacon a player sends (and every CMCD-carrying media request), one row each, never updated: the analytics
 * operations aggregate these rows with SQL. Each row repeats its impression's context (asset, browser, ...), so that
 * grouping needs no join. Measures are null where a beacon kind does not carry them: `count` of a measure counts the
 * beacons that carry it (see docs/decisions/analytics.md).
 */
export const analyticsBeacons = pgTable(
  'analytics_beacons',
  {
    /** When the platform received the beacon: the players' clocks are not trusted. */
    time: timestamp('time', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    tenantId: uuid('tenant_id')
      .notNull()
      .references(() => tenants.id, { onDelete: 'cascade' }),
    impressionId: uuid('impression_id').notNull(),
    kind: text('kind').notNull(),
    /** `beacon` (our player) or `cmcd` (any player's media requests). */
    source: text('source').notNull().default('beacon'),
    assetId: text('asset_id'),
    assetType: text('asset_type'),
    playerTech: text('player_tech'),
    browser: text('browser'),
    os: text('os'),
    deviceType: text('device_type'),
    domain: text('domain'),
    playedSeconds: real('played_seconds'),
    videoBitrate: integer('video_bitrate'),
    bufferingMs: integer('buffering_ms'),
    startupTimeMs: integer('startup_time_ms'),
    errorCode: text('error_code'),
    exitedBeforeStart: smallint('exited_before_start'),
    playbackFailed: smallint('playback_failed'),
    adId: text('ad_id'),
    adPosition: text('ad_position'),
    adPlayedSeconds: real('ad_played_seconds'),
    adClicked: smallint('ad_clicked'),
    adSkipped: smallint('ad_skipped'),
  },
  (t) => [index('analytics_beacons_tenant_time').on(t.tenantId, t.time)],
);

export type BeaconRow = typeof analyticsBeacons.$inferInsert;
