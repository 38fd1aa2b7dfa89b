import type { Config } from '../../config.ts';
import { recordingUrl } from './storageKeys.ts';
import type { EndpointRow, recorderOutputs, recorderRecordings } from './tables.ts';

export type RecordingRow = typeof recorderRecordings.$inferSelect;
export type OutputRow = typeof recorderOutputs.$inferSelect;

export const MASTER = 'master.m3u8';

/** An HLS endpoint of a recorded copy (`media` for catch-up, `archive`). */
export function hlsEndpoint(config: Config, r: Pick<RecordingRow, 'tenantId' | 'id' | 'durationMilliseconds'>, part: 'media' | 'archive'): EndpointRow {
  const url = recordingUrl(config.publicUrl.origin, r.tenantId, r.id, part, MASTER);
  return {
    id: part === 'media' ? 'catchup-hls' : 'archive-hls',
    accessType: 'Http',
    format: 'HLS',
    url,
    protection: 'None',
    ...(r.durationMilliseconds != null ? { durationMilliseconds: r.durationMilliseconds } : {}),
    manifest: url,
    hasVerticalOrientation: false,
  };
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
export function presentRecording(config: Config, r: RecordingRow, outputs: OutputRow[]) {
  const a = r.archive;
  return {
    id: r.id,
    tenantId: r.tenantId,
    source: { type: r.sourceType, liveChannelDetails: { channelId: r.channelId, start: r.start, end: r.end } },
    catchup: {
      enabled: r.catchupEnabled,
      expirationTime: r.catchupExpirationTime,
      endpoints: catchupPlayable(r) ? [hlsEndpoint(config, r, 'media')] : [],
    },
    archive: {
      enabled: a.enabled,
      delaySeconds: a.delaySeconds,
      public: a.public,
      expirationDate: a.expirationDate,
      status: a.status,
      endpoints: a.status === 'Available' ? [hlsEndpoint(config, r, 'archive')] : [],
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
