import { decodeProtectedHeader, errors, jwtVerify, SignJWT, type JWTPayload } from 'jose';
import type { PlatformContext } from '../../context.ts';
import { ApiError, validationError } from '../../platform/errors.ts';
import { playbackPolicy, signingKeyId, type SigningKey } from './settings.ts';

/**
 * Playback tokens (docs/decisions/streaming.md, "Playback tokens"): JWT, HS256 only, signed with the tenant's signing
 * key (its UTF-8 bytes, as `GET /streaming/v1/settings` shows it). Header: `kid`, the key's id (optional: without it
 * every key that verifies is tried). Claims: `sub` the streaming asset id (required), `exp` (required, seconds since
 * the epoch), `nbf` and `iat` (optional, honoured), `sid` (optional: the viewer's session, what `cap` counts; without
 * it a session is the viewer's address and browser), `vid` (optional: the viewer, whose sessions `cap` counts across
 * all of the viewer's tokens).
 */
export interface PlaybackClaims extends JWTPayload {
  sub: string;
  exp: number;
  sid?: string;
  vid?: string;
}

const keyBytes = (signingKey: string) => new TextEncoder().encode(signingKey);

export const tokenRequired = () =>
  new ApiError(
    401,
    'playback_token_required',
    'This asset requires a playback token: POST /streaming/v1/tokens gives one with ready-to-play URLs (or sign a JWT, HS256, with the tenant signing key), in the URL',
  );

const invalid = (why: string) => new ApiError(403, 'playback_token_invalid', `The playback token is not valid: ${why}`);

/** Verifies a token with the key its `kid` names (or, without a `kid`, each key that verifies: current first). */
export async function verifyPlaybackToken(token: string, keys: readonly SigningKey[], assetId: string): Promise<PlaybackClaims> {
  let kid: unknown;
  try {
    kid = decodeProtectedHeader(token).kid;
  } catch {
    throw invalid('not a JWT');
  }
  const candidates = kid === undefined ? keys : keys.filter((k) => k.kid === kid);
  if (!candidates.length) throw invalid(`its kid ${JSON.stringify(kid)} names no signing key of the tenant (a rotation ended its overlap?)`);
  let payload: JWTPayload | undefined;
  for (const k of candidates) {
    try {
      ({ payload } = await jwtVerify(token, keyBytes(k.key), { algorithms: ['HS256'], requiredClaims: ['sub', 'exp'] }));
      break;
    } catch (e) {
      if (e instanceof errors.JWTExpired) throw new ApiError(403, 'playback_token_expired', 'The playback token has expired (exp); ask for a new one');
      if (e instanceof errors.JWTClaimValidationFailed) throw invalid(`${e.message} (sub and exp are required)`);
    }
  }
  if (!payload) throw invalid('its signature is not HS256 with a signing key of the tenant');
  if (payload.sub !== assetId) throw invalid('it is for another asset (sub)');
  return payload as PlaybackClaims;
}

/** A token for one asset, valid `seconds` from now, signed with `key` (a key as the settings show it, or with its id) and naming it in `kid`. */
/**
 * A token given to put into something that will play later (a QR code): one that would be refused then is a 400
 * naming `token`, with the guard's reason.
 */
export async function checkGivenToken(ctx: PlatformContext, tenantId: string, assetId: string, token: string): Promise<void> {
  try {
    await verifyPlaybackToken(token, (await playbackPolicy(ctx, tenantId, assetId)).signingKeys, assetId);
  } catch (e) {
    if (e instanceof ApiError) throw validationError('token', e.message);
    throw e;
  }
}

export async function signPlaybackToken(
  signing: SigningKey | string,
  assetId: string,
  seconds: number,
  extra: { sid?: string; vid?: string } = {},
): Promise<string> {
  const key = typeof signing === 'string' ? { kid: signingKeyId(signing), key: signing } : signing;
  return new SignJWT({ ...extra })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT', kid: key.kid })
    .setSubject(assetId)
    .setIssuedAt()
    .setExpirationTime(Math.floor(Date.now() / 1000) + seconds)
    .sign(keyBytes(key.key));
}
