import { sql } from 'drizzle-orm';
import { bigint, index, integer, jsonb, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { createdAt, modifiedAt, textArray } from '../../db/columns.ts';
import { tenants } from '../../db/tenants.ts';
import type { MediaInfo } from '../../media/inspect.ts';
import type { MediaTrack } from '../../media/probe.ts';

/** Uploaded source files (spec: "Uploaded file"). */
export const vodFiles = pgTable(
  'vod_files',
  {
    id: uuid('id').primaryKey(),
    tenantId: uuid('tenant_id')
      .notNull()
      .references(() => tenants.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    friendlyName: text('friendly_name').notNull(),
    /** The `name` given at start; `name` may be renamed later, this never changes. */
    orginalFileName: text('orginal_file_name').notNull(),
    /** Lower-case extension of the original name with its dot (`.mp4`), for `allowedExtensionsFile`. */
    extension: text('extension').notNull(),
    fileKey: text('file_key').notNull(),
    fileSize: bigint('file_size', { mode: 'number' }).notNull(),
    status: text('status').notNull(),
    /** From the extension at start, from the media itself once completed. */
    fileTypes: text('file_types').notNull(),
    metadata: jsonb('metadata').$type<Record<string, string>>().notNull().default({}),
    tags: textArray('tags'),
    attributes: textArray('attributes'),
    tracks: jsonb('tracks')
      .$type<MediaTrack[]>()
      .notNull()
      .default(sql`'[]'::jsonb`),
    durationMs: bigint('duration_ms', { mode: 'number' }),
    /** ffprobe's answer as the transcoder reads it (`MediaInfo`, under its shape's version); its encodes start from it. */
    mediaInfo: jsonb('media_info').$type<{ version: number; info: MediaInfo }>(),
    /** Assets made from this file; kept by the assets module through linkAssetToFiles/unlinkAsset. */
    vodAssets: textArray('vod_assets'),
    /** The store's multipart upload while Uploading; null once completed or cancelled. */
    uploadId: text('upload_id'),
    partSize: bigint('part_size', { mode: 'number' }).notNull(),
    /** The URL an imported file is fetched from (`POST /vod/v1/files/import`); null for an upload. */
    importUrl: text('import_url'),
    /** An import's bytes received so far (its progress while Uploading). */
    bytesReceived: bigint('bytes_received', { mode: 'number' }),
    /** Why a file went to Error, in words (an import that failed); null otherwise. */
    errorMessage: text('error_message'),
    partsCount: integer('parts_count').notNull(),
    createDate: createdAt(),
    lastModificationDate: modifiedAt(),
  },
  (t) => [index('vod_files_tenant_created').on(t.tenantId, t.createDate), index('vod_files_tenant_status').on(t.tenantId, t.status)],
);
