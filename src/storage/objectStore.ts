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
  /** Bucket name (S3) or the store's root directory (fs), for the spec's `bucket`/`s3Uri`/`location` fields. */
  readonly bucket: string;
  /** `s3://bucket/key` on S3, `file:///abs/path` on fs. */
  uri(key: string): string;

  // Multipart upload: clients PUT parts straight to presigned URLs.
  createMultipartUpload(key: string, contentType?: string): Promise<{ uploadId: string }>;
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
  delete(key: string): Promise<void>;
  /** Deletes every object under a prefix (an asset's outputs, a tenant's files). */
  deletePrefix(prefix: string): Promise<void>;
}
