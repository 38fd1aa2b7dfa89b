import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { Readable } from 'node:stream';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  ListPartsCommand,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
  type Part,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { assertKey, StoreError, type ObjectInfo, type ObjectStore, type StoreErrorCode, type UploadedPart } from './objectStore.ts';

export interface S3Location {
  bucket: string;
  /** Keys are stored under this prefix (`s3://bucket/prefix`), so that one bucket can hold several platforms. */
  prefix: string;
  endpoint?: string;
  /**
   * The endpoint clients reach the store at, when it is not `endpoint` (the store on a private network, as in
   * compose.yaml): the URLs handed to clients (part uploads, previews, redirects) are signed for it, the platform's own
   * requests go to `endpoint`.
   */
  publicEndpoint?: string;
  region: string;
  forcePathStyle: boolean;
}

/**
 * `s3://bucket[/prefix]?endpoint=...&publicEndpoint=...&region=...&forcePathStyle=true`, the region defaulting to `AWS_REGION` (config);
 * credentials come from the standard AWS chain.
 */
export function parseS3Url(url: string, defaultRegion = 'us-east-1'): S3Location {
  const u = new URL(url);
  if (u.protocol !== 's3:' || !u.hostname) throw new Error(`MEDIAPLANE_STORAGE_URL must look like s3://bucket?region=..., got "${url}"`);
  const prefix = decodeURIComponent(u.pathname).replace(/^\/+|\/+$/g, '');
  return {
    bucket: u.hostname,
    prefix: prefix ? `${prefix}/` : '',
    endpoint: u.searchParams.get('endpoint') ?? undefined,
    publicEndpoint: u.searchParams.get('publicEndpoint') ?? undefined,
    region: u.searchParams.get('region') ?? defaultRegion,
    forcePathStyle: u.searchParams.get('forcePathStyle') === 'true',
  };
}

const STORE_ERRORS: StoreErrorCode[] = ['NoSuchUpload', 'InvalidPart', 'InvalidPartOrder', 'EntityTooSmall', 'NoSuchKey'];

/** S3's own refusals become StoreErrors, so callers handle both back ends alike. */
function translate(e: unknown): never {
  const name = (e as { name?: string; Code?: string }).Code ?? (e as Error).name;
  if (STORE_ERRORS.includes(name as StoreErrorCode)) throw new StoreError(name as StoreErrorCode, (e as Error).message);
  throw e;
}

const SMALL_OBJECT = 8 * 1024 * 1024;
/** The largest object one `CopyObject` copies (S3's limit). */
const MAX_COPY = 5 * 1024 * 1024 * 1024;

/** Objects in an S3 bucket (AWS, MinIO, Ceph, Swift's s3api...). Clients PUT parts straight to S3 through presigned URLs. */
export class S3ObjectStore implements ObjectStore {
  readonly kind = 's3' as const;
  readonly minPartSize = 5 * 1024 * 1024;
  readonly bucket: string;
  readonly client: S3Client;
  /** Signs the URLs handed to clients: for `publicEndpoint` when there is one (signing sends no request). */
  private readonly publicSigner: S3Client;

  constructor(private readonly loc: S3Location) {
    this.bucket = loc.bucket;
    const client = (endpoint: string | undefined) =>
      new S3Client({
        endpoint,
        region: loc.region,
        forcePathStyle: loc.forcePathStyle,
        // Presigned part URLs must not carry a checksum of an empty body, or S3 refuses every part that has bytes.
        requestChecksumCalculation: 'WHEN_REQUIRED',
        responseChecksumValidation: 'WHEN_REQUIRED',
      });
    this.client = client(loc.endpoint);
    this.publicSigner = loc.publicEndpoint ? client(loc.publicEndpoint) : this.client;
    // Swift, Ceph and older MinIO refuse a multi-object delete without Content-MD5; AWS accepts it too.
    this.client.middlewareStack.add(
      (next, context) => async (args) => {
        const request = args.request as { body?: unknown; headers?: Record<string, string> };
        if (context.commandName === 'DeleteObjectsCommand' && request.headers && (typeof request.body === 'string' || request.body instanceof Uint8Array)) {
          request.headers['content-md5'] = createHash('md5').update(request.body).digest('base64');
        }
        return next(args);
      },
      { step: 'build', name: 'deleteObjectsContentMd5' },
    );
  }

  /** Checks the bucket answers; creates it when it does not exist yet (a fresh MinIO or test server). */
  async open(): Promise<this> {
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: this.bucket }));
    } catch (e) {
      if ((e as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode !== 404) throw e;
      // The processes of a new deployment start together (compose): another one may have just created it.
      await this.client.send(new CreateBucketCommand({ Bucket: this.bucket })).catch((err: { name?: string }) => {
        if (err.name !== 'BucketAlreadyOwnedByYou') throw err;
      });
    }
    return this;
  }

  private k(key: string): string {
    assertKey(key);
    return this.loc.prefix + key;
  }

  async close(): Promise<void> {
    this.client.destroy();
    if (this.publicSigner !== this.client) this.publicSigner.destroy();
  }

  uri(key: string): string {
    return `s3://${this.bucket}/${this.k(key)}`;
  }

  location(key: string): string {
    const path = this.k(key).split('/').map(encodeURIComponent).join('/');
    const endpoint = this.loc.publicEndpoint ?? this.loc.endpoint;
    if (endpoint) {
      const base = new URL(endpoint);
      return this.loc.forcePathStyle ? `${base.origin}/${this.bucket}/${path}` : `${base.protocol}//${this.bucket}.${base.host}/${path}`;
    }
    return `https://${this.bucket}.s3.${this.loc.region}.amazonaws.com/${path}`;
  }

  async createMultipartUpload(key: string, contentType?: string): Promise<{ uploadId: string }> {
    const out = await this.client.send(new CreateMultipartUploadCommand({ Bucket: this.bucket, Key: this.k(key), ContentType: contentType }));
    return { uploadId: out.UploadId! };
  }

  presignUploadPart(key: string, uploadId: string, partNumber: number, expiresInSeconds: number): Promise<string> {
    const command = new UploadPartCommand({ Bucket: this.bucket, Key: this.k(key), UploadId: uploadId, PartNumber: partNumber });
    return getSignedUrl(this.publicSigner, command, { expiresIn: expiresInSeconds });
  }

  async listParts(key: string, uploadId: string): Promise<(UploadedPart & { size: number })[]> {
    const parts: Part[] = [];
    let marker: string | undefined;
    try {
      do {
        const out = await this.client.send(new ListPartsCommand({ Bucket: this.bucket, Key: this.k(key), UploadId: uploadId, PartNumberMarker: marker }));
        parts.push(...(out.Parts ?? []));
        marker = out.IsTruncated ? out.NextPartNumberMarker : undefined;
      } while (marker);
    } catch (e) {
      translate(e);
    }
    return parts.map((p) => ({ partNumber: p.PartNumber!, eTag: p.ETag!, size: p.Size! }));
  }

  async completeMultipartUpload(key: string, uploadId: string, parts: UploadedPart[]): Promise<void> {
    await this.client
      .send(
        new CompleteMultipartUploadCommand({
          Bucket: this.bucket,
          Key: this.k(key),
          UploadId: uploadId,
          MultipartUpload: { Parts: parts.map((p) => ({ PartNumber: p.partNumber, ETag: p.eTag })) },
        }),
      )
      .catch(translate);
  }

  async abortMultipartUpload(key: string, uploadId: string): Promise<void> {
    try {
      await this.client.send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: this.k(key), UploadId: uploadId }));
    } catch (e) {
      if ((e as Error).name !== 'NoSuchUpload') throw e;
    }
  }

  async putObject(key: string, body: Buffer | Readable | string, contentType?: string): Promise<void> {
    if (!(body instanceof Readable)) {
      await this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key: this.k(key), Body: body, ContentType: contentType }));
      return;
    }
    await this.putStream(key, body, contentType);
  }

  /** A stream of unknown length: one PUT when it is small, a multipart upload of 8 MiB parts otherwise. */
  private async putStream(key: string, body: Readable, contentType?: string): Promise<void> {
    const chunks: Buffer[] = [];
    let buffered = 0;
    let upload: { uploadId: string; parts: UploadedPart[] } | undefined;
    const flush = async () => {
      upload ??= { ...(await this.createMultipartUpload(key, contentType)), parts: [] };
      const partNumber = upload.parts.length + 1;
      const out = await this.client.send(
        new UploadPartCommand({ Bucket: this.bucket, Key: this.k(key), UploadId: upload.uploadId, PartNumber: partNumber, Body: Buffer.concat(chunks) }),
      );
      upload.parts.push({ partNumber, eTag: out.ETag! });
      chunks.length = 0;
      buffered = 0;
    };
    try {
      for await (const chunk of body) {
        chunks.push(Buffer.from(chunk));
        buffered += chunk.length;
        if (buffered >= SMALL_OBJECT) await flush();
      }
      if (!upload) return void (await this.putObject(key, Buffer.concat(chunks), contentType));
      if (buffered) await flush();
      await this.completeMultipartUpload(key, upload.uploadId, upload.parts);
    } catch (e) {
      if (upload) await this.abortMultipartUpload(key, upload.uploadId).catch(() => {});
      throw e;
    }
  }

  async putFile(key: string, localPath: string, contentType?: string): Promise<void> {
    const { size } = await stat(localPath);
    if (size > SMALL_OBJECT * 64) return this.putStream(key, createReadStream(localPath), contentType);
    await this.client.send(
      new PutObjectCommand({ Bucket: this.bucket, Key: this.k(key), Body: createReadStream(localPath), ContentLength: size, ContentType: contentType }),
    );
  }

  async head(key: string): Promise<ObjectInfo | undefined> {
    try {
      const out = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: this.k(key) }));
      return { size: out.ContentLength ?? 0, contentType: out.ContentType, eTag: out.ETag };
    } catch (e) {
      if ((e as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404) return undefined;
      throw e;
    }
  }

  async getStream(key: string, range?: { start: number; end?: number }): Promise<Readable> {
    const out = await this.client
      .send(new GetObjectCommand({ Bucket: this.bucket, Key: this.k(key), Range: range ? `bytes=${range.start}-${range.end ?? ''}` : undefined }))
      .catch(translate);
    return out.Body as Readable;
  }

  /** For the platform's own ffmpeg and ffprobe: signed for `endpoint`, where this process reaches the store. */
  readableLocation(key: string): Promise<string> {
    return this.signGet(this.client, key, 6 * 3600);
  }

  presignGet(key: string, expiresInSeconds: number, downloadName?: string): Promise<string> {
    return this.signGet(this.publicSigner, key, expiresInSeconds, downloadName);
  }

  private signGet(signer: S3Client, key: string, expiresInSeconds: number, downloadName?: string): Promise<string> {
    const command = new GetObjectCommand({
      Bucket: this.bucket,
      Key: this.k(key),
      ResponseContentDisposition: downloadName ? `attachment; filename*=UTF-8''${encodeURIComponent(downloadName)}` : undefined,
    });
    return getSignedUrl(signer, command, { expiresIn: expiresInSeconds });
  }

  /**
   * `CopyObject`: the bytes stay in the bucket. The HEAD before it answers the size (CopyObject does not) and tells a
   * missing source apart; an object past CopyObject's 5 GiB limit is streamed through instead (segments never are).
   */
  async copy(from: string, to: string): Promise<{ size: number }> {
    const info = await this.head(from);
    if (!info) throw new StoreError('NoSuchKey', `object ${from} does not exist`);
    if (info.size > MAX_COPY) {
      await this.putStream(to, await this.getStream(from), info.contentType);
      return { size: info.size };
    }
    const source = `${this.bucket}/${this.k(from)}`.split('/').map(encodeURIComponent).join('/');
    await this.client.send(new CopyObjectCommand({ Bucket: this.bucket, Key: this.k(to), CopySource: source, MetadataDirective: 'COPY' })).catch(translate);
    return { size: info.size };
  }

  async delete(key: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: this.k(key) }));
  }

  /** Deletes the objects under the prefix and aborts the uploads still open there. */
  async deletePrefix(prefix: string): Promise<void> {
    const Prefix = this.loc.prefix + prefix;
    let token: string | undefined;
    do {
      const out = await this.client.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix, ContinuationToken: token }));
      const keys = (out.Contents ?? []).map((o) => ({ Key: o.Key! }));
      if (keys.length) await this.client.send(new DeleteObjectsCommand({ Bucket: this.bucket, Delete: { Objects: keys, Quiet: true } }));
      token = out.IsTruncated ? out.NextContinuationToken : undefined;
    } while (token);
    const uploads = await this.client.send(new ListMultipartUploadsCommand({ Bucket: this.bucket, Prefix }));
    for (const u of uploads.Uploads ?? []) {
      await this.client.send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: u.Key!, UploadId: u.UploadId! })).catch(() => {});
    }
  }
}
