import type { PlatformContext } from '../../context.ts';
import { withToken } from '../../platform/playback.ts';
import { clearKeyLicenseUrl } from '../drm/index.ts';
import type { PlayableEndpoint } from '../../platform/playables.ts';
import { getStreamingAsset } from './catalogue.ts';
import { posterUrl } from './frames.ts';
import { ApiError } from '../../platform/errors.ts';
import { effectiveState, tenantSettings, verifyingKeys } from './settings.ts';
import { verifyPlaybackToken } from './tokens.ts';

/** The embed page of an asset is `{embedUrl}/{assetId}`, its source config `{embedUrl}/{assetId}/source` (served by the player). */
export const embedUrl = (ctx: PlatformContext, tenantId: string): string => `${ctx.config.publicUrl.origin}/player/v1/${tenantId}`;
export const sourceConfigUrl = (ctx: PlatformContext, tenantId: string, assetId: string): string => `${embedUrl(ctx, tenantId)}/${assetId}/source`;

/** What a player needs to play one streaming asset. */
export interface PlaybackSource {
  id: string;
  type: string;
  status: string;
  title: string | null;
  description: string | null;
  durationMilliseconds: number | null;
  /** A still to show before playback: the first image the asset was given, else its extracted poster frame. */
  poster: string | null;
  images: Record<string, { Id: string | null; Name: string | null; Url: string }>;
  chapters: { id: string; title: string | null; startSecond: number; endSecond: number }[];
  /** Manifest URLs, carrying `token` when one was given (the token in a path segment: segments carry it too). */
  hlsUrl: string | null;
  dashUrl: string | null;
  /** The DRM protection of the endpoint each URL names: `None`, `Aes128` (HLS AES-128) or `ClearKey` (EME ClearKey). */
  hlsProtection: string | null;
  dashProtection: string | null;
  /** Where EME ClearKey licenses come from (the DRM module's), when an endpoint is `ClearKey`; else null. */
  clearKeyLicenseUrl: string | null;
  tokenRequired: boolean;
  /**
   * Why the media will refuse the viewer (a playback token missing, expired or not valid), said before any request:
   * a player would otherwise only report its own error (hls.js: `manifestLoadError`).
   */
  playbackRefusal: string | null;
  /** Live (a channel or event): no fixed duration, time shift applies. */
  live: boolean;
  settings: { devToolsAccess: boolean; analytics: boolean; codeObfuscation: boolean; cap: boolean };
}

const PLAYABLE_STATUSES = new Set(['Available', 'Live', 'Finished']);

/**
 * The playback description of a streaming asset; 404 `streaming_asset_not_found` for a missing (or another tenant's)
 * asset. The embed player (`/player/v1/...`) answers it as the source config.
 */
export async function playbackSource(ctx: PlatformContext, tenantId: string, assetId: string, opts: { token?: string } = {}): Promise<PlaybackSource> {
  const asset = await getStreamingAsset(ctx, tenantId, assetId);
  const live = asset.type === 'LiveChannel' || asset.type === 'LiveEvent';
  // A video's outputs published while they encode play too (docs/decisions/vod-assets.md), after the finished ones.
  const growing = live ? [] : asset.outputs.filter((o) => o.status === 'Processing' && o.endpoints.length > 0);
  const outputs = [...asset.outputs.filter((o) => PLAYABLE_STATUSES.has(o.status)), ...growing];
  // A channel's URLs are stable whatever its state: a player may wait on one that is about to start.
  const candidates = outputs.length || !live ? outputs : asset.outputs;
  const endpoints: PlayableEndpoint[] = candidates.flatMap((o) => o.endpoints);
  const hls = endpoints.find((x) => x.format === 'HLS');
  const dash = endpoints.find((x) => x.format === 'DASH');
  const url = (e: PlayableEndpoint | undefined) => {
    if (!e) return null;
    return opts.token ? withToken(e.url, opts.token) : e.url;
  };
  const usesClearKey = hls?.protection === 'ClearKey' || dash?.protection === 'ClearKey';
  const tenant = await tenantSettings(ctx.db, tenantId);
  const state = (name: 'devToolsAccess' | 'analytics' | 'codeObfuscation' | 'cap') => asset.settings[name].asset ?? asset.settings[name].tenant;
  const tokenRequired = effectiveState({ tokenRequired: asset.settings.tokenRequired.asset ?? undefined }, tenant.defaults, 'tokenRequired') === 'Enabled';
  const images = asset.images;
  const firstImage = Object.values(images)[0]?.Url ?? (await posterUrl(ctx, tenantId, asset.id));
  return {
    id: asset.id,
    type: asset.type,
    status: asset.status,
    title: asset.title,
    description: asset.description,
    durationMilliseconds: asset.durationMilliseconds,
    poster: firstImage,
    images,
    chapters: asset.chapters,
    hlsUrl: url(hls),
    dashUrl: url(dash),
    hlsProtection: hls?.protection ?? null,
    dashProtection: dash?.protection ?? null,
    clearKeyLicenseUrl: usesClearKey ? clearKeyLicenseUrl(ctx) : null,
    tokenRequired,
    playbackRefusal: tokenRequired ? await tokenRefusal(opts.token, verifyingKeys(tenant), asset.id) : null,
    live,
    settings: {
      devToolsAccess: state('devToolsAccess') === 'Enabled',
      analytics: state('analytics') === 'Enabled',
      codeObfuscation: state('codeObfuscation') === 'Enabled',
      cap: state('cap') === 'Enabled',
    },
  };
}

/** What the viewer is told when the asset needs a token: none was given, or the one given will be refused. */
async function tokenRefusal(token: string | undefined, keys: Parameters<typeof verifyPlaybackToken>[1], assetId: string): Promise<string | null> {
  if (!token)
    return 'This video needs a playback token. The page that shows it must add one to the player address (token=...): the publisher gets it from POST /streaming/v1/tokens.';
  try {
    await verifyPlaybackToken(token, keys, assetId);
    return null;
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
    if (e.code === 'playback_token_expired') return 'The playback token of this video has expired. The page that shows it must be given a new one.';
    return `${e.message}.`;
  }
}
