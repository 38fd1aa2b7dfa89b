import { validationError } from '../../../platform/errors.ts';
import type { SourceFile } from './sourceFiles.ts';
import type { TranscodingTrackRow } from './tables.ts';

const normalizeType = (type: string) => (type.toLowerCase().startsWith('caption') ? 'Caption' : type.charAt(0).toUpperCase() + type.slice(1).toLowerCase());

/**
 * The tracks an output is made of (spec, "Create VOD asset"): the first video track is taken automatically unless one
 * is named; audio and caption tracks only when listed, so no listed audio means a muted output.
 */
export function selectTracks(file: SourceFile, requested: TranscodingTrackRow[], field: string): TranscodingTrackRow[] {
  const chosen: TranscodingTrackRow[] = [];
  for (const [i, t] of requested.entries()) {
    const type = normalizeType(t.type);
    if (!['Video', 'Audio', 'Caption'].includes(type)) throw validationError(`${field}[${i}].type`, 'must be Video, Audio or Caption');
    const found = file.tracks.find((d) => d.trackSelector.trackId === t.trackSelector.trackId);
    if (!found)
      throw validationError(
        `${field}[${i}].trackSelector.trackId`,
        `file ${file.id} has no track ${t.trackSelector.trackId}; see POST /vod/v1/files/${file.id}/detect`,
      );
    if (normalizeType(found.type) !== type) throw validationError(`${field}[${i}].type`, `track ${t.trackSelector.trackId} is a ${found.type} track`);
    if (!chosen.some((c) => c.trackSelector.trackId === found.trackSelector.trackId)) {
      chosen.push({ trackSelector: { trackId: found.trackSelector.trackId }, type, language: t.language ?? found.language, name: t.name ?? found.name });
    }
  }
  if (!chosen.some((c) => c.type === 'Video')) {
    const video = file.tracks.find((d) => normalizeType(d.type) === 'Video');
    if (video) chosen.unshift({ trackSelector: { trackId: video.trackSelector.trackId }, type: 'Video', language: video.language, name: video.name });
  }
  return chosen;
}
