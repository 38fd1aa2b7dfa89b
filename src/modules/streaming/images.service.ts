import type { Static } from 'typebox';
import { and, count, desc as descending, asc, eq, gte, inArray, lte, type SQL } from 'drizzle-orm';
import type { PlatformContext } from '../../context.ts';
import { inspect, isStillImage } from '../../media/inspect.ts';
import { ApiError, notFound, validationError } from '../../platform/errors.ts';
import { arrayParam, oneOf } from '../../platform/filters.ts';
import { isUuid, newId } from '../../platform/ids.ts';
import { multiDelete } from '../../platform/multiDelete.ts';
import { envelope, pageWindow, type PageRequest } from '../../platform/paging.ts';
import { completeParts, partUrl, partUrls, planParts, storedPlan } from '../vod/index.ts';
import { addUploadedImage, removeUploadedImage } from './assets.service.ts';
import { requirePlayable } from './catalogue.ts';
import { imageKey, imageUrl } from './storageKeys.ts';
import { streamingImages } from './tables.ts';
import type * as s from './images.schemas.ts';

type ImageRow = typeof streamingImages.$inferSelect;

/** Image formats accepted, by ffprobe's codec name, with the content type they are served with. */
export const IMAGE_TYPES: Record<string, string> = {
  png: 'image/png',
  mjpeg: 'image/jpeg',
  webp: 'image/webp',
  gif: 'image/gif',
  bmp: 'image/bmp',
};
const STATUSES = ['Uploading', 'Completed', 'Error'] as const;

const imageNotFound = (id: string) => notFound('image_not_found', 'Image', id);

function present(ctx: PlatformContext, r: ImageRow) {
  return {
    id: r.id,
    fileKey: r.fileKey,
    status: r.status,
    fileSize: r.fileSize,
    s3Uri: ctx.store.uri(r.fileKey),
    url: imageUrl(ctx.config.publicUrl.origin, r.tenantId, r.assetId, r.id),
    bucket: ctx.store.bucket,
    orginalFileName: r.orginalFileName,
    name: r.name,
    fileType: r.fileType,
    createDate: r.createDate,
    lastModificationDate: r.lastModificationDate,
  };
}

async function findImage(ctx: PlatformContext, tenantId: string, assetId: string, id: string): Promise<ImageRow> {
  if (!isUuid(id)) throw imageNotFound(id);
  const [row] = await ctx.db
    .select()
    .from(streamingImages)
    .where(and(eq(streamingImages.tenantId, tenantId), eq(streamingImages.assetId, assetId), eq(streamingImages.id, id.toLowerCase())));
  if (!row) throw imageNotFound(id);
  return row;
}

const notUploading = (row: ImageRow) =>
  new ApiError(409, 'image_not_uploading', `Image ${row.id} is ${row.status}; only an image in status Uploading takes parts or completion`);

export async function startImageUpload(ctx: PlatformContext, tenantId: string, assetId: string, body: Static<typeof s.ImageStartBody>) {
  const asset = await requirePlayable(ctx, tenantId, assetId);
  const plan = planParts(body.fileSize, ctx.store.minPartSize, ctx.config.uploadPartSize);
  const id = newId();
  const key = imageKey(tenantId, asset.id, id, body.name);
  const { uploadId } = await ctx.store.createMultipartUpload(key, undefined, plan.partSize);
  const now = new Date();
  await ctx.db.insert(streamingImages).values({
    id,
    tenantId,
    assetId: asset.id,
    name: body.name,
    orginalFileName: body.name,
    fileKey: key,
    fileSize: body.fileSize,
    status: 'Uploading',
    uploadId,
    partSize: plan.partSize,
    partsCount: plan.partsCount,
    createDate: now,
    lastModificationDate: now,
  });
  const multipartUrls = await partUrls(ctx.store, key, uploadId, plan.partsCount, ctx.config.uploadUrlTtlSeconds);
  return { fileId: id, multipartUrls, fileKey: key, ...plan };
}

export async function imagePartUrl(ctx: PlatformContext, tenantId: string, assetId: string, id: string, partNumber: number) {
  const asset = await requirePlayable(ctx, tenantId, assetId);
  const row = await findImage(ctx, tenantId, asset.id, id);
  if (row.status !== 'Uploading' || !row.uploadId) throw notUploading(row);
  return partUrl(ctx.store, { ...row, uploadId: row.uploadId }, partNumber, ctx.config.uploadUrlTtlSeconds);
}

/**
 * Joins the parts, then reads the result with ffprobe: only a still image (PNG, JPEG, WebP, GIF, BMP) is kept. Anything
 * else is deleted from the store, the image turns `Error`, and the caller gets 400 `image_not_valid`. A kept image
 * becomes one of the asset's `images` (key: its name).
 */
export async function completeImageUpload(ctx: PlatformContext, tenantId: string, assetId: string, body: Static<typeof s.ImageCompleteBody>) {
  const asset = await requirePlayable(ctx, tenantId, assetId);
  const row = await findImage(ctx, tenantId, asset.id, body.fileId);
  if (row.status !== 'Uploading' || !row.uploadId) throw notUploading(row);
  await completeParts(
    ctx.store,
    { fileKey: row.fileKey, uploadId: row.uploadId, plan: storedPlan(row) },
    body.parts,
    () => new ApiError(409, 'image_not_uploading', `The upload of image ${row.id} is no longer open in the store`),
  );
  const fileType = await imageType(ctx, row.fileKey);
  const status = fileType ? 'Completed' : 'Error';
  await ctx.db
    .update(streamingImages)
    .set({ status, fileType: fileType ?? null, uploadId: null, lastModificationDate: new Date() })
    .where(eq(streamingImages.id, row.id));
  if (!fileType) {
    await ctx.store.delete(row.fileKey);
    throw new ApiError(400, 'image_not_valid', `The uploaded file ${row.name} is not an image (PNG, JPEG, WebP, GIF or BMP); it was not kept`);
  }
  const url = imageUrl(ctx.config.publicUrl.origin, tenantId, asset.id, row.id);
  await addUploadedImage(ctx, tenantId, asset.id, { Id: row.id, Name: row.name, Url: url });
  return { fileId: row.id, fileKey: row.fileKey, url };
}

/** The codec of a still image, or undefined when ffprobe does not read one. */
async function imageType(ctx: PlatformContext, key: string): Promise<string | undefined> {
  try {
    const info = await inspect(await ctx.store.readableLocation(key), { signal: AbortSignal.timeout(15_000) });
    const stream = info.streams.find((x) => x.type === 'video');
    if (!stream || !stream.width || !stream.height || !(stream.codec in IMAGE_TYPES)) return undefined;
    if (!isStillImage(info) && stream.codec !== 'gif') return undefined;
    return stream.codec;
  } catch {
    return undefined;
  }
}

const SORTS: Record<string, typeof streamingImages.createDate | typeof streamingImages.name | typeof streamingImages.fileSize> = {
  CreateDate: streamingImages.createDate,
  LastModificationDate: streamingImages.lastModificationDate,
  Name: streamingImages.name,
  FileSize: streamingImages.fileSize,
};

export async function listImages(ctx: PlatformContext, tenantId: string, assetId: string, q: Static<typeof s.ImageListQuery>) {
  const asset = await requirePlayable(ctx, tenantId, assetId);
  const ids = arrayParam(q.ids);
  const statuses = arrayParam(q.status).map((x) => oneOf('status', x, STATUSES));
  const fileTypes = arrayParam(q.fileType).map((x) => x.toLowerCase());
  const sortKey = Object.keys(SORTS).find((k) => k.toLowerCase() === (q.sort ?? 'CreateDate').toLowerCase());
  if (!sortKey) throw validationError('sort', `unknown sort property "${q.sort}"; allowed: ${Object.keys(SORTS).join(', ')}`);
  const where: SQL | undefined = and(
    eq(streamingImages.tenantId, tenantId),
    eq(streamingImages.assetId, asset.id),
    ids.length ? inArray(streamingImages.id, ids.filter(isUuid)) : undefined,
    statuses.length ? inArray(streamingImages.status, statuses) : undefined,
    fileTypes.length
      ? inArray(
          streamingImages.fileType,
          fileTypes.map((f) => (f === 'jpeg' || f === 'jpg' ? 'mjpeg' : f)),
        )
      : undefined,
    q.createDateStart ? gte(streamingImages.createDate, new Date(q.createDateStart)) : undefined,
    q.createDateEnd ? lte(streamingImages.createDate, new Date(q.createDateEnd)) : undefined,
    q.lastModificationDateStart ? gte(streamingImages.lastModificationDate, new Date(q.lastModificationDateStart)) : undefined,
    q.lastModificationDateEnd ? lte(streamingImages.lastModificationDate, new Date(q.lastModificationDateEnd)) : undefined,
  );
  if (ids.length && !ids.some(isUuid)) return envelope([], 0, q as PageRequest);
  const { limit, offset } = pageWindow(q);
  const dir = q.desc ? descending : asc;
  const [rows, [{ total }]] = await Promise.all([
    ctx.db.select().from(streamingImages).where(where).orderBy(dir(SORTS[sortKey]), dir(streamingImages.id)).limit(limit).offset(offset),
    ctx.db.select({ total: count() }).from(streamingImages).where(where),
  ]);
  return envelope(
    rows.map((r) => present(ctx, r)),
    total,
    q as PageRequest,
  );
}

export async function getImage(ctx: PlatformContext, tenantId: string, assetId: string, id: string) {
  const asset = await requirePlayable(ctx, tenantId, assetId);
  return present(ctx, await findImage(ctx, tenantId, asset.id, id));
}

export async function deleteImageFile(ctx: PlatformContext, tenantId: string, assetId: string, id: string): Promise<{ deletedFileKey: string }> {
  const asset = await requirePlayable(ctx, tenantId, assetId);
  const row = await findImage(ctx, tenantId, asset.id, id);
  if (row.uploadId) await ctx.store.abortMultipartUpload(row.fileKey, row.uploadId).catch(() => {});
  await ctx.store.delete(row.fileKey);
  await ctx.db.delete(streamingImages).where(and(eq(streamingImages.tenantId, tenantId), eq(streamingImages.id, row.id)));
  await removeUploadedImage(ctx, tenantId, asset.id, row.id);
  return { deletedFileKey: row.fileKey };
}

export async function deleteImageFiles(ctx: PlatformContext, tenantId: string, assetId: string, ids: string[]) {
  await requirePlayable(ctx, tenantId, assetId);
  return multiDelete(ids, async (id) => void (await deleteImageFile(ctx, tenantId, assetId, id)));
}

/** The stored image of an uploaded image id, for serving; undefined unless Completed. */
export async function servedImage(ctx: PlatformContext, tenantId: string, assetId: string, id: string) {
  if (!isUuid(tenantId) || !isUuid(id)) return undefined;
  const [row] = await ctx.db
    .select()
    .from(streamingImages)
    .where(and(eq(streamingImages.tenantId, tenantId.toLowerCase()), eq(streamingImages.assetId, assetId), eq(streamingImages.id, id.toLowerCase())));
  if (row?.status !== 'Completed' || !row.fileType) return undefined;
  return { key: row.fileKey, contentType: IMAGE_TYPES[row.fileType] ?? 'application/octet-stream' };
}
