import { extname } from 'node:path';
import { and, eq, inArray, sql } from 'drizzle-orm';
import type { PlatformContext } from '../../context.ts';
import type { Queryable } from '../../db/client.ts';
import { defineJob } from '../../jobs/queue.ts';
import { FILE_TYPE_EXTENSIONS, type FileType } from '../../media/fileTypes.ts';
import { MEDIA_INFO_VERSION } from '../../media/inspect.ts';
import { NotMediaError, ProbeUnavailableError, probeMedia, type ProbedFile } from '../../media/probe.ts';
import { ApiError, notFound } from '../../platform/errors.ts';
import { isUuid, newId } from '../../platform/ids.ts';
import { multiDelete } from '../../platform/multiDelete.ts';
import { contentTypeOf } from '../../storage/contentTypes.ts';
import { recordEvent } from '../../platform/events.ts';
import { completeParts, partUrl, partUrls, planParts, storedPlan } from './files.parts.ts';
import { fileKey, filePrefix } from './storageKeys.ts';
import { presentFile, presentSummary, toTranscodingTrack } from './files.present.ts';
import { vodFiles } from './files.tables.ts';

export { presentSummary, toTranscodingTrack } from './files.present.ts';

export type FileRow = typeof vodFiles.$inferSelect;
export const FILE_STATUSES = ['Uploading', 'Completed', 'Error'] as const;
export interface ExpireUploadJob {
  tenantId: string;
  fileId: string;
}
/** Each upload's expiry runs at its deadline (the abandoned-upload sweeper). */
export const expireUploadJob = defineJob<ExpireUploadJob>('vod-file-expire-upload', { retryLimit: 10, retryDelaySeconds: 60 });

const PROBE_TIMEOUT_MS = 30_000;

export function fileTypeOfExtension(ext: string): FileType | undefined {
  return (Object.keys(FILE_TYPE_EXTENSIONS) as FileType[]).find((t) => (FILE_TYPE_EXTENSIONS[t] as readonly string[]).includes(ext));
}

/** The last path segment of a client's file name, reduced to characters that are safe in every store's keys. */
export function safeName(name: string): string {
  const base = name
    .split(/[\\/]/)
    .pop()!
    .replace(/[^A-Za-z0-9._-]+/g, '_')
    .replace(/^[._]+/, '');
  const ext = extname(base);
  return (base.length > 200 ? base.slice(0, 200 - ext.length) + ext : base) || 'file';
}

export const fileNotFound = (id: string) => notFound('file_not_found', 'File', id);
const notUploading = (row: FileRow) =>
  new ApiError(409, 'file_not_uploading', `File ${row.id} is ${row.status}; only a file in status Uploading takes parts, completion or cancellation`);
/** Parts and completion belong to uploads: an imported file is filled by the platform. */
const importing = (row: FileRow) =>
  new ApiError(409, 'file_importing', `File ${row.id} is being imported from a URL; it takes no parts and completes by itself (cancel stops it)`);
const notCompleted = (row: FileRow) => new ApiError(409, 'file_not_completed', `File ${row.id} is ${row.status}; its upload has not been completed`);

/** Another tenant's file, a malformed id and a missing file are all the same: not found. */
async function findRow(db: Queryable, tenantId: string, id: string): Promise<FileRow> {
  const row = await findFile(db, tenantId, id);
  if (!row) throw fileNotFound(id);
  return row;
}

// --- upload ---------------------------------------------------------------------------------------------------------

export interface StartRequest {
  name: string;
  friendlyName: string;
  fileSize: number;
  metadata?: Record<string, string>;
  tags?: string[];
  attributes?: string[];
}

export async function startUpload(ctx: PlatformContext, tenantId: string, req: StartRequest) {
  const extension = extname(req.name).toLowerCase();
  const fileTypes = fileTypeOfExtension(extension);
  if (!fileTypes) {
    throw new ApiError(400, 'unsupported_file_type', `name: "${extension || 'no extension'}" is not an accepted file type; see GET /vod/v1/filetypes`, [
      { field: 'name', message: 'has an extension that is not accepted' },
    ]);
  }
  const plan = planParts(req.fileSize, ctx.store.minPartSize, ctx.config.uploadPartSize);
  const id = newId();
  const objectKey = fileKey(tenantId, id, safeName(req.name));
  const { uploadId } = await ctx.store.createMultipartUpload(objectKey, contentTypeOf(objectKey), plan.partSize);
  // Dates in milliseconds, as answered: a date read from a file is an exact bound for the list's date filters.
  const now = new Date();
  try {
    await ctx.db.transaction(async (tx) => {
      await tx.insert(vodFiles).values({
        id,
        createDate: now,
        lastModificationDate: now,
        tenantId,
        name: req.name,
        friendlyName: req.friendlyName,
        orginalFileName: req.name,
        extension,
        fileKey: objectKey,
        fileSize: req.fileSize,
        status: 'Uploading',
        fileTypes,
        metadata: req.metadata ?? {},
        tags: req.tags ?? [],
        attributes: req.attributes ?? [],
        uploadId,
        partSize: plan.partSize,
        partsCount: plan.partsCount,
      });
      await recordEvent(tx, tenantId, 'vod.file.created', { id, name: req.name, fileSize: req.fileSize });
      await ctx.jobs.send(expireUploadJob, { tenantId, fileId: id }, { tx, startAfter: uploadDeadline(ctx, now) });
    });
  } catch (e) {
    await ctx.store.abortMultipartUpload(objectKey, uploadId).catch(() => {});
    throw e;
  }
  const multipartUrls = await partUrls(ctx.store, objectKey, uploadId, plan.partsCount, ctx.config.uploadUrlTtlSeconds);
  return { fileId: id, multipartUrls, fileKey: objectKey, ...plan };
}

const uploadDeadline = (ctx: PlatformContext, start: Date) => new Date(start.getTime() + ctx.config.uploadTtlHours * 3_600_000);

export async function filePartUrl(ctx: PlatformContext, tenantId: string, id: string, partNumber: number) {
  const row = await findRow(ctx.db, tenantId, id);
  if (row.status === 'Uploading' && row.importUrl) throw importing(row);
  if (row.status !== 'Uploading' || !row.uploadId) throw notUploading(row);
  return partUrl(ctx.store, { ...row, uploadId: row.uploadId }, partNumber, ctx.config.uploadUrlTtlSeconds);
}

export async function completeUpload(ctx: PlatformContext, tenantId: string, fileId: string, requested: { partNumber: number; eTag?: string }[]) {
  const row = await findRow(ctx.db, tenantId, fileId);
  if (row.status === 'Uploading' && row.importUrl) throw importing(row);
  if (row.status !== 'Uploading' || !row.uploadId) throw notUploading(row);
  await completeParts(ctx.store, { fileKey: row.fileKey, uploadId: row.uploadId, plan: storedPlan(row) }, requested, () => goneFromStore(row.id));
  // The store has joined the parts: the upload is over whatever ffprobe says. A file it cannot read yet (or cannot
  // read at all) completes without media facts; `detect` reads them again later.
  const info = await probeStored(ctx, row.fileKey).catch((e) => {
    if (e instanceof NotMediaError || e instanceof ProbeUnavailableError) return undefined;
    throw e;
  });
  const [done] = await ctx.db.transaction(async (tx) => {
    const updated = await tx
      .update(vodFiles)
      .set({
        status: 'Completed',
        uploadId: null,
        lastModificationDate: new Date(),
        ...(info ? mediaFacts(info) : {}),
      })
      .where(and(eq(vodFiles.id, row.id), eq(vodFiles.status, 'Uploading')))
      .returning();
    if (updated.length) await recordEvent(tx, tenantId, 'vod.file.completed', { id: row.id, fileSize: row.fileSize, fileTypes: updated[0].fileTypes });
    return updated;
  });
  if (!done) throw notUploading(await findRow(ctx.db, tenantId, fileId));
  ctx.metrics.uploadBytes.inc(row.fileSize);
  return { fileId: row.id, fileKey: row.fileKey };
}

/** The upload is no longer open in the store (aborted, or expired by a lifecycle rule). */
export const goneFromStore = (id: string) => new ApiError(409, 'file_not_uploading', `The upload of file ${id} is no longer open in the store`);

export async function probeStored(ctx: PlatformContext, fileKey: string): Promise<ProbedFile> {
  return probeMedia(await ctx.store.readableLocation(fileKey), { timeoutMs: PROBE_TIMEOUT_MS, name: fileKey });
}

/** What a file's row keeps of its probe. */
export const mediaFacts = (info: ProbedFile) => ({
  fileTypes: info.fileType,
  tracks: info.tracks,
  durationMs: info.durationMs ?? null,
  mediaInfo: { version: MEDIA_INFO_VERSION, info: info.mediaInfo },
});

export async function cancelUpload(ctx: PlatformContext, tenantId: string, id: string, deleteFile: boolean): Promise<void> {
  const row = await findRow(ctx.db, tenantId, id);
  // An import is stopped by its own job, which sees the file leave Uploading at its next progress write.
  if (row.status !== 'Uploading' || !(row.uploadId || row.importUrl)) throw notUploading(row);
  if (deleteFile) return void (await removeFile(ctx, row, 'cancelled'));
  if (row.uploadId) await ctx.store.abortMultipartUpload(row.fileKey, row.uploadId);
  await ctx.db.transaction(async (tx) => {
    const updated = await tx
      .update(vodFiles)
      .set({ status: 'Error', uploadId: null, lastModificationDate: new Date(), ...(row.importUrl ? { errorMessage: 'the import was cancelled' } : {}) })
      .where(and(eq(vodFiles.id, row.id), eq(vodFiles.status, 'Uploading')))
      .returning({ id: vodFiles.id });
    if (updated.length) await recordEvent(tx, tenantId, 'vod.file.failed', { id: row.id, reason: 'cancelled' });
  });
}

/** Frees the file's storage first, then drops the row: a failure half way leaves a row that can be deleted again. */
async function removeFile(ctx: PlatformContext, row: FileRow, reason: string): Promise<string> {
  if (row.uploadId) await ctx.store.abortMultipartUpload(row.fileKey, row.uploadId);
  await ctx.store.deletePrefix(filePrefix(row.tenantId, row.id));
  await ctx.db.transaction(async (tx) => {
    const gone = await tx
      .delete(vodFiles)
      .where(and(eq(vodFiles.tenantId, row.tenantId), eq(vodFiles.id, row.id)))
      .returning({ id: vodFiles.id });
    if (gone.length) await recordEvent(tx, row.tenantId, 'vod.file.deleted', { id: row.id, fileKey: row.fileKey, reason });
  });
  return row.fileKey;
}

/** The sweeper's job: an upload still not completed at its deadline is deleted and its storage freed. */
export async function expireUpload(ctx: PlatformContext, { tenantId, fileId }: ExpireUploadJob): Promise<void> {
  const row = await findFile(ctx.db, tenantId, fileId);
  if (row?.status !== 'Uploading') return;
  const deadline = uploadDeadline(ctx, row.createDate);
  // The TTL was raised since the upload started: look again at the new deadline.
  if (deadline.getTime() > Date.now()) return void (await ctx.jobs.send(expireUploadJob, { tenantId, fileId }, { startAfter: deadline }));
  await removeFile(ctx, row, 'upload_expired');
}

// --- file operations ------------------------------------------------------------------------------------------------

export async function getFile(ctx: PlatformContext, tenantId: string, id: string) {
  return presentFile(ctx, await findRow(ctx.db, tenantId, id));
}

export interface PatchRequest {
  metadata?: Record<string, string>;
  name?: string;
  friendlyName?: string;
  tags?: string[];
  attributes?: string[];
}

export async function updateFile(ctx: PlatformContext, tenantId: string, id: string, patch: PatchRequest) {
  const row = await findRow(ctx.db, tenantId, id);
  const changes = Object.fromEntries(
    Object.entries(patch).filter(([k, v]) => v !== undefined && ['metadata', 'name', 'friendlyName', 'tags', 'attributes'].includes(k)),
  );
  if (!Object.keys(changes).length) return presentSummary(row);
  const updated = await ctx.db.transaction(async (tx) => {
    const [u] = await tx
      .update(vodFiles)
      .set({ ...changes, lastModificationDate: new Date() })
      .where(and(eq(vodFiles.tenantId, tenantId), eq(vodFiles.id, row.id)))
      .returning();
    if (!u) throw fileNotFound(id);
    await recordEvent(tx, tenantId, 'vod.file.updated', { id: row.id, changed: Object.keys(changes) });
    return u;
  });
  return presentSummary(updated);
}

export async function deleteFile(ctx: PlatformContext, tenantId: string, id: string) {
  return { deletedFileKey: await removeFile(ctx, await findRow(ctx.db, tenantId, id), 'deleted') };
}

export function deleteFiles(ctx: PlatformContext, tenantId: string, ids: string[]) {
  return multiDelete(ids, async (id) => void (await deleteFile(ctx, tenantId, id)));
}

export async function previewLink(ctx: PlatformContext, tenantId: string, id: string) {
  const row = await findRow(ctx.db, tenantId, id);
  if (row.status !== 'Completed') throw notCompleted(row);
  const ttl = ctx.config.previewTtlSeconds;
  return { link: await ctx.store.presignGet(row.fileKey, ttl), expirationDate: new Date(Date.now() + ttl * 1000) };
}

/** Reads the file's media facts again and keeps them: tracks, duration and file type. */
export async function detect(ctx: PlatformContext, tenantId: string, id: string): Promise<FileRow> {
  return (await probeAndKeep(ctx, tenantId, id)).row;
}

async function probeAndKeep(ctx: PlatformContext, tenantId: string, id: string): Promise<{ row: FileRow; info: ProbedFile }> {
  const row = await findRow(ctx.db, tenantId, id);
  if (row.status !== 'Completed') throw notCompleted(row);
  let info: ProbedFile;
  try {
    info = await probeStored(ctx, row.fileKey);
  } catch (e) {
    if (e instanceof NotMediaError) throw new ApiError(400, 'file_not_media', `File ${id} is not a media file ffprobe can read: ${e.message}`);
    if (e instanceof ProbeUnavailableError) throw new ApiError(503, 'media_tools_unavailable', `The platform cannot read media files right now: ${e.message}`);
    throw e;
  }
  const [updated] = await ctx.db
    .update(vodFiles)
    .set(mediaFacts(info))
    .where(and(eq(vodFiles.tenantId, tenantId), eq(vodFiles.id, row.id)))
    .returning();
  return { row: updated ?? row, info };
}

/** The tracks as assets select them (TranscodingTrack), with what ffprobe read of each and of the whole file. */
export async function detectTracks(ctx: PlatformContext, tenantId: string, id: string) {
  const { info } = await probeAndKeep(ctx, tenantId, id);
  return {
    tracks: info.tracks.map((t) => ({
      ...toTranscodingTrack(t),
      codec: t.codec,
      ...(t.width !== undefined ? { width: t.width } : {}),
      ...(t.height !== undefined ? { height: t.height } : {}),
      ...(t.frameRate !== undefined ? { frameRate: t.frameRate } : {}),
      ...(t.durationMs !== undefined ? { durationMilliseconds: t.durationMs } : {}),
      ...(t.bitRate !== undefined ? { bitRate: t.bitRate } : {}),
      ...(t.channels !== undefined ? { channels: t.channels } : {}),
      ...(t.sampleRate !== undefined ? { sampleRate: t.sampleRate } : {}),
    })),
    ...(info.durationMs !== undefined ? { durationMilliseconds: info.durationMs } : {}),
    ...(info.bitRate !== undefined ? { bitRate: info.bitRate } : {}),
    format: info.formatName,
  };
}

export async function fileDuration(ctx: PlatformContext, tenantId: string, id: string) {
  let row = await findRow(ctx.db, tenantId, id);
  if (row.durationMs === null) row = await detect(ctx, tenantId, id);
  if (row.durationMs === null) throw new ApiError(400, 'file_duration_unknown', `File ${id} has no duration (a caption file, or a stream without timing)`);
  return { duration: row.durationMs };
}

// --- for the assets module ------------------------------------------------------------------------------------------

/** A file as the assets module needs it (key, status, tracks); undefined when the tenant has no such file. */
export async function findFile(db: Queryable, tenantId: string, id: string): Promise<FileRow | undefined> {
  if (!isUuid(id)) return undefined;
  const [row] = await db
    .select()
    .from(vodFiles)
    .where(and(eq(vodFiles.tenantId, tenantId), eq(vodFiles.id, id)));
  return row;
}

/** Records that an asset uses these files (call inside the asset's transaction); returns the ids that exist. */
export async function linkAssetToFiles(tx: Queryable, tenantId: string, assetId: string, fileIds: string[]): Promise<string[]> {
  const ids = fileIds.filter(isUuid);
  if (!ids.length) return [];
  const rows = await tx
    .update(vodFiles)
    .set({
      vodAssets: sql`case when ${assetId} = any(${vodFiles.vodAssets}) then ${vodFiles.vodAssets} else array_append(${vodFiles.vodAssets}, ${assetId}::text) end`,
    })
    .where(and(eq(vodFiles.tenantId, tenantId), inArray(vodFiles.id, ids)))
    .returning({ id: vodFiles.id });
  return rows.map((r) => r.id);
}

/** Forgets an asset on every file that listed it (the asset was deleted). */
export async function unlinkAsset(tx: Queryable, tenantId: string, assetId: string): Promise<void> {
  await tx
    .update(vodFiles)
    .set({ vodAssets: sql`array_remove(${vodFiles.vodAssets}, ${assetId}::text)` })
    .where(and(eq(vodFiles.tenantId, tenantId), sql`${assetId} = any(${vodFiles.vodAssets})`));
}
