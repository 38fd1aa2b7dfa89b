import type { PlatformContext } from '../../../context.ts';
import type { Queryable } from '../../../db/client.ts';
import { MEDIA_INFO_VERSION, type MediaInfo } from '../../../media/inspect.ts';
import { ApiError } from '../../../platform/errors.ts';
import { detect, findFile, linkAssetToFiles, toTranscodingTrack, unlinkAsset, type FileRow } from '../files.service.ts';
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
  /** The file's probe as the transcoder reads it, when it was kept under the current shape (else probed again). */
  mediaInfo?: MediaInfo;
}

const sourceOf = (f: FileRow): SourceFile => ({
  id: f.id,
  status: f.status,
  fileKey: f.fileKey,
  extension: f.extension,
  durationMs: f.durationMs,
  fileTypes: f.fileTypes,
  tracks: f.tracks.map(toTranscodingTrack),
  ...(f.mediaInfo?.version === MEDIA_INFO_VERSION ? { mediaInfo: f.mediaInfo.info } : {}),
});

export async function loadSourceFiles(db: Queryable, tenantId: string, ids: string[]): Promise<Map<string, SourceFile>> {
  const found = new Map<string, SourceFile>();
  for (const id of new Set(ids)) {
    const f = await findFile(db, tenantId, id);
    if (f) found.set(id, sourceOf(f));
  }
  return found;
}

/**
 * The file as a source of media. A completed file without tracks was not read as media when its upload completed
 * (not media at all, or ffprobe was unavailable then): it is read again now, and one that is not media is refused
 * with 400 `file_not_media` naming `field`.
 */
export async function mediaSource(ctx: PlatformContext, tenantId: string, file: SourceFile, field: string): Promise<SourceFile> {
  if (file.tracks.length) return file;
  try {
    return sourceOf(await detect(ctx, tenantId, file.id));
  } catch (e) {
    if (e instanceof ApiError && e.code === 'file_not_media') throw new ApiError(400, e.code, e.message, [{ field, message: 'is not a media file' }]);
    throw e;
  }
}

export { linkAssetToFiles };
export const unlinkAssetFromFiles = unlinkAsset;
