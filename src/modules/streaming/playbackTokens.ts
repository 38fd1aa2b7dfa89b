import type { PlatformContext } from '../../context.ts';
import { playbackSource, sourceConfigUrl, embedUrl } from './playback.ts';
import { rotateSigningKey, signingKeyId, tenantSettings, verifyingKeys } from './settings.ts';
import { signPlaybackToken } from './tokens.ts';

export const DEFAULT_TOKEN_SECONDS = 3600;

export interface TokenRequest {
  assetId: string;
  expiresInSeconds?: number;
  sessionId?: string;
  viewerId?: string;
}

/**
 * `POST /streaming/v1/tokens` (not in the spec; docs/decisions/streaming.md, "Playback tokens"): a token for one
 * streaming asset signed with the tenant's current key, and the URLs that play with it, so that a tenant's server
 * never builds a JWT or a tokened URL itself. 404 for an asset the tenant does not have.
 */
export async function createPlaybackToken(ctx: PlatformContext, tenantId: string, body: TokenRequest) {
  const seconds = body.expiresInSeconds ?? DEFAULT_TOKEN_SECONDS;
  const settings = await tenantSettings(ctx.db, tenantId);
  const key = { kid: signingKeyId(settings.signingKey), key: settings.signingKey };
  const token = await signPlaybackToken(key, body.assetId, seconds, {
    ...(body.sessionId ? { sid: body.sessionId } : {}),
    ...(body.viewerId ? { vid: body.viewerId } : {}),
  });
  // The asset's own URLs with the token in them: also answers 404 before a token for nothing is handed out.
  const source = await playbackSource(ctx, tenantId, body.assetId, { token });
  const query = `?token=${encodeURIComponent(token)}`;
  return {
    token,
    keyId: key.kid,
    assetId: body.assetId,
    expirationDate: new Date((Math.floor(Date.now() / 1000) + seconds) * 1000).toISOString(),
    hlsUrl: source.hlsUrl,
    dashUrl: source.dashUrl,
    embedUrl: `${embedUrl(ctx, tenantId)}/${body.assetId}${query}`,
    sourceConfigUrl: `${sourceConfigUrl(ctx, tenantId, body.assetId)}${query}`,
  };
}

/** `POST /streaming/v1/settings/signing-key/rotate`: a new key; the old one verifies for the overlap. */
export async function rotatePlaybackKey(ctx: PlatformContext, tenantId: string, overlapSeconds: number) {
  const row = await rotateSigningKey(ctx.db, tenantId, overlapSeconds);
  const previous = verifyingKeys(row)[1];
  return {
    signingKey: row.signingKey,
    signingKeyId: signingKeyId(row.signingKey),
    previousSigningKeyId: previous?.kid ?? null,
    previousSigningKeyExpirationDate: previous ? row.previousSigningKeyExpirationDate!.toISOString() : null,
  };
}
