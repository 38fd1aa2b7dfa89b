import { bigint, boolean, index, integer, jsonb, pgTable, primaryKey, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { createdAt, dateTime, modifiedAt } from '../../db/columns.ts';
import { tenants } from '../../db/tenants.ts';

export type SettingState = 'Enabled' | 'Disabled';
export const SETTING_NAMES = ['tokenRequired', 'devToolsAccess', 'cap', 'analytics', 'codeObfuscation'] as const;
export type SettingName = (typeof SETTING_NAMES)[number];
export type SettingStates = Partial<Record<SettingName, SettingState>>;

export interface ChapterRow {
  id: string;
  title: string | null;
  startSecond: number;
  endSecond: number;
}
export interface TagRow {
  id: string;
  name: string;
}
export interface ImageRow {
  Id: string | null;
  Name: string | null;
  Url: string;
}
export interface FrameRow {
  id: string;
  name: string;
  fileKey: string;
  /** Seconds into the asset; the poster is `poster`. */
  second: number | null;
}

/** The domains whose pages may play a tenant's media (spec: allowed domains). */
export const streamingDomains = pgTable(
  'streaming_domains',
  {
    /** `playerDomainId`. */
    id: uuid('id').primaryKey(),
    analyticsDomainId: uuid('analytics_domain_id').notNull(),
    tenantId: uuid('tenant_id')
      .notNull()
      .references(() => tenants.id, { onDelete: 'cascade' }),
    url: text('url').notNull(),
    /** The URL's host, lower case: what an Origin or Referer is compared with. */
    host: text('host').notNull(),
    createDate: createdAt(),
  },
  (t) => [uniqueIndex('streaming_domains_tenant_host').on(t.tenantId, t.host)],
);

/** A tenant's streaming settings: its playback signing key and the defaults of the asset settings. */
export const streamingTenantSettings = pgTable('streaming_tenant_settings', {
  tenantId: uuid('tenant_id')
    .primaryKey()
    .references(() => tenants.id, { onDelete: 'cascade' }),
  /** HS256 key of playback tokens: a secret the tenant reads back to sign tokens (like the webhook secret); never logged. */
  signingKey: text('signing_key').notNull(),
  /** The key a rotation replaced: it still verifies tokens until the expiration date (the overlap); then it is unused. */
  previousSigningKey: text('previous_signing_key'),
  previousSigningKeyExpirationDate: dateTime('previous_signing_key_expiration_date'),
  /** Tenant defaults of the asset settings (`settings.*.tenant`); unset means Disabled. */
  defaults: jsonb('defaults').$type<SettingStates>().notNull().default({}),
  /** Simultaneous playback sessions one token (or viewer) may hold when `cap` is Enabled. */
  capLimit: integer('cap_limit').notNull().default(1),
  createDate: createdAt(),
  lastModificationDate: modifiedAt(),
});

/**
 * What the streaming catalogue adds to an asset of any kind (VOD asset, live channel, ...): a row exists once the
 * asset was given a title, description, metadata, tags, images, chapters or settings here.
 */
export const streamingAssets = pgTable(
  'streaming_assets',
  {
    tenantId: uuid('tenant_id')
      .notNull()
      .references(() => tenants.id, { onDelete: 'cascade' }),
    /** The asset's id in its own module (VOD asset, live channel, event, recording). */
    assetId: text('asset_id').notNull(),
    title: text('title'),
    description: text('description'),
    metadata: jsonb('metadata').$type<Record<string, string>>(),
    tags: jsonb('tags').$type<TagRow[]>().notNull().default([]),
    images: jsonb('images').$type<Record<string, ImageRow>>().notNull().default({}),
    chapters: jsonb('chapters').$type<ChapterRow[]>().notNull().default([]),
    settings: jsonb('settings').$type<SettingStates>().notNull().default({}),
    /** Still frames extracted from the asset (`images/frames`): `Pending`, `Available`, `Error`, or null (never asked). */
    framesStatus: text('frames_status'),
    frames: jsonb('frames').$type<FrameRow[]>().notNull().default([]),
    framesError: text('frames_error'),
    /** When the frames were taken; frames of a live stream (`framesFinal` false) are taken again once stale. */
    framesTakenAt: dateTime('frames_taken_at'),
    framesFinal: boolean('frames_final').notNull().default(true),
    /** The asset's status when they were taken: a live stream's are taken again when it changes (an event finished). */
    framesAssetStatus: text('frames_asset_status'),
    lastModificationDate: modifiedAt(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.assetId] })],
);

/** Images uploaded for an asset, through presigned multipart uploads like VOD files. */
export const streamingImages = pgTable(
  'streaming_images',
  {
    id: uuid('id').primaryKey(),
    tenantId: uuid('tenant_id')
      .notNull()
      .references(() => tenants.id, { onDelete: 'cascade' }),
    assetId: text('asset_id').notNull(),
    name: text('name').notNull(),
    orginalFileName: text('orginal_file_name').notNull(),
    fileKey: text('file_key').notNull(),
    fileSize: bigint('file_size', { mode: 'number' }).notNull(),
    /** `Uploading`, `Completed`, `Error`. */
    status: text('status').notNull(),
    /** From ffprobe once completed: `png`, `mjpeg`, `webp`, ... */
    fileType: text('file_type'),
    uploadId: text('upload_id'),
    partSize: bigint('part_size', { mode: 'number' }).notNull(),
    partsCount: integer('parts_count').notNull(),
    createDate: createdAt(),
    lastModificationDate: modifiedAt(),
  },
  (t) => [index('streaming_images_tenant_asset').on(t.tenantId, t.assetId, t.createDate)],
);

/** Playback sessions held under `cap`: one row per token (or viewer) and session, renewed while it plays. */
export const streamingSessions = pgTable(
  'streaming_sessions',
  {
    tenantId: uuid('tenant_id')
      .notNull()
      .references(() => tenants.id, { onDelete: 'cascade' }),
    /** A hash of the token (or of the viewer's address and agent when there is none). */
    holder: text('holder').notNull(),
    session: text('session').notNull(),
    assetId: text('asset_id').notNull(),
    lastSeen: dateTime('last_seen').notNull(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.holder, t.session] })],
);
