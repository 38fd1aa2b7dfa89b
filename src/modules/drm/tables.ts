import { bigserial, boolean, index, integer, pgTable, primaryKey, text, uuid } from 'drizzle-orm/pg-core';
import { createdAt, dateTime, modifiedAt, textArray } from '../../db/columns.ts';
import { tenants } from '../../db/tenants.ts';

/** Content keys: one row per key id, for one content id of one tenant. The key itself is sealed (keyStore.ts). */
export const drmKeys = pgTable(
  'drm_keys',
  {
    tenantId: uuid('tenant_id')
      .notNull()
      .references(() => tenants.id, { onDelete: 'cascade' }),
    /** Chosen by the packager (SPEKE) or by us; unique per tenant only: tenants never see each other's key ids. */
    keyId: uuid('key_id').notNull(),
    contentId: text('content_id').notNull(),
    /** AES-256-GCM of the 16-byte key under the master key: base64url of iv (12) | tag (16) | ciphertext (16). */
    sealedKey: text('sealed_key').notNull(),
    createDate: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.keyId] }), index('drm_keys_tenant_content').on(t.tenantId, t.contentId)],
);

export const drmPolicies = pgTable(
  'drm_policies',
  {
    id: uuid('id').primaryKey(),
    tenantId: uuid('tenant_id')
      .notNull()
      .references(() => tenants.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    licenseDurationSeconds: integer('license_duration_seconds').notNull(),
    rentalWindowSeconds: integer('rental_window_seconds'),
    playbackDurationSeconds: integer('playback_duration_seconds'),
    persistent: boolean('persistent').notNull().default(false),
    allowedOutputs: textArray('allowed_outputs'),
    concurrentStreams: integer('concurrent_streams'),
    createDate: createdAt(),
    lastModificationDate: modifiedAt(),
  },
  (t) => [index('drm_policies_tenant_created').on(t.tenantId, t.createDate)],
);

export const drmSettings = pgTable('drm_settings', {
  tenantId: uuid('tenant_id')
    .primaryKey()
    .references(() => tenants.id, { onDelete: 'cascade' }),
  defaultPolicyId: uuid('default_policy_id'),
  tokenTtlSeconds: integer('token_ttl_seconds').notNull().default(600),
  /** A PEM certificate: SPEKE answers go only encrypted to it once set. */
  certificate: text('certificate'),
  lastModificationDate: modifiedAt(),
});

/** The license server's own log: every license request, granted or refused; the statistics read it. */
export const drmLicenseLog = pgTable(
  'drm_license_log',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    tenantId: uuid('tenant_id')
      .notNull()
      .references(() => tenants.id, { onDelete: 'cascade' }),
    time: dateTime('time').notNull().defaultNow(),
    /** `ClearKey` (DASH) or `Aes128` (HLS key). */
    type: text('type').notNull(),
    contentId: text('content_id'),
    keyIds: textArray('key_ids'),
    policyId: uuid('policy_id'),
    userId: text('user_id'),
    tokenId: text('token_id'),
    granted: boolean('granted').notNull(),
    /** The error code of a refusal (as in the error body), null when granted. */
    errorCode: text('error_code'),
    httpStatus: integer('http_status').notNull(),
  },
  (t) => [index('drm_license_log_tenant_time').on(t.tenantId, t.time)],
);
