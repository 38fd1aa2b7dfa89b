import { captioningOf } from '../../../media/live/index.ts';
import { keyModeOf } from '../../drm/index.ts';
import type { vodAssets, vodOutputs } from './tables.ts';

type AssetRow = typeof vodAssets.$inferSelect;
type OutputRow = typeof vodOutputs.$inferSelect;

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

/**
 * The VodAsset of the spec. Its `endpoints` are those of every output that is available or playable while it encodes
 * (a `Processing` output with endpoints: docs/decisions/vod-assets.md), its own preset's first.
 */
export function presentAsset(a: AssetRow, outputs: OutputRow[], transcodedJobId: string | null) {
  const ordered = [...outputs].sort((x, y) => Number(y.preset === a.preset) - Number(x.preset === a.preset) || +x.createDate - +y.createDate);
  return {
    id: a.id,
    preset: a.preset,
    transcodedJobId,
    title: a.title,
    metadata: a.metadata,
    tenantId: a.tenantId,
    createDate: a.createDate,
    lastModificationDate: a.lastModificationDate,
    status: a.status,
    fileIds: a.fileIds,
    sources: a.sources,
    endpoints: ordered.filter((o) => o.status === 'Available' || o.status === 'Processing').flatMap((o) => o.endpoints),
    outputs: ordered.map(presentOutput),
    errorMessage: a.errorMessage,
    durationMilliseconds: a.durationMilliseconds,
    tags: a.tags,
    attributes: a.attributes,
    distribution: { accessPolicyId: a.accessPolicyId, accessPolicyName: null },
    sourceFileExtension: a.sourceFileExtension,
    drmKeyMode: keyModeOf(a.drmKeyMode),
    aiCaptioning: { ...captioningOf(a.aiCaptioningLanguageCode), status: a.aiCaptioningStatus, errorMessage: a.aiCaptioningError },
  };
}

export function presentSummary(a: AssetRow) {
  return {
    id: a.id,
    preset: a.preset,
    title: a.title,
    status: a.status,
    durationMilliseconds: a.durationMilliseconds,
    metadata: a.metadata,
    tags: a.tags,
    attributes: a.attributes,
    createDate: a.createDate,
    lastModificationDate: a.lastModificationDate,
  };
}
