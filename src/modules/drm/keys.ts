import { createHash, randomBytes } from 'node:crypto';
import { and, asc, eq, inArray } from 'drizzle-orm';
import type { PlatformContext } from '../../context.ts';
import { conflict } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import { drmSecrets, openKey, sealKey } from './keyStore.ts';
import { drmKeys } from './tables.ts';

export interface ContentKey {
  keyId: string;
  contentId: string;
  /** 16 bytes: never logged, never stored in clear. */
  key: Buffer;
}

/** Content ids are the caller's (SPEKE `contentId`, an asset id): any printable text up to 256 characters. */
export const CONTENT_ID = /^[\x21-\x7e][\x20-\x7e]{0,255}$/;

export const secretsOf = (ctx: PlatformContext) => drmSecrets(ctx.config.dataDir, ctx.config.drmMasterKey);

/**
 * The keys of `contentId` with these key ids, created (random, 16 bytes) for the ids not seen before. A key id the
 * tenant already uses for another content id is refused: one key must never protect two contents.
 */
export async function keysFor(ctx: PlatformContext, tenantId: string, contentId: string, keyIds: string[]): Promise<ContentKey[]> {
  const secrets = secretsOf(ctx);
  const wanted = [...new Set(keyIds.map((k) => k.toLowerCase()))];
  const fresh = wanted.map((keyId) => ({ tenantId, keyId, contentId, sealedKey: sealKey(secrets, keyId, randomBytes(16)) }));
  if (fresh.length > 0) await ctx.db.insert(drmKeys).values(fresh).onConflictDoNothing();
  const rows = wanted.length
    ? await ctx.db
        .select()
        .from(drmKeys)
        .where(and(eq(drmKeys.tenantId, tenantId), inArray(drmKeys.keyId, wanted)))
    : [];
  const taken = rows.find((r) => r.contentId !== contentId);
  if (taken) throw conflict('drm_key_id_in_use', `Key id ${taken.keyId} already protects another content id`);
  const byId = new Map(rows.map((r) => [r.keyId, r]));
  return keyIds.map((k) => {
    const r = byId.get(k.toLowerCase())!;
    return { keyId: r.keyId, contentId: r.contentId, key: openKey(secrets, r.keyId, r.sealedKey) };
  });
}

/** The first key of a content id (SingleKey mode), created when it has none. */
export async function singleKeyFor(ctx: PlatformContext, tenantId: string, contentId: string): Promise<ContentKey> {
  const [row] = await ctx.db
    .select()
    .from(drmKeys)
    .where(and(eq(drmKeys.tenantId, tenantId), eq(drmKeys.contentId, contentId)))
    .orderBy(asc(drmKeys.createDate))
    .limit(1);
  if (row) return { keyId: row.keyId, contentId, key: openKey(secretsOf(ctx), row.keyId, row.sealedKey) };
  return (await keysFor(ctx, tenantId, contentId, [newId()]))[0];
}

/**
 * drmKeyMode `AudioVideoKeys` (docs/decisions/drm.md, "Key modes"): the video tracks keep the content's first key (as
 * SingleKey), the audio tracks get their own, whose key id is derived from the content id. Derived, so that every
 * place that describes or encrypts a content (EndpointInfo, each pipeline of a live channel) names the same key
 * without storing it; key ids are public, the key itself stays random.
 */
export function audioKeyIdOf(contentId: string): string {
  const h = createHash('sha256').update(`mediaplane audio key id\0${contentId}`).digest();
  h[6] = (h[6]! & 0x0f) | 0x80; // UUID version 8 (custom), RFC 9562
  h[8] = (h[8]! & 0x3f) | 0x80;
  const x = h.subarray(0, 16).toString('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}

/** The keys of a content in a key mode: the first key, and in `AudioVideoKeys` the audio tracks' key too. */
export async function contentKeysFor(
  ctx: PlatformContext,
  tenantId: string,
  contentId: string,
  mode: DrmKeyMode,
): Promise<{ video: ContentKey; audio?: ContentKey }> {
  const video = await singleKeyFor(ctx, tenantId, contentId);
  if (mode !== 'AudioVideoKeys') return { video };
  const [audio] = await keysFor(ctx, tenantId, contentId, [audioKeyIdOf(contentId)]);
  return { video, audio };
}

/** `SingleKey`: one key for every track; `AudioVideoKeys`: one for the video tracks, another for the audio tracks. */
export const DRM_KEY_MODES = ['SingleKey', 'AudioVideoKeys'] as const;
export type DrmKeyMode = (typeof DRM_KEY_MODES)[number];

/** A stored key mode (a channel's, an asset's; null: never asked for) as the mode it means. */
export const keyModeOf = (mode: string | null | undefined): DrmKeyMode => (mode === 'AudioVideoKeys' ? 'AudioVideoKeys' : 'SingleKey');

/** The key ids of a protected content's endpoints, as EndpointInfo's `protectionDetails.keyIds` lists them (video first). */
export const keyIdsOf = (contentId: string, keyId: string, mode: string | null | undefined): string[] =>
  keyModeOf(mode) === 'AudioVideoKeys' ? [keyId, audioKeyIdOf(contentId)] : [keyId];

/** Keys by id, of this tenant only. */
export async function keysById(ctx: PlatformContext, tenantId: string, keyIds: string[]): Promise<ContentKey[]> {
  if (keyIds.length === 0) return [];
  const rows = await ctx.db
    .select()
    .from(drmKeys)
    .where(and(eq(drmKeys.tenantId, tenantId), inArray(drmKeys.keyId, keyIds)));
  const secrets = secretsOf(ctx);
  return rows.map((r) => ({ keyId: r.keyId, contentId: r.contentId, key: openKey(secrets, r.keyId, r.sealedKey) }));
}

export async function contentHasKeys(ctx: PlatformContext, tenantId: string, contentId: string): Promise<boolean> {
  const [row] = await ctx.db
    .select({ keyId: drmKeys.keyId })
    .from(drmKeys)
    .where(and(eq(drmKeys.tenantId, tenantId), eq(drmKeys.contentId, contentId)))
    .limit(1);
  return row !== undefined;
}
