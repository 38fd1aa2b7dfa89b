import type { Config } from '../../config.ts';
import { drmEndpoints } from './drm.ts';
import { MASTER, MPD, recordingUrl } from './storageKeys.ts';
import type { EndpointRow, OutputRow, RecordingRow } from './tables.ts';

/**
 * The endpoints of a recorded copy (`media` for catch-up, `archive`): HLS, and DASH over the same segments when the
 * recording's channel has a DASH endpoint.
 */
export function copyEndpoints(
  config: Config,
  r: Pick<RecordingRow, 'tenantId' | 'id' | 'channelId' | 'durationMilliseconds' | 'drm'>,
  part: 'media' | 'archive',
  dash: boolean,
): EndpointRow[] {
  // Of a DRM channel: the protected endpoints only, as the channel's ranges are listed (drm.ts).
  if (r.drm) return drmEndpoints(config, r, r.drm, part, false);
  const endpoint = (format: 'HLS' | 'DASH', file: string): EndpointRow => {
    const url = recordingUrl(config.publicUrl.origin, r.tenantId, r.id, part, file);
    return {
      id: `${part === 'media' ? 'catchup' : 'archive'}-${format.toLowerCase()}`,
      accessType: 'Http',
      format,
      url,
      protection: 'None',
      ...(r.durationMilliseconds != null ? { durationMilliseconds: r.durationMilliseconds } : {}),
      manifest: url,
      hasVerticalOrientation: false,
    };
  };
  return dash ? [endpoint('HLS', MASTER), endpoint('DASH', MPD)] : [endpoint('HLS', MASTER)];
}

/** The catch-up address plays while the recording is (being) recorded and its expiration time has not passed. */
export const catchupPlayable = (r: RecordingRow, now = Date.now()): boolean =>
  r.catchupEnabled && !r.catchupExpired && r.catchupExpirationTime.getTime() > now && ['Live', 'Processing', 'Available'].includes(r.status);

function presentOutput(o: OutputRow) {
  return {
    id: o.id,
    status: o.status,
    preset: o.preset,
    expirationDate: o.expirationDate,
    completionDate: o.completionDate,
    endpoints: o.endpoints,
    errorMessage: o.errorMessage,
  };
}

/** The spec's Recording. */
/** `dash`: the recording's channel has a DASH endpoint (its copies then have an MPD too). */
export function presentRecording(config: Config, r: RecordingRow, outputs: OutputRow[], dash: boolean) {
  const a = r.archive;
  return {
    id: r.id,
    tenantId: r.tenantId,
    source: { type: r.sourceType, liveChannelDetails: { channelId: r.channelId, start: r.start, end: r.end } },
    catchup: {
      enabled: r.catchupEnabled,
      expirationTime: r.catchupExpirationTime,
      endpoints: catchupPlayable(r) ? copyEndpoints(config, r, 'media', dash) : [],
    },
    archive: {
      enabled: a.enabled,
      delaySeconds: a.delaySeconds,
      public: a.public,
      expirationDate: a.expirationDate,
      status: a.status,
      endpoints: a.status === 'Available' ? copyEndpoints(config, r, 'archive', dash) : [],
      archivisationCompletedDate: a.archivisationCompletedDate,
    },
    outputs: [...outputs].sort((x, y) => +x.createDate - +y.createDate).map(presentOutput),
    expirationDate: r.expirationDate,
    status: r.status,
    metadata: r.metadata,
    errorMessage: r.errorMessage,
    createDate: r.createDate,
    lastModificationDate: r.lastModificationDate,
    durationMilliseconds: r.durationMilliseconds,
    title: r.title,
    tags: r.tags,
    attributes: r.attributes,
    overlays: r.overlays,
    distribution: { accessPolicyId: r.accessPolicyId, accessPolicyName: null },
  };
}

export const presentSummary = (r: RecordingRow) => ({
  id: r.id,
  title: r.title,
  status: r.status,
  createDate: r.createDate,
  lastModificationDate: r.lastModificationDate,
  durationMilliseconds: r.durationMilliseconds,
  metadata: r.metadata,
});
