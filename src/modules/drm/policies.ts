import { and, asc, count, eq } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { ApiError, notFound, validationError } from '../../platform/errors.ts';
import { recordEvent } from '../../platform/events.ts';
import { newId } from '../../platform/ids.ts';
import { envelope, pageWindow, pageArray, type PageRequest } from '../../platform/paging.ts';
import { drmPolicies, drmSettings } from './tables.ts';

/** What a license may unlock: the HLS AES-128 key, the DASH ClearKey license. */
export const LICENSE_TYPES = ['Aes128', 'ClearKey'] as const;
export type LicenseType = (typeof LICENSE_TYPES)[number];

export interface PolicyFields {
  name: string;
  licenseDurationSeconds: number;
  rentalWindowSeconds: number | null;
  playbackDurationSeconds: number | null;
  persistent: boolean;
  allowedOutputs: LicenseType[];
  concurrentStreams: number | null;
}

/** Ready-made starting points: `POST /drm/v1/policies` with a `templateId` copies one, the body's fields win. */
export const POLICY_TEMPLATES: (PolicyFields & { id: string; description: string })[] = [
  {
    id: 'subscription',
    description: 'Streaming for subscribers: licenses for a day, no download, three streams at once',
    name: 'Subscription',
    licenseDurationSeconds: 86400,
    rentalWindowSeconds: null,
    playbackDurationSeconds: null,
    persistent: false,
    allowedOutputs: ['Aes128', 'ClearKey'],
    concurrentStreams: 3,
  },
  {
    id: 'rental-48h',
    description: 'A rental: start within 30 days, then 48 hours to watch, one stream, playable offline',
    name: 'Rental 48 h',
    licenseDurationSeconds: 172800,
    rentalWindowSeconds: 30 * 86400,
    playbackDurationSeconds: 172800,
    persistent: true,
    allowedOutputs: ['Aes128', 'ClearKey'],
    concurrentStreams: 1,
  },
  {
    id: 'preview',
    description: 'A free preview: ten minutes of playback, streaming only',
    name: 'Preview',
    licenseDurationSeconds: 600,
    rentalWindowSeconds: null,
    playbackDurationSeconds: 600,
    persistent: false,
    allowedOutputs: ['Aes128', 'ClearKey'],
    concurrentStreams: null,
  },
];

/** The policy of a token that names none and a tenant with no default: any output, a day, no other limit. */
export const BUILT_IN_POLICY: PolicyFields & { id: null } = {
  id: null,
  name: 'Default',
  licenseDurationSeconds: 86400,
  rentalWindowSeconds: null,
  playbackDurationSeconds: null,
  persistent: false,
  allowedOutputs: ['Aes128', 'ClearKey'],
  concurrentStreams: null,
};

const POLICIES_PER_TENANT_MAX = 1000;

type PolicyRow = typeof drmPolicies.$inferSelect;

export const presentPolicy = (p: PolicyRow) => ({
  id: p.id,
  name: p.name,
  licenseDurationSeconds: p.licenseDurationSeconds,
  rentalWindowSeconds: p.rentalWindowSeconds,
  playbackDurationSeconds: p.playbackDurationSeconds,
  persistent: p.persistent,
  allowedOutputs: p.allowedOutputs as LicenseType[],
  concurrentStreams: p.concurrentStreams,
  createDate: p.createDate,
  lastModificationDate: p.lastModificationDate,
});

export const listPolicyTemplates = (q: PageRequest) => pageArray(POLICY_TEMPLATES, q);

export async function listPolicies(db: Db, tenantId: string, q: PageRequest) {
  const { limit, offset } = pageWindow(q);
  const where = eq(drmPolicies.tenantId, tenantId);
  const [rows, [{ total }]] = await Promise.all([
    db.select().from(drmPolicies).where(where).orderBy(asc(drmPolicies.createDate), asc(drmPolicies.id)).limit(limit).offset(offset),
    db.select({ total: count() }).from(drmPolicies).where(where),
  ]);
  return envelope(rows.map(presentPolicy), total, q);
}

export async function policyRow(db: Db, tenantId: string, id: string): Promise<PolicyRow> {
  const [row] = await db
    .select()
    .from(drmPolicies)
    .where(and(eq(drmPolicies.tenantId, tenantId), eq(drmPolicies.id, id)));
  if (!row) throw notFound('drm_policy_not_found', 'DRM policy', id);
  return row;
}

export const getPolicy = async (db: Db, tenantId: string, id: string) => presentPolicy(await policyRow(db, tenantId, id));

function checkPolicy(p: PolicyFields): void {
  if (new Set(p.allowedOutputs).size !== p.allowedOutputs.length) throw validationError('allowedOutputs', 'must not repeat a value');
}

export async function createPolicy(db: Db, tenantId: string, body: Partial<PolicyFields> & { templateId?: string }) {
  const template = body.templateId === undefined ? undefined : POLICY_TEMPLATES.find((t) => t.id === body.templateId);
  if (body.templateId !== undefined && !template)
    throw validationError('templateId', `unknown template "${body.templateId}"; GET /drm/v1/policies/templates lists them`);
  const base: PolicyFields = template ?? { ...BUILT_IN_POLICY, name: '' };
  const fields: PolicyFields = {
    name: body.name ?? base.name,
    licenseDurationSeconds: body.licenseDurationSeconds ?? base.licenseDurationSeconds,
    rentalWindowSeconds: body.rentalWindowSeconds !== undefined ? body.rentalWindowSeconds : base.rentalWindowSeconds,
    playbackDurationSeconds: body.playbackDurationSeconds !== undefined ? body.playbackDurationSeconds : base.playbackDurationSeconds,
    persistent: body.persistent ?? base.persistent,
    allowedOutputs: body.allowedOutputs ?? base.allowedOutputs,
    concurrentStreams: body.concurrentStreams !== undefined ? body.concurrentStreams : base.concurrentStreams,
  };
  if (!fields.name.trim()) throw validationError('name', 'is required (or give a templateId)');
  checkPolicy(fields);
  return db.transaction(async (tx) => {
    const [{ total }] = await tx.select({ total: count() }).from(drmPolicies).where(eq(drmPolicies.tenantId, tenantId));
    if (total >= POLICIES_PER_TENANT_MAX) throw new ApiError(409, 'drm_policy_limit', `A tenant has at most ${POLICIES_PER_TENANT_MAX} DRM policies`);
    const [row] = await tx
      .insert(drmPolicies)
      .values({ id: newId(), tenantId, ...fields })
      .returning();
    await recordEvent(tx, tenantId, 'drm.policy.created', { id: row.id });
    return presentPolicy(row);
  });
}

export async function updatePolicy(db: Db, tenantId: string, id: string, body: Partial<PolicyFields>) {
  return db.transaction(async (tx) => {
    const current = await policyRow(tx as unknown as Db, tenantId, id);
    const fields: PolicyFields = { ...current, ...Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined)) } as PolicyFields;
    if (!fields.name.trim()) throw validationError('name', 'must not be empty');
    checkPolicy(fields);
    const [row] = await tx
      .update(drmPolicies)
      .set({
        name: fields.name,
        licenseDurationSeconds: fields.licenseDurationSeconds,
        rentalWindowSeconds: fields.rentalWindowSeconds,
        playbackDurationSeconds: fields.playbackDurationSeconds,
        persistent: fields.persistent,
        allowedOutputs: fields.allowedOutputs,
        concurrentStreams: fields.concurrentStreams,
        lastModificationDate: new Date(),
      })
      .where(and(eq(drmPolicies.tenantId, tenantId), eq(drmPolicies.id, id)))
      .returning();
    await recordEvent(tx, tenantId, 'drm.policy.updated', { id });
    return presentPolicy(row);
  });
}

export async function deletePolicy(db: Db, tenantId: string, id: string): Promise<void> {
  await db.transaction(async (tx) => {
    const rows = await tx
      .delete(drmPolicies)
      .where(and(eq(drmPolicies.tenantId, tenantId), eq(drmPolicies.id, id)))
      .returning({ id: drmPolicies.id });
    if (!rows.length) throw notFound('drm_policy_not_found', 'DRM policy', id);
    // Tokens naming it stop working (the license server finds no policy); the tenant's default falls back.
    await tx
      .update(drmSettings)
      .set({ defaultPolicyId: null })
      .where(and(eq(drmSettings.tenantId, tenantId), eq(drmSettings.defaultPolicyId, id)));
    await recordEvent(tx, tenantId, 'drm.policy.deleted', { id });
  });
}

export interface DrmSettingsFields {
  defaultPolicyId: string | null;
  tokenTtlSeconds: number;
}

export async function getSettings(db: Db, tenantId: string) {
  const [row] = await db.select().from(drmSettings).where(eq(drmSettings.tenantId, tenantId));
  return {
    defaultPolicyId: row?.defaultPolicyId ?? null,
    tokenTtlSeconds: row?.tokenTtlSeconds ?? 600,
    hasCertificate: Boolean(row?.certificate),
    lastModificationDate: row?.lastModificationDate ?? null,
  };
}

export async function updateSettings(db: Db, tenantId: string, body: Partial<DrmSettingsFields>) {
  if (body.defaultPolicyId) await policyRow(db, tenantId, body.defaultPolicyId);
  await db.transaction(async (tx) => {
    const set = {
      ...(body.defaultPolicyId !== undefined ? { defaultPolicyId: body.defaultPolicyId } : {}),
      ...(body.tokenTtlSeconds !== undefined ? { tokenTtlSeconds: body.tokenTtlSeconds } : {}),
      lastModificationDate: new Date(),
    };
    await tx
      .insert(drmSettings)
      .values({ tenantId, ...set })
      .onConflictDoUpdate({ target: drmSettings.tenantId, set });
    await recordEvent(tx, tenantId, 'drm.settings.updated', { id: tenantId });
  });
  return getSettings(db, tenantId);
}
