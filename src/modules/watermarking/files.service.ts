import { and, count, eq } from 'drizzle-orm';
import type { Static } from 'typebox';
import type { PlatformContext } from '../../context.ts';
import type { Queryable } from '../../db/client.ts';
import { ApiError, notFound } from '../../platform/errors.ts';
import { recordEvent } from '../../platform/events.ts';
import { textSearch } from '../../platform/filters.ts';
import { isUuid, newId } from '../../platform/ids.ts';
import { envelope, orderBy, pageWindow, type PageRequest } from '../../platform/paging.ts';
import { contentTypeOf } from '../../storage/contentTypes.ts';
import { completeParts, goneFromStore, partUrl, partUrls, planParts, storedPlan } from '../vod/index.ts';
import { detectJob } from './jobs.ts';
import type * as s from './schemas.ts';
import { suspectKey } from './storageKeys.ts';
import { watermarkingFiles, type DetectionRow } from './tables.ts';

type FileRow = typeof watermarkingFiles.$inferSelect;

export const fileNotFound = (id: string) => notFound('watermarking_file_not_found', 'Watermarking file', id);
const notUploading = (row: FileRow) =>
  new ApiError(409, 'file_not_uploading', `File ${row.id} is ${row.uploadStatus}; only a file in status Uploading takes parts or completion`);

/** The last path segment of a client's file name, reduced to characters every store accepts in keys. */
const safeName = (name: string) =>
  name
    .split(/[\\/]/)
    .pop()!
    .replace(/[^A-Za-z0-9._-]+/g, '_')
    .replace(/^[._]+/, '')
    .slice(-200) || 'file';

export const presentFile = (r: FileRow) => ({
  id: r.id,
  orginalFileName: r.orginalFileName,
  createDate: r.createDate,
  uploadStatus: r.uploadStatus,
  fileSize: r.fileSize,
  detection: r.detection,
  lastModificationDate: r.lastModificationDate,
});

export async function findSuspect(db: Queryable, tenantId: string, id: string): Promise<FileRow> {
  if (!isUuid(id)) throw fileNotFound(id);
  const [row] = await db
    .select()
    .from(watermarkingFiles)
    .where(and(eq(watermarkingFiles.tenantId, tenantId), eq(watermarkingFiles.id, id)));
  if (!row) throw fileNotFound(id);
  return row;
}

export async function startUpload(ctx: PlatformContext, tenantId: string, body: Static<typeof s.StartBody>) {
  const plan = planParts(body.fileSize, ctx.store.minPartSize, ctx.config.uploadPartSize);
  const id = newId();
  const key = suspectKey(tenantId, id, safeName(body.name));
  const { uploadId } = await ctx.store.createMultipartUpload(key, contentTypeOf(key), plan.partSize);
  try {
    await ctx.db.transaction(async (tx) => {
      await tx.insert(watermarkingFiles).values({
        id,
        tenantId,
        orginalFileName: body.name,
        fileKey: key,
        fileSize: body.fileSize,
        uploadStatus: 'Uploading',
        uploadId,
        partSize: plan.partSize,
        partsCount: plan.partsCount,
      });
      await recordEvent(tx, tenantId, 'watermarking.file.created', { id, name: body.name, fileSize: body.fileSize });
    });
  } catch (e) {
    await ctx.store.abortMultipartUpload(key, uploadId).catch(() => {});
    throw e;
  }
  const multipartUrls = await partUrls(ctx.store, key, uploadId, plan.partsCount, ctx.config.uploadUrlTtlSeconds);
  return { fileId: id, multipartUrls, fileKey: key, ...plan };
}

export async function suspectPartUrl(ctx: PlatformContext, tenantId: string, id: string, nr: number) {
  const row = await findSuspect(ctx.db, tenantId, id);
  if (row.uploadStatus !== 'Uploading' || !row.uploadId) throw notUploading(row);
  return partUrl(ctx.store, { ...row, uploadId: row.uploadId }, nr, ctx.config.uploadUrlTtlSeconds);
}

export async function completeUpload(ctx: PlatformContext, tenantId: string, body: Static<typeof s.CompleteBody>) {
  const row = await findSuspect(ctx.db, tenantId, body.fileId);
  if (row.uploadStatus !== 'Uploading' || !row.uploadId) throw notUploading(row);
  await completeParts(ctx.store, { fileKey: row.fileKey, uploadId: row.uploadId, plan: storedPlan(row) }, body.parts, () => goneFromStore(row.id));
  await ctx.db.transaction(async (tx) => {
    const done = await tx
      .update(watermarkingFiles)
      .set({ uploadStatus: 'Completed', uploadId: null, lastModificationDate: new Date() })
      .where(and(eq(watermarkingFiles.id, row.id), eq(watermarkingFiles.uploadStatus, 'Uploading')))
      .returning({ id: watermarkingFiles.id });
    if (!done.length) throw notUploading(row);
    await recordEvent(tx, tenantId, 'watermarking.file.completed', { id: row.id, fileSize: row.fileSize });
  });
  return { fileId: row.id, fileKey: row.fileKey };
}

export async function getSuspect(db: Queryable, tenantId: string, id: string) {
  return presentFile(await findSuspect(db, tenantId, id));
}

const SORTS = {
  CreateDate: watermarkingFiles.createDate,
  LastModificationDate: watermarkingFiles.lastModificationDate,
  OrginalFileName: watermarkingFiles.orginalFileName,
  UploadStatus: watermarkingFiles.uploadStatus,
  Id: watermarkingFiles.id,
};

export async function listSuspects(db: Queryable, tenantId: string, q: Static<typeof s.FileListQuery>) {
  const where = and(eq(watermarkingFiles.tenantId, tenantId), textSearch(q.query, watermarkingFiles.orginalFileName));
  const { limit, offset } = pageWindow(q);
  const [rows, [{ total }]] = await Promise.all([
    db
      .select()
      .from(watermarkingFiles)
      .where(where)
      .orderBy(...orderBy(q, SORTS, 'CreateDate', watermarkingFiles.id))
      .limit(limit)
      .offset(offset),
    db.select({ total: count() }).from(watermarkingFiles).where(where),
  ]);
  return envelope(rows.map(presentFile), total, q as PageRequest);
}

/** Create watermarking detection job: the file's `detection` starts over as Pending with the new job's id. */
export async function createDetectJob(ctx: PlatformContext, tenantId: string, fileId: string) {
  const row = await findSuspect(ctx.db, tenantId, fileId);
  if (row.uploadStatus !== 'Completed') throw new ApiError(409, 'file_not_completed', `File ${row.id} is ${row.uploadStatus}; complete its upload first`);
  const jobId = newId();
  const detection: DetectionRow = { status: 'Pending', progress: 0, jobId };
  await ctx.db.transaction(async (tx) => {
    await tx.update(watermarkingFiles).set({ detection, lastModificationDate: new Date() }).where(eq(watermarkingFiles.id, row.id));
    await ctx.jobs.send(detectJob, { tenantId, fileId: row.id, jobId }, { tx });
    await recordEvent(tx, tenantId, 'watermarking.detection.started', { id: row.id, jobId });
  });
  return { jobId };
}
