import { bigint, boolean, index, integer, jsonb, pgTable, primaryKey, text, uuid } from 'drizzle-orm/pg-core';
import { createdAt, dateTime, modifiedAt, textArray } from '../../db/columns.ts';
import { leaseColumns } from '../../db/lease.ts';
import { tenants } from '../../db/tenants.ts';
import type { Overlay } from '../../media/overlays.ts';

/** An output location in the spec's EndpointInfo shape. */
export interface EndpointRow {
  id: string;
  accessType: 'Http';
  format: string;
  url: string;
  preset?: string;
  /** `None`; of a recording of a DRM channel's catch-up and archive, `Aes128` or `ClearKey` (recorder/drm.ts). */
  protection: 'None' | 'Aes128' | 'ClearKey';
  protectionDetails?: { keyIds: string[]; contentId: string };
  type?: 'HlsDrm' | 'DashDrm';
  isDrmProtected?: boolean;
  drmKeyMode?: string;
  durationMilliseconds?: number;
  size?: number;
  manifest: string;
  hasVerticalOrientation: boolean;
}

/** `archive.*` as asked, and what became of it. */
export interface ArchiveRow {
  enabled: boolean;
  delaySeconds: number;
  public: boolean;
  expirationDate: string | null;
  /** null while the recording is not recorded yet (or the archive is disabled). */
  status: 'Pending' | 'Processing' | 'Available' | 'Error' | 'Finished' | null;
  /** When the copy may start: the recording's end + `delaySeconds`. */
  dueAt: string | null;
  archivisationCompletedDate: string | null;
  errorMessage?: string | null;
}

/**
 * The protection of a recording of a channel with DRM endpoints, taken from the channel (recorder/drm.ts) and kept: a
 * recording outlives its channel, and must not play clear once the channel is gone. `endpoints`: the channel's
 * protected endpoints (HLS AES-128 under `aes128/`, HLS SAMPLE-AES and DASH under `cenc/`, `cbcs/`).
 */
export interface RecordingDrm {
  endpoints: { format: 'HLS' | 'DASH'; scheme: 'aes-128' | 'cenc' | 'cbcs' }[];
  drmKeyMode: 'SingleKey' | 'AudioVideoKeys';
  /** The channel's key ids (video first): the channel is the content, the recording plays with its keys. */
  keyIds: string[];
}

export type RecordingStatus = 'Pending' | 'Live' | 'Processing' | 'Available' | 'Error';

/**
 * A recording: a range of a live channel's timeline, copied (never re-encoded) into the recording's own prefix as it
 * is recorded, so that it outlives the channel's retention. `copied` is the last timeline sequence copied per track.
 */
export const recorderRecordings = pgTable(
  'recorder_recordings',
  {
    id: uuid('id').primaryKey(),
    tenantId: uuid('tenant_id')
      .notNull()
      .references(() => tenants.id, { onDelete: 'cascade' }),
    /** No foreign key: a recording outlives its channel. */
    channelId: uuid('channel_id').notNull(),
    sourceType: text('source_type').notNull().default('LiveChannel'),
    start: dateTime('start').notNull(),
    /** null: until the channel stops producing. */
    end: dateTime('end'),
    title: text('title'),
    metadata: jsonb('metadata').$type<Record<string, string>>().notNull().default({}),
    tags: textArray('tags'),
    attributes: textArray('attributes'),
    status: text('status').$type<RecordingStatus>().notNull().default('Pending'),
    errorMessage: text('error_message'),
    durationMilliseconds: bigint('duration_ms', { mode: 'number' }),
    catchupEnabled: boolean('catchup_enabled').notNull().default(false),
    /** Until when the recorded media (and the catch-up address) lives. */
    catchupExpirationTime: dateTime('catchup_expiration_time').notNull(),
    /** The catch-up media was removed at its expiration. */
    catchupExpired: boolean('catchup_expired').notNull().default(false),
    archive: jsonb('archive').$type<ArchiveRow>().notNull(),
    expirationDate: dateTime('expiration_date'),
    overlays: jsonb('overlays').$type<Overlay[]>().notNull().default([]),
    accessPolicyId: uuid('access_policy_id'),
    /** null: the channel had no DRM endpoints (the recording plays clear). */
    drm: jsonb('drm').$type<RecordingDrm>(),
    copied: jsonb('copied').$type<Record<string, number>>().notNull().default({}),
    /**
     * When the last segment was recorded (or, before the first, when the copy first saw its channel running): an open
     * range ends once its channel stops producing, even one that stopped before anything of the range was made.
     */
    recordedAt: dateTime('recorded_at'),
    /** The worker copying it and until when its claim holds. */
    ...leaseColumns(),
    createDate: createdAt(),
    lastModificationDate: modifiedAt(),
  },
  (t) => [index('recorder_recordings_tenant_created').on(t.tenantId, t.createDate), index('recorder_recordings_status').on(t.status, t.start)],
);

/** One copied segment of a recording (keys relative to the recording's media prefix). */
export const recorderSegments = pgTable(
  'recorder_segments',
  {
    recordingId: uuid('recording_id')
      .notNull()
      .references(() => recorderRecordings.id, { onDelete: 'cascade' }),
    track: text('track').notNull(),
    sequence: integer('sequence').notNull(),
    key: text('key').notNull(),
    initKey: text('init_key').notNull(),
    startMs: bigint('start_ms', { mode: 'number' }).notNull(),
    durationMs: integer('duration_ms').notNull(),
    run: integer('run').notNull(),
    size: integer('size').notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.recordingId, t.track, t.sequence] })],
);

/** One transcoding of a recording with one preset (the VOD pipeline), once the recording is recorded. */
export const recorderOutputs = pgTable(
  'recorder_outputs',
  {
    recordingId: uuid('recording_id')
      .notNull()
      .references(() => recorderRecordings.id, { onDelete: 'cascade' }),
    id: text('id').notNull(),
    tenantId: uuid('tenant_id').notNull(),
    preset: text('preset').notNull(),
    /** Pending until the recording is recorded; Queued once its job is sent. */
    status: text('status').notNull().default('Pending'),
    progressPercent: integer('progress_percent').notNull().default(0),
    overlays: jsonb('overlays').$type<Overlay[]>().notNull().default([]),
    endpoints: jsonb('endpoints').$type<EndpointRow[]>().notNull().default([]),
    errorMessage: text('error_message'),
    expirationDate: dateTime('expiration_date'),
    completionDate: dateTime('completion_date'),
    attempts: integer('attempts').notNull().default(0),
    createDate: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.recordingId, t.id] }), index('recorder_outputs_status').on(t.status)],
);

/**
 * The on-air sessions of live channels with `autoRecord` (src/modules/recorder/autoRecord.ts) the Recorder has made a
 * recording of: one row per session, kept when the recording is deleted, so that a session is recorded once. `ended`:
 * the recording was given the session's end.
 */
export const recorderAutoSessions = pgTable('recorder_auto_sessions', {
  sessionId: uuid('session_id').primaryKey(),
  tenantId: uuid('tenant_id')
    .notNull()
    .references(() => tenants.id, { onDelete: 'cascade' }),
  recordingId: uuid('recording_id').notNull(),
  ended: boolean('ended').notNull().default(false),
  createDate: createdAt(),
});

export type RecordingRow = typeof recorderRecordings.$inferSelect;
export type OutputRow = typeof recorderOutputs.$inferSelect;
