import type { Queryable } from '../../../db/client.ts';
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

// Filled in against the VOD files module's service when it lands.
export async function loadSourceFiles(_db: Queryable, _tenantId: string, _ids: string[]): Promise<Map<string, SourceFile>> {
  throw new Error('VOD files module not merged yet');
}
export async function linkAssetToFiles(_tx: Queryable, _tenantId: string, _assetId: string, _fileIds: string[]): Promise<void> {}
export async function unlinkAssetFromFiles(_tx: Queryable, _tenantId: string, _assetId: string): Promise<void> {}
