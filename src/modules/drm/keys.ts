import { randomBytes } from 'node:crypto';
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
