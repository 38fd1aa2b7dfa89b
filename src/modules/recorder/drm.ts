import type { Config } from '../../config.ts';
import type { PlatformContext } from '../../context.ts';
import { dashDrmManifest, hlsDrmRangePlaylist, protectedMaster, sampleAesPlaylist } from '../../media/live/protection/protect.ts';
import { CAPTION_TRACK } from '../../media/live/captions/subtitles.ts';
import { encryptionOf } from '../../media/protect.ts';
import type { Preset } from '../../media/preset.ts';
import { keyIdsOf, outputEncryption } from '../drm/index.ts';
import { readObjectIfAny } from '../../storage/readObject.ts';
import { MASTER, MPD, recordingUrl } from './storageKeys.ts';
import type { EndpointRow, RecordingDrm, RecordingRow } from './tables.ts';

/**
 * Recordings of a channel with DRM endpoints (docs/decisions/recorder.md, "DRM channels"): beside the clear copy
 * (which outputs are made from, never served), each protected endpoint's encrypted copies of the same files under
 * its prefix (`aes128/`, `cenc/`, `cbcs/`), with playlists and MPDs that name the channel's keys. The channel is the
 * content: the recording plays with the channel's keys and licenses.
 */

type DrmEndpoint = RecordingDrm['endpoints'][number];

/** Where an endpoint's files are (as under the channel's prefix): AES-128 under `aes128/`, the CENC schemes under `cenc/`, `cbcs/`. */
const prefixOf = (e: DrmEndpoint): string => (e.scheme === 'aes-128' ? 'aes128/' : `${e.scheme}/`);
const prefixesOf = (drm: RecordingDrm | null): string[] => [...new Set((drm?.endpoints ?? []).map(prefixOf))];

/**
 * What to copy for one file of the recording (names relative to the channel's and the recording's prefixes): the
 * file, and under each protected prefix its encrypted copy, or, for a caption file (`clear`: captions are not
 * encrypted), the clear file again.
 */
export const copiesOf = (drm: RecordingDrm | null, key: string, clear = false): { from: string; to: string }[] => [
  { from: key, to: key },
  ...prefixesOf(drm).map((p) => ({ from: clear ? key : p + key, to: p + key })),
];

/** Whether a file of a recorded copy (relative to `media/` or `archive/`) may be served: of a DRM recording, the encrypted ones only. */
export const servesFile = (drm: RecordingDrm | null, file: string): boolean => !drm || prefixesOf(drm).some((p) => file.startsWith(p));

/** An endpoint's EndpointInfo `id` and `protection`, as the channel's ranges name them (live/drm.ts `drmEndpointIdOf`). */
function idOf(e: DrmEndpoint): { id: string; protection: 'Aes128' | 'ClearKey' } {
  if (e.format === 'DASH') return { id: `dash-${e.scheme}`, protection: 'ClearKey' };
  return e.scheme === 'aes-128' ? { id: 'hls-aes128', protection: 'Aes128' } : { id: 'hls-sample-aes', protection: 'ClearKey' };
}

/** The catch-up's (`media`) or archive's endpoints of a DRM recording: one per protected endpoint of its channel, as its ranges are listed. */
export function drmEndpoints(
  config: Config,
  r: Pick<RecordingRow, 'tenantId' | 'id' | 'channelId' | 'durationMilliseconds'>,
  drm: RecordingDrm,
  part: 'media' | 'archive',
  vertical: boolean,
): EndpointRow[] {
  return drm.endpoints.map((e) => {
    const hls = e.format === 'HLS';
    const url = recordingUrl(config.publicUrl.origin, r.tenantId, r.id, part, prefixOf(e) + (hls ? MASTER : MPD));
    const { id, protection } = idOf(e);
    return {
      id: part === 'media' ? id : `archive-${id}`,
      accessType: 'Http',
      format: e.format,
      url,
      protection,
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
 * Writes each protected endpoint's playlists from the clear ones just written under `prefix` (the same names, relative
 * URIs that land on the encrypted copies), as the channel's ranges render them: AES-128 HLS with
 * `#EXT-X-KEY:METHOD=AES-128` and each segment's IV (its number, as the live packager encrypted it), SAMPLE-AES HLS
 * with its key line, the MPDs with the endpoint's `ContentProtection`. Caption playlists stay clear.
 */
export async function writeProtectedPlaylists(ctx: PlatformContext, rec: RecordingRow, prefix: string, tracks: string[]): Promise<void> {
  const drm = rec.drm;
  if (!drm) return;
  for (const e of drm.endpoints) {
    const p = prefixOf(e);
    // The channel's keys outlive it (the key store keeps them), so an archive made after the channel was deleted still has them.
    const encryption = await outputEncryption(ctx, rec.tenantId, rec.channelId, e.scheme, drm.drmKeyMode);
    if (e.format === 'HLS') {
      const master = await readObjectIfAny(ctx.store, prefix + MASTER);
      // With the keys its media playlists name, as #EXT-X-SESSION-KEY (so players may get them first).
      if (master) await ctx.store.putObject(prefix + p + MASTER, protectedMaster(master.toString('utf8'), encryption), 'application/vnd.apple.mpegurl');
      for (const track of tracks) {
        const clear = (await readObjectIfAny(ctx.store, `${prefix}${track}.m3u8`))?.toString('utf8');
        if (clear === undefined) continue;
        const keyOf = encryptionOf(encryption, track === 'audio' ? 'audio' : 'video');
        const body = track === CAPTION_TRACK ? clear : e.scheme === 'aes-128' ? hlsDrmRangePlaylist(clear, keyOf.keyUrl) : sampleAesPlaylist(clear, keyOf);
        await ctx.store.putObject(`${prefix}${p}${track}.m3u8`, body, 'application/vnd.apple.mpegurl');
      }
    } else {
      const mpd = await readObjectIfAny(ctx.store, prefix + MPD);
      if (!mpd) continue;
      const body = dashDrmManifest(mpd.toString('utf8'), encryption);
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
