import type { PlatformContext } from '../../context.ts';
import type { MediaTrack } from '../../media/probe.ts';
import type { vodFiles } from './files.tables.ts';

type FileRow = typeof vodFiles.$inferSelect;

/** A file as the API answers it: whole (get) or as a summary (list, update). */

export const toTranscodingTrack = (t: MediaTrack) => ({
  trackSelector: { trackId: t.trackId },
  type: t.type,
  ...(t.language ? { language: t.language } : {}),
  name: t.name,
});

export function presentFile(ctx: PlatformContext, row: FileRow) {
  return {
    id: row.id,
    tenantId: row.tenantId,
    fileKey: row.fileKey,
    metadata: row.metadata,
    status: row.status,
    createDate: row.createDate,
    lastModificationDate: row.lastModificationDate,
    vodAssets: row.vodAssets,
    fileTypes: row.fileTypes,
    fileSize: row.fileSize,
    s3Uri: ctx.store.uri(row.fileKey),
    location: ctx.store.location(row.fileKey),
    bucket: ctx.store.bucket,
    orginalFileName: row.orginalFileName,
    name: row.name,
    friendlyName: row.friendlyName,
    tags: row.tags,
    attributes: row.attributes,
    tracks: row.tracks.map(toTranscodingTrack),
    errorMessage: row.errorMessage,
    ...(row.importUrl ? { import: importProgress(row, row.importUrl) } : {}),
  };
}

/** Where an imported file comes from and how far its fetch has got (percent once the origin announced the size). */
function importProgress(row: FileRow, url: string) {
  const bytesReceived = row.bytesReceived ?? 0;
  const progressPercent = row.status === 'Completed' ? 100 : row.fileSize > 0 ? Math.min(99, Math.floor((bytesReceived * 100) / row.fileSize)) : undefined;
  return { url, bytesReceived, ...(progressPercent !== undefined ? { progressPercent } : {}) };
}

export const presentSummary = (row: Omit<FileRow, 'mediaInfo'>) => ({
  id: row.id,
  fileKey: row.fileKey,
  status: row.status,
  fileSize: row.fileSize,
  name: row.name,
  friendlyName: row.friendlyName,
  tags: row.tags,
  attributes: row.attributes,
  metadata: row.metadata,
  fileTypes: row.fileTypes,
  errorMessage: row.errorMessage,
  createDate: row.createDate,
  lastModificationDate: row.lastModificationDate,
});
