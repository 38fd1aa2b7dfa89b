import { errors, jwtVerify, SignJWT } from 'jose';
import type { PlatformContext } from '../../context.ts';
import { ApiError, notFound, validationError } from '../../platform/errors.ts';
import type { ErrorCode } from '../../platform/errorCodes.ts';
import { newId } from '../../platform/ids.ts';
import { findPlayable } from '../../platform/playables.ts';
import { CONTENT_ID, contentHasKeys, secretsOf } from './keys.ts';
import { getSettings, policyRow } from './policies.ts';

/** What a DRM token grants: licenses for one content id of one tenant, under one policy, for one viewer. */
export interface DrmClaims {
  tenantId: string;
  contentId: string;
  policyId: string | null;
  userId: string | null;
  tokenId: string;
}

const ISSUER = 'mediaplane-drm';
const TTL_MAX = 86400;

export interface TokenRequest {
  contentId?: string;
  assetId?: string;
  policyId?: string;
  userId?: string;
  expiresInSeconds?: number;
}

/** `get DRM token`: a signed, short-lived JWT (HS256) for a content (an asset's id) and a policy. */
export async function createToken(ctx: PlatformContext, tenantId: string, body: TokenRequest) {
  let contentId = body.contentId ?? body.assetId;
  if (!contentId) throw validationError('assetId', 'is required (or contentId)');
  if (!CONTENT_ID.test(contentId)) throw validationError(body.contentId ? 'contentId' : 'assetId', 'must be 1 to 256 printable ASCII characters');
  let hasKeys = await contentHasKeys(ctx, tenantId, contentId);
  if (!hasKeys && !body.contentId) {
    // An asset protected by another content's keys (a recording of a DRM channel: the channel's), of this tenant only.
    const found = await findPlayable(ctx, tenantId, contentId);
    if (found?.playable.drmContentId) {
      contentId = found.playable.drmContentId;
      hasKeys = await contentHasKeys(ctx, tenantId, contentId);
    }
  }
  if (!hasKeys) throw notFound('drm_content_not_found', 'DRM-protected content', body.contentId ?? body.assetId!);
  const settings = await getSettings(ctx.db, tenantId);
  const policyId = body.policyId ?? settings.defaultPolicyId;
  const policy = policyId ? await policyRow(ctx.db, tenantId, policyId) : undefined;
  // A license is only as long-lived as the token that obtains it: the policy's license duration bounds the token.
  const ttl = Math.min(body.expiresInSeconds ?? settings.tokenTtlSeconds, policy?.licenseDurationSeconds ?? TTL_MAX, TTL_MAX);
  const tokenId = newId();
  const now = Math.floor(Date.now() / 1000);
  const token = await new SignJWT({ tid: tenantId, cid: contentId, pid: policy?.id ?? null, uid: body.userId ?? null })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuer(ISSUER)
    .setJti(tokenId)
    .setIssuedAt(now)
    .setExpirationTime(now + ttl)
    .sign(secretsOf(ctx).tokenKey);
  return { token, tokenId, contentId, policyId: policy?.id ?? null, expirationDate: new Date((now + ttl) * 1000).toISOString() };
}

/** A refused token, with the tenant it names when its signature is good (the license log counts it there). */
export class TokenRefused extends ApiError {
  constructor(
    code: ErrorCode,
    message: string,
    readonly claims?: DrmClaims,
  ) {
    super(401, code, message);
  }
}

const claimsOf = (p: Record<string, unknown>): DrmClaims | undefined =>
  typeof p.tid === 'string' && typeof p.cid === 'string' && typeof p.jti === 'string'
    ? {
        tenantId: p.tid,
        contentId: p.cid,
        policyId: typeof p.pid === 'string' ? p.pid : null,
        userId: typeof p.uid === 'string' ? p.uid : null,
        tokenId: p.jti,
      }
    : undefined;

export async function verifyToken(ctx: PlatformContext, token: string | undefined): Promise<DrmClaims> {
  if (!token) throw new TokenRefused('drm_token_missing', 'A DRM token is required: Authorization: Bearer <token> or ?token=');
  try {
    const { payload } = await jwtVerify(token, secretsOf(ctx).tokenKey, { issuer: ISSUER, algorithms: ['HS256'] });
    const claims = claimsOf(payload);
    if (!claims) throw new TokenRefused('drm_token_invalid', 'The DRM token is not one of ours');
    return claims;
  } catch (e) {
    if (e instanceof TokenRefused) throw e;
    if (e instanceof errors.JWTExpired) throw new TokenRefused('drm_token_expired', 'The DRM token has expired', claimsOf(e.payload));
    throw new TokenRefused('drm_token_invalid', 'The DRM token is malformed or its signature is wrong');
  }
}
