import { createHash } from 'node:crypto';
import type { PlatformContext } from '../../context.ts';
import type { MediaRequest, PlaybackGuard } from '../../platform/playback.ts';
import { holdSession } from './sessions.ts';
import { isOriginAllowed, originRefused } from './domains.ts';
import { playbackPolicy } from './settings.ts';
import { tokenRequired, verifyPlaybackToken } from './tokens.ts';

const hash = (s: string) => createHash('sha256').update(s).digest('base64url').slice(0, 32);

/** Pages of domains the tenant did not allow are refused (Origin, else Referer). */
const allowedDomain: PlaybackGuard = async (ctx: PlatformContext, m: MediaRequest) => {
  const from = m.headers.origin ?? m.headers.referer;
  if (!(await isOriginAllowed(ctx, m.tenantId, from))) throw originRefused(from);
};

/**
 * Token required (by the asset's settings, or by the file: a non-public archive) → a valid token for this asset;
 * `cap` → a session within the limit.
 */
const playbackToken: PlaybackGuard = async (ctx, m) => {
  const policy = await playbackPolicy(ctx, m.tenantId, m.assetId);
  const needsToken = policy.tokenRequired || m.requiresToken;
  if (!needsToken && !policy.cap) return;
  const claims = m.token && needsToken ? await verifyPlaybackToken(m.token, policy.signingKeys, m.assetId) : undefined;
  if (needsToken && !claims) throw tokenRequired();
  if (!policy.cap) return;
  const viewer = hash(`${m.ip} ${m.headers['user-agent'] ?? ''}`);
  // With a token, its sessions are counted (one per `sid`, else per viewer), across the viewer's tokens when it names
  // the viewer (`vid`); without, a viewer's assets are.
  const held = claims
    ? { holder: claims.vid ? `u:${hash(claims.vid)}` : `t:${hash(m.token!)}`, session: claims.sid ? `s:${claims.sid}` : `v:${viewer}` }
    : { holder: `v:${viewer}`, session: `a:${m.assetId}` };
  await holdSession(ctx, { tenantId: m.tenantId, assetId: m.assetId, ...held, limit: policy.capLimit });
};

export const STREAMING_GUARDS: readonly PlaybackGuard[] = [allowedDomain, playbackToken];
