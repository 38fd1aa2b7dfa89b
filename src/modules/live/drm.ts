import type { PlatformContext } from '../../context.ts';
import { dashDrmPrefix, HLS_DRM_PREFIX, type LiveProtection } from '../../media/live/index.ts';
import { contentKeysFor, keyIdsOf, keyModeOf, outputEncryption, type DrmKeyMode } from '../drm/index.ts';
import type { ChannelEndpointRow } from './tables.ts';

/**
 * DRM of live channels (docs/decisions/drm.md, "Live channels"): the channel id is the content id, SingleKey (one
 * key, from the DRM module's key store, for every track and every endpoint) or AudioVideoKeys (a second key for the
 * audio track), no key rotation.
 */

/**
 * Where a protected endpoint's files are, under the channel's prefix. An `HlsDrm` endpoint of scheme `cbcs` (SAMPLE-AES)
 * plays the `cbcs/` copies, as a `DashDrm` `cbcs` endpoint does: its playlists are published beside that MPD.
 */
export const drmPrefixOf = (e: ChannelEndpointRow): string =>
  e.type.startsWith('Hls') && e.scheme !== 'cbcs' ? HLS_DRM_PREFIX : dashDrmPrefix(e.scheme === 'cbcs' ? 'cbcs' : 'cenc');

/** The Common Encryption scheme of a `DashDrm` endpoint: `cenc` unless it asks for `cbcs`. */
export const dashSchemeOf = (e: ChannelEndpointRow): 'cenc' | 'cbcs' => (e.scheme === 'cbcs' ? 'cbcs' : 'cenc');

/** A protected endpoint's scheme as a VOD preset's `protection.scheme` says it: `aes-128`, `cenc` or `cbcs`. */
export const schemeOf = (e: ChannelEndpointRow): 'aes-128' | 'cenc' | 'cbcs' => (e.type.startsWith('Hls') && e.scheme !== 'cbcs' ? 'aes-128' : dashSchemeOf(e));

/**
 * A protected endpoint's EndpointInfo `id` and `protection`: `hls-aes128` (`Aes128`), `hls-sample-aes` (SAMPLE-AES
 * through EME ClearKey: `ClearKey`), `dash-cenc` and `dash-cbcs` (`ClearKey`).
 */
export function drmEndpointIdOf(e: ChannelEndpointRow): { id: string; protection: 'Aes128' | 'ClearKey' } {
  const scheme = schemeOf(e);
  if (!e.type.startsWith('Hls')) return { id: `dash-${scheme}`, protection: 'ClearKey' };
  return scheme === 'aes-128' ? { id: 'hls-aes128', protection: 'Aes128' } : { id: 'hls-sample-aes', protection: 'ClearKey' };
}

/** The endpoints with the channel's key id on the protected ones; the key is created with the first of them. */
export async function withChannelKey(
  ctx: PlatformContext,
  tenantId: string,
  channelId: string,
  endpoints: ChannelEndpointRow[],
  mode: string | null | undefined,
): Promise<ChannelEndpointRow[]> {
  if (!endpoints.some((e) => e.isDrmProtected)) return endpoints;
  const { keyId } = (await contentKeysFor(ctx, tenantId, channelId, keyModeOf(mode))).video;
  return endpoints.map((e) => (e.isDrmProtected ? { ...e, keyId } : e));
}

/** What the pipeline encrypts with, for the channel's protected endpoints (undefined: none). */
export async function channelProtection(
  ctx: PlatformContext,
  tenantId: string,
  channelId: string,
  endpoints: ChannelEndpointRow[],
  mode: string | null | undefined,
): Promise<LiveProtection | undefined> {
  const hlsDrm = endpoints.filter((e) => e.isDrmProtected && e.type === 'HlsDrm');
  const hls = hlsDrm.some((e) => e.scheme !== 'cbcs');
  const sampleAes = hlsDrm.some((e) => e.scheme === 'cbcs');
  const dash = endpoints.filter((e) => e.isDrmProtected && e.type === 'DashDrm').map(dashSchemeOf);
  if (!hls && !sampleAes && dash.length === 0) return undefined;
  return {
    ...(hls ? { hls: await outputEncryption(ctx, tenantId, channelId, 'aes-128', keyModeOf(mode)) } : {}),
    ...(sampleAes ? { sampleAes: await outputEncryption(ctx, tenantId, channelId, 'cbcs', keyModeOf(mode)) } : {}),
    ...(dash.length > 0 ? { dash: await Promise.all(dash.map((scheme) => outputEncryption(ctx, tenantId, channelId, scheme, keyModeOf(mode)))) } : {}),
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

/**
 * What a recording of the channel is protected with (the Recorder copies each protected endpoint's encrypted files
 * and serves only those): the protected endpoints (format and scheme, in the channel's order), the key mode and the
 * channel's key ids. Undefined: a clear channel.
 */
export function channelDrmOf(
  channelId: string,
  endpoints: ChannelEndpointRow[],
  mode: string | null | undefined,
): { endpoints: { format: 'HLS' | 'DASH'; scheme: 'aes-128' | 'cenc' | 'cbcs' }[]; drmKeyMode: DrmKeyMode; keyIds: string[] } | undefined {
  const drm = endpoints.filter((e) => e.isDrmProtected);
  const keyId = drm.find((e) => e.keyId)?.keyId;
  if (drm.length === 0 || !keyId) return undefined;
  return {
    endpoints: drm.map((e) => ({ format: e.type.startsWith('Hls') ? ('HLS' as const) : ('DASH' as const), scheme: schemeOf(e) })),
    drmKeyMode: keyModeOf(mode),
    keyIds: keyIdsOf(channelId, keyId, mode),
  };
}
