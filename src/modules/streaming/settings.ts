import { createHash, randomBytes } from 'node:crypto';
import { and, eq, sql } from 'drizzle-orm';
import type { PlatformContext } from '../../context.ts';
import type { Queryable } from '../../db/client.ts';
import { SETTING_NAMES, streamingAssets, streamingTenantSettings, type SettingName, type SettingState, type SettingStates } from './tables.ts';

/** A new playback signing key: 256 random bits, base64url. Tokens are HS256 over its UTF-8 bytes. */
const newSigningKey = () => randomBytes(32).toString('base64url');

export type TenantSettingsRow = typeof streamingTenantSettings.$inferSelect;

/**
 * A key's id (the JWT header's `kid`): derived from the key (the first 16 characters of its SHA-256, base64url), so
 * that it names it without revealing it and needs no column of its own.
 */
export const signingKeyId = (key: string) => createHash('sha256').update(key).digest('base64url').slice(0, 16);

export interface SigningKey {
  kid: string;
  key: string;
}

/** The keys that verify tokens: the current one, then the one a rotation replaced while its overlap lasts. */
export function verifyingKeys(row: TenantSettingsRow, now = Date.now()): SigningKey[] {
  const keys = [{ kid: signingKeyId(row.signingKey), key: row.signingKey }];
  if (row.previousSigningKey && row.previousSigningKeyExpirationDate && row.previousSigningKeyExpirationDate.getTime() > now)
    keys.push({ kid: signingKeyId(row.previousSigningKey), key: row.previousSigningKey });
  return keys;
}

/** How long a replaced key keeps verifying tokens, unless the rotation says otherwise: a day, the longest token. */
export const DEFAULT_KEY_OVERLAP_SECONDS = 24 * 3600;
export const MAX_KEY_OVERLAP_SECONDS = 30 * 24 * 3600;

/**
 * Replaces the tenant's signing key. For `overlapSeconds` the old one still verifies tokens, so tokens signed before
 * (by the platform or by the tenant's servers) keep playing while signers switch; a rotation within the overlap of
 * another ends the older one at once (two keys verify at most).
 */
export async function rotateSigningKey(db: Queryable, tenantId: string, overlapSeconds: number): Promise<TenantSettingsRow> {
  await tenantSettings(db, tenantId);
  const overlap = overlapSeconds > 0;
  const [row] = await db
    .update(streamingTenantSettings)
    .set({
      signingKey: newSigningKey(),
      previousSigningKey: overlap ? sql`${streamingTenantSettings.signingKey}` : null,
      previousSigningKeyExpirationDate: overlap ? new Date(Date.now() + overlapSeconds * 1000) : null,
      lastModificationDate: new Date(),
    })
    .where(eq(streamingTenantSettings.tenantId, tenantId))
    .returning();
  forgetPolicies(tenantId);
  return row;
}

/** The tenant's streaming settings, created with a new signing key on first use (by whoever asks first). */
export async function tenantSettings(db: Queryable, tenantId: string): Promise<TenantSettingsRow> {
  const [found] = await db.select().from(streamingTenantSettings).where(eq(streamingTenantSettings.tenantId, tenantId));
  if (found) return found;
  await db.insert(streamingTenantSettings).values({ tenantId, signingKey: newSigningKey() }).onConflictDoNothing();
  const [row] = await db.select().from(streamingTenantSettings).where(eq(streamingTenantSettings.tenantId, tenantId));
  return row;
}

/**
 * A tenant's defaults until it sets its own: everything off except analytics, which the embed player sends the way
 * hosted players do (docs/decisions/streaming.md, "Settings").
 */
const INITIAL_DEFAULTS: Record<SettingName, SettingState> = {
  tokenRequired: 'Disabled',
  devToolsAccess: 'Disabled',
  cap: 'Disabled',
  analytics: 'Enabled',
  codeObfuscation: 'Disabled',
};

export const tenantState = (defaults: SettingStates, name: SettingName): SettingState => defaults[name] ?? INITIAL_DEFAULTS[name];

/** What applies to an asset: its own state when it has one, the tenant's default otherwise. */
export const effectiveState = (asset: SettingStates, defaults: SettingStates, name: SettingName): SettingState => asset[name] ?? tenantState(defaults, name);

/** `settings` of a streaming asset: each key with the asset's own state (null when it follows the tenant) and the tenant's. */
export function presentSettings(asset: SettingStates, defaults: SettingStates) {
  return Object.fromEntries(SETTING_NAMES.map((n) => [n, { asset: asset[n] ?? null, tenant: tenantState(defaults, n) }])) as Record<
    SettingName,
    { asset: SettingState | null; tenant: SettingState }
  >;
}

/** What media delivery needs to decide on one asset; read on every media request, so cached per process. */
export interface PlaybackPolicy {
  tokenRequired: boolean;
  cap: boolean;
  capLimit: number;
  /** The keys that verify its tokens (docs/decisions/streaming.md, "Playback tokens"). */
  signingKeys: SigningKey[];
}

const POLICY_CACHE_MS = 5000;
const policies = new Map<string, { until: number; policy: PlaybackPolicy }>();

export async function playbackPolicy(ctx: PlatformContext, tenantId: string, assetId: string): Promise<PlaybackPolicy> {
  const key = `${tenantId}/${assetId}`;
  const hit = policies.get(key);
  if (hit && hit.until > Date.now()) return hit.policy;
  const tenant = await tenantSettings(ctx.db, tenantId);
  const [asset] = await ctx.db
    .select({ settings: streamingAssets.settings })
    .from(streamingAssets)
    .where(and(eq(streamingAssets.tenantId, tenantId), eq(streamingAssets.assetId, assetId)));
  const states = asset?.settings ?? {};
  const policy = {
    tokenRequired: effectiveState(states, tenant.defaults, 'tokenRequired') === 'Enabled',
    cap: effectiveState(states, tenant.defaults, 'cap') === 'Enabled',
    capLimit: tenant.capLimit,
    signingKeys: verifyingKeys(tenant),
  };
  if (policies.size > 10_000) policies.clear();
  policies.set(key, { until: Date.now() + POLICY_CACHE_MS, policy });
  return policy;
}

/** Called after a settings change, so this process applies it at once (others within POLICY_CACHE_MS). */
export function forgetPolicies(tenantId: string, assetId?: string): void {
  if (assetId) policies.delete(`${tenantId}/${assetId}`);
  else for (const key of policies.keys()) if (key.startsWith(`${tenantId}/`)) policies.delete(key);
}
