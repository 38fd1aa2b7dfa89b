import { createHmac } from 'node:crypto';
import { errors, jwtVerify, SignJWT } from 'jose';
import type { PlatformContext } from '../../context.ts';
import { ApiError } from '../../platform/errors.ts';
import { resolveSigningSecret } from '../../storage/signing.ts';

/**
 * Redirector tokens are HS256 JWTs signed with a key derived from the platform's URL signing secret
 * (MEDIAPLANE_URL_SIGNING_SECRET, or the one kept in the data directory), so every process that signs store URLs can
 * check them without another setting. They name the session; the session decides the asset and the user number, and
 * is read on every request, so revoking it takes effect at once.
 */
const keys = new WeakMap<object, Uint8Array>();
function keyOf(ctx: PlatformContext): Uint8Array {
  let key = keys.get(ctx.config);
  if (!key) {
    const secret = resolveSigningSecret(ctx.config.dataDir, ctx.config.urlSigningSecret);
    key = new Uint8Array(createHmac('sha256', secret).update('mediaplane watermarking redirector token').digest());
    keys.set(ctx.config, key);
  }
  return key;
}

const ISSUER = 'mediaplane/watermarking';

export interface RedirectorClaims {
  sessionId: string;
  tenantId: string;
}

export async function signRedirectorToken(ctx: PlatformContext, claims: RedirectorClaims, expiration: Date): Promise<string> {
  return new SignJWT({ tid: claims.tenantId })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuer(ISSUER)
    .setSubject(claims.sessionId)
    .setIssuedAt()
    .setExpirationTime(Math.floor(expiration.getTime() / 1000))
    .sign(keyOf(ctx));
}

export const invalidToken = (why: string) => new ApiError(401, 'redirector_token_invalid', `The redirector token is not valid: ${why}`);

/**
 * Tokens this process has already verified, until they expire: a player asks for every segment with the same token,
 * and checking the signature each time cost more than the rest of the request. Only the signature's verdict is kept;
 * the session (revocation) is still read on every request.
 */
const verified = new WeakMap<object, Map<string, { claims: RedirectorClaims; expiresMs: number }>>();
const VERIFIED_MAX = 10_000;

export async function verifyRedirectorToken(ctx: PlatformContext, token: string): Promise<RedirectorClaims> {
  let cache = verified.get(ctx.config);
  if (!cache) verified.set(ctx.config, (cache = new Map()));
  const hit = cache.get(token);
  if (hit && hit.expiresMs > Date.now()) return hit.claims;
  try {
    const { payload } = await jwtVerify(token, keyOf(ctx), { issuer: ISSUER, algorithms: ['HS256'] });
    if (typeof payload.sub !== 'string' || typeof payload.tid !== 'string') throw invalidToken('it names no session');
    const claims = { sessionId: payload.sub, tenantId: payload.tid };
    if (cache.size >= VERIFIED_MAX) cache.delete(cache.keys().next().value!);
    cache.set(token, { claims, expiresMs: (payload.exp ?? 0) * 1000 });
    return claims;
  } catch (e) {
    if (e instanceof ApiError) throw e;
    if (e instanceof errors.JWTExpired) throw invalidToken('it has expired');
    throw invalidToken('its signature or form is wrong');
  }
}
