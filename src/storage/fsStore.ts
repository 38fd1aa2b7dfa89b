import { randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { copyFile, link, mkdir, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { contentTypeOf } from './contentTypes.ts';
import { FsUploads } from './fsUploads.ts';
import type { PartWriterOptions } from './partWriter.ts';
import { assertKey, StoreError, type ObjectInfo, type ObjectStore, type UploadedPart } from './objectStore.ts';
import type { UrlSigner } from './signing.ts';

/**
 * What a streamed object's writer holds before it stops reading: while one write is with the thread pool the stream's
 * next chunks wait here and go in one writev, so the source is read on while the disk writes (at the default 16 KiB
 * one 64 KiB socket chunk filled it: reading stopped for every write; BENCHMARKS.md, import).
 */
const STREAM_WRITE_BUFFER = 8 << 20;

/**
 * The embedded store: objects are files under `<dataDir>/objects/<key>`, multipart uploads live under
 * `<dataDir>/uploads` (fsUploads.ts). The platform serves the signed URLs itself (routes.ts).
 */
export class FsObjectStore implements ObjectStore {
  readonly kind = 'fs' as const;
  readonly minPartSize = 1;
  /**
   * The name tenants see for the embedded store's one bucket (in `bucket`, and as an overlay input's `s3BucketName`):
   * never the directory it lives in, which is the host's business.
   */
  readonly bucket = 'local';
  private readonly root: string;
  private readonly uploads: FsUploads;

  constructor(
    dataDir: string,
    private readonly signer: UrlSigner,
    /** Read per call: the public URL is only known once the server listens (port 0 in tests). */
    private readonly publicUrl: () => URL,
    receiving?: PartWriterOptions,
  ) {
    this.root = join(dataDir, 'objects');
    this.uploads = new FsUploads(join(dataDir, 'uploads'), receiving);
  }

  path(key: string): string {
    assertKey(key);
    return join(this.root, key);
  }

  /** Made ready to receive parts: a process that serves the signed part URLs calls it at start. */
  startReceiving(): void {
    this.uploads.start();
  }

  close(): Promise<void> {
    return this.uploads.close();
  }

  /** `local://<key>`: the object's name in the embedded store, as `s3://bucket/key` names one in S3. */
  uri(key: string): string {
    assertKey(key);
    return `${this.bucket}://${key}`;
  }

  /** The object's address at the platform (reading it takes a signed URL, as an S3 object's address does credentials). */
  location(key: string): string {
    assertKey(key);
    return new URL(`/storage/v1/object/${encodeKey(key)}`, this.publicUrl()).href;
  }

  // --- multipart upload (fsUploads.ts) ----------------------------------------------------------------------------

  createMultipartUpload(key: string, contentType?: string, partSize?: number): Promise<{ uploadId: string }> {
    assertKey(key);
    return this.uploads.create(key, contentType, partSize).then((uploadId) => ({ uploadId }));
  }

  async presignUploadPart(key: string, uploadId: string, partNumber: number, expiresInSeconds: number): Promise<string> {
    const expires = Math.floor(Date.now() / 1000) + expiresInSeconds;
    const url = new URL(`/storage/v1/upload/${encodeKey(key)}`, this.publicUrl());
    url.searchParams.set('uploadId', uploadId);
    url.searchParams.set('partNumber', String(partNumber));
    url.searchParams.set('expires', String(expires));
    url.searchParams.set('signature', this.signer.sign(['PUT', key, uploadId, partNumber, expires]));
    return url.href;
  }

  verifyPartUrl(key: string, uploadId: string, partNumber: number, expires: number, signature: string): boolean {
    return this.signer.verify(['PUT', key, uploadId, partNumber, expires], signature);
  }

  /** Streams one part to disk (what a signed part URL's PUT does). */
  receivePart(key: string, uploadId: string, partNumber: number, body: Readable): Promise<{ eTag: string; size: number }> {
    return this.uploads.receive(key, uploadId, partNumber, body);
  }

  listParts(key: string, uploadId: string): Promise<(UploadedPart & { size: number })[]> {
    return this.uploads.list(key, uploadId);
  }

  completeMultipartUpload(key: string, uploadId: string, parts: UploadedPart[]): Promise<void> {
    return this.uploads.complete(key, uploadId, parts, this.path(key));
  }

  abortMultipartUpload(_key: string, uploadId: string): Promise<void> {
    return this.uploads.abort(uploadId);
  }

  // --- objects ----------------------------------------------------------------------------------------------------

  /** Writes beside the target and renames, so that readers never see half an object. */
  private async writeAtomically(key: string, write: (tmp: string) => Promise<void>): Promise<void> {
    const target = this.path(key);
    await mkdir(dirname(target), { recursive: true });
    const tmp = `${target}.${randomUUID()}.tmp`;
    try {
      await write(tmp);
      await rename(tmp, target);
    } catch (e) {
      await rm(tmp, { force: true });
      throw e;
    }
  }

  async putObject(key: string, body: Buffer | Readable | string): Promise<void> {
    await this.writeAtomically(key, (tmp) =>
      body instanceof Readable ? pipeline(body, createWriteStream(tmp, { highWaterMark: STREAM_WRITE_BUFFER })) : writeFile(tmp, body),
    );
  }

  async putFile(key: string, localPath: string): Promise<void> {
    await this.writeAtomically(key, (tmp) => copyFile(localPath, tmp));
  }

  async head(key: string): Promise<ObjectInfo | undefined> {
    const s = await stat(this.path(key)).catch(() => undefined);
    return s?.isFile() ? { size: s.size, contentType: contentTypeOf(key) } : undefined;
  }

  async getStream(key: string, range?: { start: number; end?: number }): Promise<Readable> {
    const path = this.path(key);
    if (!(await this.head(key))) throw new StoreError('NoSuchKey', `object ${key} does not exist`);
    return createReadStream(path, range ? { start: range.start, end: range.end } : {});
  }

  async readableLocation(key: string): Promise<string> {
    return this.path(key);
  }

  async presignGet(key: string, expiresInSeconds: number, downloadName?: string): Promise<string> {
    const expires = Math.floor(Date.now() / 1000) + expiresInSeconds;
    const url = new URL(`/storage/v1/object/${encodeKey(key)}`, this.publicUrl());
    url.searchParams.set('expires', String(expires));
    if (downloadName) url.searchParams.set('filename', downloadName);
    url.searchParams.set('signature', this.signer.sign(['GET', key, expires, downloadName ?? '']));
    return url.href;
  }

  verifyGetUrl(key: string, expires: number, downloadName: string | undefined, signature: string): boolean {
    return this.signer.verify(['GET', key, expires, downloadName ?? ''], signature);
  }

  /**
   * A hard link made beside the target and renamed over it (atomic, as every write here). Objects are replaced whole,
   * never written in place, so the two names stay independent copies; a data directory split over devices (EXDEV) or a
   * file system without links gets a byte copy instead.
   */
  async copy(from: string, to: string): Promise<{ size: number }> {
    const source = this.path(from);
    const s = await stat(source).catch(() => undefined);
    if (!s?.isFile()) throw new StoreError('NoSuchKey', `object ${from} does not exist`);
    if (from === to) return { size: s.size };
    await this.writeAtomically(to, async (tmp) => {
      try {
        await link(source, tmp);
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        if (code === 'ENOENT') throw new StoreError('NoSuchKey', `object ${from} does not exist`);
        if (code !== 'EXDEV' && code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EMLINK') throw e;
        await copyFile(source, tmp);
      }
    });
    return { size: s.size };
  }

  async delete(key: string): Promise<void> {
    await rm(this.path(key), { force: true });
  }

  async deletePrefix(prefix: string): Promise<void> {
    const slash = prefix.lastIndexOf('/');
    const dir = slash < 0 ? '' : prefix.slice(0, slash);
    const start = prefix.slice(slash + 1);
    if (dir) assertKey(dir);
    const parent = join(this.root, dir);
    const names = await readdir(parent).catch(() => [] as string[]);
    // A writer may add a file while the folder is removed (a recorder pass writing a recording's playlists as it is
    // deleted): its rmdir then fails with ENOTEMPTY, and the removal is tried again rather than failing the delete.
    for (const name of names) if (name.startsWith(start)) await rm(join(parent, name), { recursive: true, force: true, maxRetries: 5 });
  }
}

const encodeKey = (key: string): string => key.split('/').map(encodeURIComponent).join('/');
