import { bigint, boolean, index, integer, jsonb, pgTable, real, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { createdAt, dateTime, modifiedAt } from '../../db/columns.ts';
import { tenants } from '../../db/tenants.ts';

/**
 * A VOD asset prepared for A/B watermarking (its two variants, the reference the detector compares against), or a
 * live channel with `isWatermarkProtected` (its pipeline encodes the two variants as it goes; `channelId` set).
 */
export const watermarkingAssets = pgTable(
  'watermarking_assets',
  {
    id: uuid('id').primaryKey(),
    tenantId: uuid('tenant_id')
      .notNull()
      .references(() => tenants.id, { onDelete: 'cascade' }),
    vodAssetId: uuid('vod_asset_id'),
    /** One asset per watermarked channel, for the channel's whole life: sessions and tokens outlive its restarts. */
    channelId: uuid('channel_id'),
    metadata: jsonb('metadata').$type<Record<string, string>>().notNull().default({}),
    status: text('status').notNull().default('Pending'),
    progress: integer('progress').notNull().default(0),
    errorMessage: text('error_message'),
    width: integer('width'),
    height: integer('height'),
    videoBitrateKbps: integer('video_bitrate_kbps'),
    /** Settings in force when it was prepared: the code and the pattern cannot change under existing sessions. */
    segmentDuration: integer('segment_duration').notNull(),
    userNumberBits: integer('user_number_bits').notNull(),
    strength: integer('strength').notNull(),
    segmentDurations: jsonb('segment_durations').$type<number[]>().notNull().default([]),
    /** The mark per detection grid cell (variant A minus the picture). */
    signature: jsonb('signature').$type<number[]>().notNull().default([]),
    /** The pg-boss job preparing it. */
    jobId: text('job_id'),
    createDate: createdAt(),
    lastModificationDate: modifiedAt(),
  },
  (t) => [index('watermarking_assets_tenant_created').on(t.tenantId, t.createDate), uniqueIndex('watermarking_assets_channel').on(t.channelId)],
);

/** A viewer's playback of a prepared asset, bound to a user number; revoked sessions get nothing more. */
export const watermarkingSessions = pgTable(
  'watermarking_sessions',
  {
    id: uuid('id').primaryKey(),
    tenantId: uuid('tenant_id')
      .notNull()
      .references(() => tenants.id, { onDelete: 'cascade' }),
    assetId: uuid('asset_id')
      .notNull()
      .references(() => watermarkingAssets.id, { onDelete: 'cascade' }),
    userNumber: bigint('user_number', { mode: 'number' }).notNull(),
    userName: text('user_name').notNull(),
    revoked: boolean('revoked').notNull().default(false),
    revokeDate: dateTime('revoke_date'),
    createDate: createdAt(),
    lastModificationDate: modifiedAt(),
  },
  (t) => [
    uniqueIndex('watermarking_sessions_asset_user').on(t.assetId, t.userNumber),
    index('watermarking_sessions_tenant_created').on(t.tenantId, t.createDate),
  ],
);

export interface DetectionRow {
  status: 'Pending' | 'Processing' | 'Detected' | 'NoMarkFound' | 'Error';
  progress: number;
  jobId: string;
  assetId?: string | null;
  userNumber?: number | null;
  userName?: string | null;
  sessionId?: string | null;
  confidence?: number | null;
  message?: string | null;
  completionDate?: string | null;
}

/** Suspect files uploaded for detection (the same multipart flow as VOD files). */
export const watermarkingFiles = pgTable(
  'watermarking_files',
  {
    id: uuid('id').primaryKey(),
    tenantId: uuid('tenant_id')
      .notNull()
      .references(() => tenants.id, { onDelete: 'cascade' }),
    orginalFileName: text('orginal_file_name').notNull(),
    fileKey: text('file_key').notNull(),
    fileSize: bigint('file_size', { mode: 'number' }).notNull(),
    uploadStatus: text('upload_status').notNull(),
    uploadId: text('upload_id'),
    partSize: bigint('part_size', { mode: 'number' }).notNull(),
    partsCount: integer('parts_count').notNull(),
    detection: jsonb('detection').$type<DetectionRow>(),
    createDate: createdAt(),
    lastModificationDate: modifiedAt(),
  },
  (t) => [index('watermarking_files_tenant_created').on(t.tenantId, t.createDate)],
);

/** A tenant's watermarking settings; a tenant without a row has the defaults. */
export const watermarkingSettings = pgTable('watermarking_settings', {
  tenantId: uuid('tenant_id')
    .primaryKey()
    .references(() => tenants.id, { onDelete: 'cascade' }),
  userNumberBits: integer('user_number_bits').notNull(),
  segmentDuration: integer('segment_duration').notNull(),
  strength: integer('strength').notNull(),
  tokenTtlSeconds: integer('token_ttl_seconds').notNull(),
  minConfidence: real('min_confidence').notNull(),
  lastModificationDate: modifiedAt(),
});
