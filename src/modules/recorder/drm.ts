import type { Config } from '../../config.ts';
import type { PlatformContext } from '../../context.ts';
import { dashDrmManifest, hlsDrmRangePlaylist } from '../../media/live/protect.ts';
import { encryptionOf } from '../../media/protect.ts';
import type { Preset } from '../../media/preset.ts';
import { keyIdsOf } from '../drm/keys.ts';
import { outputEncryption } from '../drm/service.ts';
import { readObject } from '../live/timeline.ts';
import { MASTER, MPD, type RecordingRow } from './present.ts';
import { recordingUrl } from './storageKeys.ts';
import type { EndpointRow, RecordingDrm } from './tables.ts';

/**
 * Recordings of a channel with DRM endpoints (docs/decisions/recorder.md, "DRM channels"): beside the clear copy
 * (which outputs are made from, never served), each protected endpoint's encrypted copies of the same files under
 * its prefix (`aes128/`, `cenc/`, `cbcs/`), with playlists and MPDs that name the channel's keys. The channel is the
 * content: the recording plays with the channel's keys and licenses.
 */

/** The keys to copy for one file of the recording (relative to the channel's and the recording's prefix). */
export const copiesOf = (drm: RecordingDrm | null, key: string): string[] => [key, ...(drm?.prefixes ?? []).map((p) => p + key)];

/** Whether a file of a recorded copy (relative to `media/` or `archive/`) may be served: of a DRM recording, the encrypted ones only. */
export const servesFile = (drm: RecordingDrm | null, file: string): boolean => !drm || drm.prefixes.some((p) => file.startsWith(p));

/** The catch-up's (`media`) or archive's endpoints of a DRM recording: one per protected endpoint of its channel, as its ranges are listed. */
export function drmEndpoints(
  config: Config,
  r: Pick<RecordingRow, 'tenantId' | 'id' | 'channelId' | 'durationMilliseconds'>,
  drm: RecordingDrm,
  part: 'media' | 'archive',
  vertical: boolean,
): EndpointRow[] {
  return drm.prefixes.map((prefix) => {
    const hls = prefix === 'aes128/';
    const url = recordingUrl(config.publicUrl.origin, r.tenantId, r.id, part, prefix + (hls ? MASTER : MPD));
    const id = hls ? 'hls-aes128' : `dash-${prefix.slice(0, -1)}`;
    return {
      id: part === 'media' ? id : `archive-${id}`,
      accessType: 'Http',
      format: hls ? 'HLS' : 'DASH',
      url,
      protection: hls ? 'Aes128' : 'ClearKey',
      protectionDetails: { keyIds: drm.keyIds, contentId: r.channelId },
      type: hls ? 'HlsDrm' : 'DashDrm',
      isDrmProtected: true,
      drmKeyMode: drm.drmKeyMode,
      ...(r.durationMilliseconds != null ? { durationMilliseconds: r.durationMilliseconds } : {}),
      manifest: url,
      hasVerticalOrientation: vertical,
    };
  });
}

/**
 * Writes each protected endpoint's playlists from the clear ones just written under `prefix` (the same segment names,
 * relative URIs that land on the encrypted copies): HLS with `#EXT-X-KEY:METHOD=AES-128` and each segment's IV (its
 * number, as the live packager encrypted it), the MPD with the endpoint's `ContentProtection`.
 */
export async function writeProtectedPlaylists(
  ctx: PlatformContext,
  rec: RecordingRow,
  prefix: string,
  part: 'media' | 'archive',
  tracks: string[],
): Promise<void> {
  const drm = rec.drm;
  if (!drm) return;
  const origin = ctx.config.publicUrl.origin;
  for (const p of drm.prefixes) {
    const scheme = p === 'aes128/' ? 'aes-128' : p === 'cenc/' ? 'cenc' : 'cbcs';
    // The channel's keys outlive it (the key store keeps them), so an archive made after the channel was deleted still has them.
    const encryption = await outputEncryption(ctx, rec.tenantId, rec.channelId, scheme, drm.drmKeyMode);
    if (scheme === 'aes-128') {
      const master = await readObject(ctx, prefix + MASTER);
      if (master) await ctx.store.putObject(prefix + p + MASTER, master, 'application/vnd.apple.mpegurl');
      for (const track of tracks) {
        const clear = await readObject(ctx, `${prefix}${track}.m3u8`);
        if (!clear) continue;
        const body = hlsDrmRangePlaylist(clear.toString('utf8'), encryptionOf(encryption, track === 'audio' ? 'audio' : 'video').keyUrl);
        await ctx.store.putObject(`${prefix}${p}${track}.m3u8`, body, 'application/vnd.apple.mpegurl');
      }
    } else {
      const mpd = await readObject(ctx, prefix + MPD);
      if (!mpd) continue;
      // A running recording's MPD names itself for the clock (record.ts): the encrypted one's own address, the clear one is not served.
      const clock = recordingUrl(origin, rec.tenantId, rec.id, part, MPD);
      const body = dashDrmManifest(mpd.toString('utf8').replaceAll(clock, recordingUrl(origin, rec.tenantId, rec.id, part, p + MPD)), encryption);
      await ctx.store.putObject(prefix + p + MPD, body, 'application/dash+xml');
    }
  }
}

/**
 * The key of an output made with a DRM preset (`protection`): of a DRM recording the channel's (its content), of a
 * clear one the recording's own (the recording id is then its content id, as an asset's is). With the fields its
 * endpoints show. Undefined for a clear preset.
 */
export async function outputProtection(ctx: PlatformContext, rec: RecordingRow, preset: Preset) {
  if (!preset.protection) return undefined;
  const contentId = rec.drm ? rec.channelId : rec.id;
  const drmKeyMode = rec.drm?.drmKeyMode ?? 'SingleKey';
  const encryption = await outputEncryption(ctx, rec.tenantId, contentId, preset.protection.scheme, drmKeyMode);
  return {
    encryption,
    endpoint: {
      protection: preset.protection.scheme === 'aes-128' ? ('Aes128' as const) : ('ClearKey' as const),
      protectionDetails: { keyIds: keyIdsOf(contentId, encryption.keyId, drmKeyMode), contentId },
      type: preset.protection.endpointType,
      isDrmProtected: true,
      drmKeyMode,
    },
  };
}
