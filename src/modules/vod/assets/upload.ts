import type { PlatformContext } from '../../../context.ts';
import { listFiles } from '../../../media/files.ts';
import type { TranscodeResult } from '../../../media/transcode.ts';
import type { TranscodeEndpoint } from '../../../media/finish.ts';
import { keyIdsOf, type DrmKeyMode } from '../../drm/index.ts';
import type { Preset } from '../../transcoder/index.ts';
import type { EndpointRow } from './tables.ts';

/** Where a player fetches an output's files: served by the platform from the object store (see delivery.ts). */
const mediaUrl = (ctx: PlatformContext, tenantId: string, assetId: string, outputId: string, path: string) =>
  `${ctx.config.publicUrl.origin}/media/vod/${tenantId}/${assetId}/${outputId}/${path}`;

export interface OutputIds {
  tenantId: string;
  assetId: string;
  outputId: string;
  preset: Preset;
  keyId?: string;
  drmKeyMode: DrmKeyMode;
}

/**
 * Uploads an output directory under `prefix` (segments first, manifests last) and describes its endpoints. Files the
 * encode already published (`result.published`, final segments) are not sent again; its growing manifests are replaced.
 */
export async function uploadOutput(ctx: PlatformContext, dir: string, prefix: string, result: TranscodeResult, ids: OutputIds): Promise<EndpointRow[]> {
  for (const f of await listFiles(dir)) {
    if (!result.published.has(f.path)) await ctx.store.putFile(prefix + f.path, f.absolutePath, f.contentType);
  }
  return endpointRows(ctx, result.endpoints, ids);
}

/** The spec's endpoints of an output's manifests (`EndpointInfo`), at the URLs delivery.ts serves. */
export function endpointRows(ctx: PlatformContext, endpoints: TranscodeEndpoint[], ids: OutputIds): EndpointRow[] {
  const drm = ids.preset.protection;
  return endpoints.map((e) => ({
    id: `${ids.outputId}-${e.format.toLowerCase()}${e.rendition ? `-${e.rendition}` : ''}`,
    accessType: 'Http',
    format: e.format,
    url: mediaUrl(ctx, ids.tenantId, ids.assetId, ids.outputId, e.manifest),
    preset: ids.preset.id,
    protection: drm ? (drm.scheme === 'aes-128' ? 'Aes128' : 'ClearKey') : 'None',
    ...(drm && ids.keyId
      ? {
          protectionDetails: { keyIds: keyIdsOf(ids.assetId, ids.keyId, ids.drmKeyMode), contentId: ids.assetId },
          // A CMAF output has an HLS and a DASH endpoint over one set of encrypted segments: each is its format's type.
          type: e.format === 'DASH' ? ('DashDrm' as const) : ('HlsDrm' as const),
          isDrmProtected: true,
          drmKeyMode: ids.drmKeyMode,
        }
      : {}),
    durationMilliseconds: e.durationMilliseconds,
    size: e.size,
    manifest: e.manifest,
    hasVerticalOrientation: e.hasVerticalOrientation,
  }));
}
