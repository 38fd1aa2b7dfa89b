import { errors, jwtVerify, SignJWT, type JWTPayload } from 'jose';
import { ApiError } from '../../platform/errors.ts';

/**
 * Playback tokens (docs/decisions/streaming.md): JWT, HS256 only, signed with the tenant's signing key (its UTF-8
 * bytes, as `GET /streaming/v1/settings` shows it). Claims: `sub` the streaming asset id (required), `exp` (required,
 * seconds since the epoch), `nbf` and `iat` (optional, honoured), `sid` (optional: the viewer's session, what `cap`
 * counts; without it a session is the viewer's address and browser).
 */
export interface PlaybackClaims extends JWTPayload {
  sub: string;
  exp: number;
  sid?: string;
}

const keyBytes = (signingKey: string) => new TextEncoder().encode(signingKey);

export const tokenRequired = () =>
  new ApiError(401, 'playback_token_required', 'This asset requires a playback token: a JWT (HS256) signed with the tenant signing key, in the URL');

export async function verifyPlaybackToken(token: string, signingKey: string, assetId: string): Promise<PlaybackClaims> {
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(token, keyBytes(signingKey), { algorithms: ['HS256'], requiredClaims: ['sub', 'exp'] }));
  } catch (e) {
    if (e instanceof errors.JWTExpired) throw new ApiError(403, 'playback_token_expired', 'The playback token has expired (exp); ask for a new one');
    throw new ApiError(403, 'playback_token_invalid', 'The playback token is not a valid JWT signed (HS256) with the tenant signing key with sub and exp');
  }
  if (payload.sub !== assetId) throw new ApiError(403, 'playback_token_invalid', 'The playback token is for another asset (sub)');
  return payload as PlaybackClaims;
}

/** A token for one asset, valid `seconds` from now (tests, and any server-side code of the platform that plays). */
export async function signPlaybackToken(signingKey: string, assetId: string, seconds: number, extra: { sid?: string } = {}): Promise<string> {
  return new SignJWT({ ...extra })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(assetId)
    .setIssuedAt()
    .setExpirationTime(Math.floor(Date.now() / 1000) + seconds)
    .sign(keyBytes(signingKey));
}
