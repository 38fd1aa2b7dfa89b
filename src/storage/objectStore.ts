import type { Readable } from 'node:stream';

export interface UploadedPart {
  partNumber: number;
  eTag: string;
}

export interface ObjectInfo {
  size: number;
  contentType?: string;
  eTag?: string;
}

/**
 * Where bytes live: the embedded file store under the data directory, or S3. Keys are relative paths
 * (`tenants/<tenant>/files/<file>/<name>`); nothing outside this interface knows which back end is in use.
 */
export interface ObjectStore {
  readonly kind: 'fs' | 's3';
  /**
   * Bucket name (S3) or `local` (fs), for the spec's `bucket`/`s3Uri`/`location` fields. These fields are shown to
   * tenants: no back end puts a path of the host's file system in them.
   */
  readonly bucket: string;
  /** `s3://bucket/key` on S3, `local://key` on fs. */
  uri(key: string): string;
  /** Lets go of connections and threads; the platform calls it when it closes. */
  close(): Promise<void>;
  /** Where the object lives as an address: its HTTP URL (on fs, at the platform's `/storage/v1/object/`). */
  location(key: string): string;
  /** The smallest size of any part but the last in a multipart upload (S3: 5 MiB; fs: no minimum). */
  readonly minPartSize: number;

  // Multipart upload: clients PUT parts straight to presigned URLs.
  /** `partSize`, when every part but the last has it, lets the embedded store write parts in place (no copy at completion). */
  createMultipartUpload(key: string, contentType?: string, partSize?: number): Promise<{ uploadId: string }>;
  presignUploadPart(key: string, uploadId: string, partNumber: number, expiresInSeconds: number): Promise<string>;
  listParts(key: string, uploadId: string): Promise<(UploadedPart & { size: number })[]>;
  completeMultipartUpload(key: string, uploadId: string, parts: UploadedPart[]): Promise<void>;
  abortMultipartUpload(key: string, uploadId: string): Promise<void>;

  // Objects.
  putObject(key: string, body: Buffer | Readable | string, contentType?: string): Promise<void>;
  /** Uploads a local file (ffmpeg outputs). */
  putFile(key: string, localPath: string, contentType?: string): Promise<void>;
  head(key: string): Promise<ObjectInfo | undefined>;
  /** Streams an object, optionally a byte range (inclusive `end`). */
  getStream(key: string, range?: { start: number; end?: number }): Promise<Readable>;
  /** A path ffmpeg can read: the file itself on fs, a presigned GET URL on S3. */
  readableLocation(key: string): Promise<string>;
  presignGet(key: string, expiresInSeconds: number, downloadName?: string): Promise<string>;
  /**
   * Copies an object inside the store without its bytes passing through the platform (S3: `CopyObject`; fs: a hard
   * link, a byte copy where the link cannot be made), replacing `to`; answers the size. Objects are never changed in
   * place (every write replaces the whole object), so a copy sharing its bytes with the original stays a copy.
   * A missing `from` is a StoreError `NoSuchKey`.
   */
  copy(from: string, to: string): Promise<{ size: number }>;
  delete(key: string): Promise<void>;
  /** Deletes every object under a prefix (an asset's outputs, a tenant's files). */
  deletePrefix(prefix: string): Promise<void>;
}

/** The store's own refusals that callers turn into API errors (S3 error codes, shared by both back ends). */
export type StoreErrorCode = 'NoSuchUpload' | 'InvalidPart' | 'InvalidPartOrder' | 'EntityTooSmall' | 'NoSuchKey';

export class StoreError extends Error {
  constructor(
    readonly code: StoreErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/** Keys are relative paths without `.`/`..` segments; anything else is a programming error, never user input. */
export function assertKey(key: string): void {
  if (!key || key.startsWith('/') || key.includes('\\') || key.includes('\0') || key.split('/').some((s) => s === '' || s === '.' || s === '..')) {
    throw new Error(`invalid object key "${key}"`);
  }
}

/** ETags compare without their quotes and case (clients echo them in every form). */
export const normalizeETag = (eTag: string): string => eTag.replace(/"/g, '').trim().toLowerCase();
