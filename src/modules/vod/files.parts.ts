import { ApiError } from '../../platform/errors.ts';
import type { ErrorCode } from '../../platform/errorCodes.ts';
import { normalizeETag, StoreError, type ObjectStore, type UploadedPart } from '../../storage/objectStore.ts';

const MiB = 1024 * 1024;
/** S3's limits, which the embedded store keeps too so that clients see one behaviour. */
export const MAX_PARTS = 10_000;
export const MAX_FILE_SIZE = 5 * 1024 ** 4;

export interface PartPlan {
  partSize: number;
  partsCount: number;
  lastPartSize: number;
}

/**
 * Part size from the file size: the smallest of 8, 16, 32 or 64 MiB that keeps the upload within about a hundred
 * parts (enough parallelism, few URLs), larger only when 64 MiB parts would exceed S3's 10,000 parts.
 * `forced` (MEDIAPLANE_UPLOAD_PART_SIZE) replaces the choice, raised to the store's minimum.
 */
export function planParts(fileSize: number, minPartSize: number, forced?: number): PartPlan {
  let partSize = forced ? Math.max(forced, minPartSize) : ([8, 16, 32, 64].map((m) => m * MiB).find((s) => fileSize / s <= 100) ?? 64 * MiB);
  if (fileSize / partSize > MAX_PARTS) partSize = Math.ceil(fileSize / MAX_PARTS / MiB) * MiB;
  const partsCount = Math.max(1, Math.ceil(fileSize / partSize));
  return { partSize, partsCount, lastPartSize: fileSize - (partsCount - 1) * partSize };
}

const uploadError = (code: ErrorCode, message: string) => new ApiError(400, code, message);

/** An upload as its row keeps it (a VOD file, a suspect capture, a catalogue image). */
interface OpenUpload {
  fileKey: string;
  uploadId: string;
  fileSize: number;
  partSize: number;
  partsCount: number;
}

/** The part plan an upload was started with. */
export const storedPlan = (u: Pick<OpenUpload, 'fileSize' | 'partSize' | 'partsCount'>): PartPlan => ({
  partSize: u.partSize,
  partsCount: u.partsCount,
  lastPartSize: u.fileSize - (u.partsCount - 1) * u.partSize,
});

/** A presigned URL for every part of a new upload, in order. */
export const partUrls = (store: ObjectStore, fileKey: string, uploadId: string, partsCount: number, ttlSeconds: number): Promise<string[]> =>
  Promise.all(Array.from({ length: partsCount }, (_, i) => store.presignUploadPart(fileKey, uploadId, i + 1, ttlSeconds)));

/** A fresh presigned URL for one part of an open upload; a part beyond its parts is a 400. */
export async function partUrl(store: ObjectStore, u: Omit<OpenUpload, 'fileSize' | 'partSize'>, partNumber: number, ttlSeconds: number) {
  if (partNumber > u.partsCount) throw uploadError('upload_part_invalid', `this upload has ${u.partsCount} parts; there is no part ${partNumber}`);
  return { url: await store.presignUploadPart(u.fileKey, u.uploadId, partNumber, ttlSeconds) };
}

/**
 * Checks a completion request against what the store holds, so that a client learns exactly which part to send
 * again; the upload stays open and completable. Returns the parts to join, in order, with the store's ETags.
 */
export function checkParts(plan: PartPlan, requested: { partNumber: number; eTag?: string }[], stored: (UploadedPart & { size: number })[]): UploadedPart[] {
  const byNumber = new Map(requested.map((p) => [p.partNumber, p]));
  if (byNumber.size !== requested.length) throw uploadError('upload_part_duplicate', 'parts lists a partNumber more than once');
  const beyond = requested.filter((p) => p.partNumber > plan.partsCount).map((p) => p.partNumber);
  if (beyond.length) throw uploadError('upload_part_invalid', `this upload has ${plan.partsCount} parts; there is no part ${beyond.join(', ')}`);
  const unlisted = range(plan.partsCount).filter((n) => !byNumber.has(n));
  if (unlisted.length) throw uploadError('upload_parts_missing', `parts must list every part from 1 to ${plan.partsCount}; missing: ${unlisted.join(', ')}`);

  const inStore = new Map(stored.map((p) => [p.partNumber, p]));
  const notUploaded = range(plan.partsCount).filter((n) => !inStore.has(n));
  if (notUploaded.length) throw uploadError('upload_parts_not_uploaded', `part ${notUploaded.join(', ')} has not been uploaded yet`);
  const wrongETag = requested.filter((p) => p.eTag !== undefined && normalizeETag(p.eTag) !== normalizeETag(inStore.get(p.partNumber)!.eTag));
  if (wrongETag.length) {
    const list = wrongETag.map((p) => `part ${p.partNumber}: got ${p.eTag}, the store holds ${inStore.get(p.partNumber)!.eTag}`).join('; ');
    throw uploadError('upload_part_etag_mismatch', `the eTag of ${list}; send the part again or use the ETag its upload answered`);
  }
  const wrongSize = range(plan.partsCount).filter((n) => inStore.get(n)!.size !== expectedSize(plan, n));
  if (wrongSize.length) {
    const list = wrongSize.map((n) => `part ${n} has ${inStore.get(n)!.size} bytes, expected ${expectedSize(plan, n)}`).join('; ');
    throw uploadError('upload_part_size_mismatch', `${list}; send those parts again with the right bytes`);
  }
  return range(plan.partsCount).map((n) => ({ partNumber: n, eTag: inStore.get(n)!.eTag }));
}

/**
 * Completes a multipart upload (a VOD file, a suspect capture, a catalogue image): the parts checked against the store
 * (`checkParts`), then joined. A store's refusal is answered as one: an upload gone from the store as the caller's own
 * "not uploading" (409), parts too small or refused otherwise as 400s.
 */
export async function completeParts(
  store: ObjectStore,
  upload: { fileKey: string; uploadId: string; plan: PartPlan },
  requested: { partNumber: number; eTag?: string }[],
  notOpen: () => ApiError,
): Promise<void> {
  try {
    const parts = checkParts(upload.plan, requested, await store.listParts(upload.fileKey, upload.uploadId));
    await store.completeMultipartUpload(upload.fileKey, upload.uploadId, parts);
  } catch (e) {
    if (!(e instanceof StoreError)) throw e;
    if (e.code === 'NoSuchUpload') throw notOpen();
    if (e.code === 'EntityTooSmall') throw uploadError('upload_part_too_small', `The store refused the parts as too small: ${e.message}`);
    throw uploadError('upload_part_invalid', `The store refused the parts: ${e.message}`);
  }
}

const expectedSize = (plan: PartPlan, n: number) => (n === plan.partsCount ? plan.lastPartSize : plan.partSize);
const range = (count: number) => Array.from({ length: count }, (_, i) => i + 1);
