import { oneOf } from '../../platform/filters.ts';
import { pageArray, type PageRequest } from '../../platform/paging.ts';
import { PRESETS, type Preset } from './presets.ts';

const presentPreset = (p: Preset) => ({
  id: p.id,
  name: p.name,
  description: p.description,
  createsDownload: p.createsDownload,
  mediaType: p.mediaType,
  noTranscoding: p.noTranscoding,
  hasVerticalOrientation: p.hasVerticalOrientation,
  allowedExtensionsFile: [...p.allowedExtensionsFile],
  ...(p.protection ? { protection: { ...p.protection } } : {}),
});

const PRESENTED = PRESETS.map(presentPreset);
const MEDIA_TYPES: readonly Preset['mediaType'][] = ['video', 'audio'];

export function listPresets(req: PageRequest & { mediaType?: string }) {
  const mediaType = req.mediaType ? oneOf('mediaType', req.mediaType, MEDIA_TYPES) : undefined;
  return pageArray(mediaType ? PRESENTED.filter((p) => p.mediaType === mediaType) : PRESENTED, req);
}

/** The preset an asset or output asks for; other modules read the catalogue through here. */
export { presetById, type Preset } from './presets.ts';
