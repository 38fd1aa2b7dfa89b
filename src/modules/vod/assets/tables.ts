import { bigint, foreignKey, index, integer, jsonb, pgTable, primaryKey, text, uuid } from 'drizzle-orm/pg-core';
import { createdAt, dateTime, modifiedAt, textArray } from '../../../db/columns.ts';
import { tenants } from '../../../db/tenants.ts';
import { leaseColumns } from '../../../db/lease.ts';
import type { DashSkeleton } from '../../../media/chunkMpd.ts';
import type { PartPlaylists } from '../../../media/chunkPlaylists.ts';
import type { Overlay } from '../../../media/overlays.ts';
import type { DrmKeyMode } from '../../drm/index.ts';

export interface TranscodingTrackRow {
  trackSelector: { trackId: string };
  type: string;
  language?: string;
  name?: string;
}

export interface VodSourceRow {
  fileId: string;
  transcodingTracks: TranscodingTrackRow[];
  fileTypesFlag?: string;
}

export interface EndpointRow {
  id: string;
  accessType: 'Http';
  format: string;
  url: string;
  preset: string;
  /** `None`, or `Aes128` (HlsDrm) / `ClearKey` (DashDrm); decisions in docs/decisions/drm.md. */
  protection: string;
  protectionDetails?: { keyIds: string[]; contentId: string };
  type?: 'HlsDrm' | 'DashDrm';
  isDrmProtected?: boolean;
  drmKeyMode?: DrmKeyMode;
  durationMilliseconds: number;
  size: number;
  manifest: string;
  hasVerticalOrientation: boolean;
}

/** Overlays are stored as the spec gives them; the media engine validates and burns them in. */
export type OverlayRow = Overlay;

export const vodAssets = pgTable(
  'vod_assets',
  {
    id: uuid('id').primaryKey(),
    tenantId: uuid('tenant_id')
      .notNull()
      .references(() => tenants.id, { onDelete: 'cascade' }),
    title: text('title'),
    preset: text('preset').notNull(),
    metadata: jsonb('metadata').$type<Record<string, string>>().notNull().default({}),
    tags: textArray('tags'),
    attributes: textArray('attributes'),
    status: text('status').notNull().default('Pending'),
    errorMessage: text('error_message'),
    durationMilliseconds: bigint('duration_ms', { mode: 'number' }),
    sources: jsonb('sources').$type<VodSourceRow[]>().notNull(),
    fileIds: jsonb('file_ids').$type<Record<string, string>>().notNull().default({}),
    overlays: jsonb('overlays').$type<OverlayRow[]>().notNull().default([]),
    accessPolicyId: uuid('access_policy_id'),
    /** The keys of the asset's protected outputs (docs/decisions/drm.md, "Key modes"); null: never asked for, SingleKey. */
    drmKeyMode: text('drm_key_mode'),
    sourceFileExtension: text('source_file_extension'),
    /** Captions made from the asset's speech (`aiCaptioningLanguageCode`, captions.ts): the language, then how far. */
    aiCaptioningLanguageCode: text('ai_captioning_language_code'),
    /** `Pending`, `Processing`, `Available`, `Error` (with the reason in `aiCaptioningError`). */
    aiCaptioningStatus: text('ai_captioning_status'),
    aiCaptioningError: text('ai_captioning_error'),
    createDate: createdAt(),
    lastModificationDate: modifiedAt(),
  },
  (t) => [index('vod_assets_tenant_created').on(t.tenantId, t.createDate)],
);

/** One transcoding of an asset with one preset; the asset's own preset makes its first output. */
export const vodOutputs = pgTable(
  'vod_outputs',
  {
    assetId: uuid('asset_id')
      .notNull()
      .references(() => vodAssets.id, { onDelete: 'cascade' }),
    id: text('id').notNull(),
    tenantId: uuid('tenant_id').notNull(),
    preset: text('preset').notNull(),
    status: text('status').notNull().default('Pending'),
    progressPercent: integer('progress_percent').notNull().default(0),
    overlays: jsonb('overlays').$type<OverlayRow[]>().notNull().default([]),
    endpoints: jsonb('endpoints').$type<EndpointRow[]>().notNull().default([]),
    errorMessage: text('error_message'),
    expirationDate: dateTime('expiration_date'),
    completionDate: dateTime('completion_date'),
    /** The worker running it and until when its claim holds; an expired claim means the worker died. */
    ...leaseColumns(),
    attempts: integer('attempts').notNull().default(0),
    /** The last transcoding job enqueued for it (the asset's `transcodedJobId`). */
    jobId: text('job_id'),
    createDate: createdAt(),
  },
  (t) => [
    primaryKey({ columns: [t.assetId, t.id] }),
    index('vod_outputs_status_lease').on(t.status, t.leaseUntil),
    index('vod_outputs_expiration').on(t.expirationDate),
  ],
);

/**
 * The parts of an output on the chunked path (docs/decisions/vod-chunked.md): one row per chunk of the source's video
 * and one for its audio and captions, each a job any worker takes. Their files are under the output's work prefix.
 */
export const vodOutputChunks = pgTable(
  'vod_output_chunks',
  {
    assetId: uuid('asset_id').notNull(),
    outputId: text('output_id').notNull(),
    /** 0.. in source order for video chunks; the audio part comes after the last. */
    index: integer('index').notNull(),
    tenantId: uuid('tenant_id').notNull(),
    kind: text('kind').$type<'video' | 'audio'>().notNull(),
    /** Source milliseconds; the last video chunk has no end (it runs to the source's last frame), the audio part neither. */
    startMs: bigint('start_ms', { mode: 'number' }).notNull(),
    endMs: bigint('end_ms', { mode: 'number' }),
    /** `Pending`, `Processing`, `Available`. */
    status: text('status').notNull().default('Pending'),
    progressPercent: integer('progress_percent').notNull().default(0),
    /** A chunk's stored segments by media playlist (media/chunkPlaylists.ts), as it writes them (HLS, DASH, CMAF). */
    segments: jsonb('segments').$type<PartPlaylists>().notNull().default({}),
    /** The first chunk of a DASH or CMAF output: its adaptation sets as its muxers described them (media/chunkMpd.ts). */
    dash: jsonb('dash').$type<DashSkeleton>(),
    ...leaseColumns(),
    attempts: integer('attempts').notNull().default(0),
    createDate: createdAt(),
  },
  (t) => [
    primaryKey({ columns: [t.assetId, t.outputId, t.index] }),
    foreignKey({ columns: [t.assetId, t.outputId], foreignColumns: [vodOutputs.assetId, vodOutputs.id] }).onDelete('cascade'),
    index('vod_output_chunks_status_lease').on(t.status, t.leaseUntil),
  ],
);
