import type { Queryable } from '../../../db/client.ts';
import { findFile, linkAssetToFiles, toTranscodingTrack, unlinkAsset } from '../files.service.ts';
import type { TranscodingTrackRow } from './tables.ts';

/** What the assets module needs to know of an uploaded file. */
export interface SourceFile {
  id: string;
  status: string;
  fileKey: string;
  /** Lower-case extension with its dot (`.mp4`), or '' when the name has none. */
  extension: string;
  durationMs: number | null;
  fileTypes: string | null;
  tracks: TranscodingTrackRow[];
}

export async function loadSourceFiles(db: Queryable, tenantId: string, ids: string[]): Promise<Map<string, SourceFile>> {
  const found = new Map<string, SourceFile>();
  for (const id of new Set(ids)) {
    const f = await findFile(db, tenantId, id);
    if (f) found.set(id, { id: f.id, status: f.status, fileKey: f.fileKey, extension: f.extension, durationMs: f.durationMs, fileTypes: f.fileTypes, tracks: f.tracks.map(toTranscodingTrack) });
  }
  return found;
}

export { linkAssetToFiles };
export const unlinkAssetFromFiles = unlinkAsset;
