import type { PlatformContext } from '../../context.ts';
import { DASH_DRM_PREFIX, HLS_DRM_PREFIX, type LiveProtection } from '../../media/live/index.ts';
import { singleKeyFor } from '../drm/keys.ts';
import { outputEncryption } from '../drm/service.ts';
import type { ChannelEndpointRow } from './tables.ts';

/**
 * DRM of live channels (docs/decisions/drm.md, "Live channels"): the channel id is the content id, SingleKey (one
 * key, from the DRM module's key store, for every track and both endpoints), no key rotation.
 */

/** Where a protected endpoint's files are, under the channel's prefix. */
export const drmPrefixOf = (e: ChannelEndpointRow): string => (e.type.startsWith('Hls') ? HLS_DRM_PREFIX : DASH_DRM_PREFIX);

/** The endpoints with the channel's key id on the protected ones; the key is created with the first of them. */
export async function withChannelKey(
  ctx: PlatformContext,
  tenantId: string,
  channelId: string,
  endpoints: ChannelEndpointRow[],
): Promise<ChannelEndpointRow[]> {
  if (!endpoints.some((e) => e.isDrmProtected)) return endpoints;
  const { keyId } = await singleKeyFor(ctx, tenantId, channelId);
  return endpoints.map((e) => (e.isDrmProtected ? { ...e, keyId } : e));
}

/** What the pipeline encrypts with, for the channel's protected endpoints (undefined: none). */
export async function channelProtection(
  ctx: PlatformContext,
  tenantId: string,
  channelId: string,
  endpoints: ChannelEndpointRow[],
): Promise<LiveProtection | undefined> {
  const hls = endpoints.some((e) => e.isDrmProtected && e.type === 'HlsDrm');
  const dash = endpoints.some((e) => e.isDrmProtected && e.type === 'DashDrm');
  if (!hls && !dash) return undefined;
  return {
    ...(hls ? { hls: await outputEncryption(ctx, tenantId, channelId, 'aes-128') } : {}),
    ...(dash ? { dash: await outputEncryption(ctx, tenantId, channelId, 'cenc') } : {}),
  };
}

/**
 * Whether players may read `path` of a channel with these endpoints: a channel with DRM endpoints serves their
 * encrypted files only. Its clear files stay in the store (the timeline and the Recorder read them) but are not
 * served, and neither are its timeline range playlists (they list the clear segments).
 */
export function servesPath(endpoints: ChannelEndpointRow[], path: string): boolean {
  const drm = endpoints.filter((e) => e.isDrmProtected);
  return drm.length === 0 || drm.some((e) => path.startsWith(drmPrefixOf(e)));
}
