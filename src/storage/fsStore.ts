import { createHash, randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { copyFile, mkdir, readdir, readFile, rename, rm, stat, unlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { pathToFileURL } from 'node:url';
import { contentTypeOf } from './contentTypes.ts';
import { assertKey, normalizeETag, StoreError, type ObjectInfo, type ObjectStore, type UploadedPart } from './objectStore.ts';
import type { UrlSigner } from './signing.ts';

/** S3 refuses parts above 5 GiB; so does the embedded store, so that one client works against both. */
export const MAX_PART_SIZE = 5 * 1024 ** 3;

const PART_FILE = /^(\d+)\.([0-9a-f]{32})$/;

interface UploadRecord {
  key: string;
  contentType?: string;
}

/**
 * The embedded store: objects are files under `<dataDir>/objects/<key>`, multipart uploads are directories under
 * `<dataDir>/uploads/<uploadId>` holding one file per part, named `<partNumber>.<md5>` so that the part's ETag
 * needs no second file to stay in step with. The platform serves the signed URLs itself (see routes.ts).
 */
export class FsObjectStore implements ObjectStore {
  readonly kind = 'fs' as const;
  readonly minPartSize = 1;
  readonly bucket: string;
  private readonly uploadsDir: string;

  constructor(
    dataDir: string,
    private readonly signer: UrlSigner,
    /** Read per call: the public URL is only known once the server listens (port 0 in tests). */
    private readonly publicUrl: () => URL,
  ) {
    this.bucket = join(dataDir, 'objects');
    this.uploadsDir = join(dataDir, 'uploads');
  }

  path(key: string): string {
    assertKey(key);
    return join(this.bucket, key);
  }

  uri(key: string): string {
    return pathToFileURL(this.path(key)).href;
  }

  location(key: string): string {
    return this.path(key);
  }

  // --- multipart upload -------------------------------------------------------------------------------------------

  private uploadDir(uploadId: string): string {
    if (!/^[0-9a-f-]{36}$/.test(uploadId)) throw new StoreError('NoSuchUpload', `upload ${uploadId} does not exist`);
    return join(this.uploadsDir, uploadId);
  }

  private async upload(key: string, uploadId: string): Promise<string> {
    const dir = this.uploadDir(uploadId);
    let record: UploadRecord;
    try {
      record = JSON.parse(await readFile(join(dir, 'upload.json'), 'utf8'));
    } catch {
      throw new StoreError('NoSuchUpload', `upload ${uploadId} does not exist (completed, aborted or never started)`);
    }
    if (record.key !== key) throw new StoreError('NoSuchUpload', `upload ${uploadId} is not an upload of ${key}`);
    return dir;
  }

  async createMultipartUpload(key: string, contentType?: string): Promise<{ uploadId: string }> {
    assertKey(key);
    const uploadId = randomUUID();
    const dir = join(this.uploadsDir, uploadId);
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'upload.json'), JSON.stringify({ key, contentType } satisfies UploadRecord));
    return { uploadId };
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

  /**
   * Streams one part to disk, hashing as it goes; never holds more than the stream's buffers in memory. A part sent
   * again replaces the earlier one (the last complete write wins, as on S3).
   */
  async receivePart(key: string, uploadId: string, partNumber: number, body: Readable): Promise<{ eTag: string; size: number }> {
    const dir = await this.upload(key, uploadId);
    const tmp = join(dir, `.${partNumber}.${randomUUID()}.tmp`);
    const hash = createHash('md5');
    let size = 0;
    try {
      await pipeline(
        body,
        async function* (source: AsyncIterable<Buffer>) {
          for await (const chunk of source) {
            size += chunk.length;
            if (size > MAX_PART_SIZE) throw new PartTooLargeError();
            hash.update(chunk);
            yield chunk;
          }
        },
        createWriteStream(tmp),
      );
      const md5 = hash.digest('hex');
      await rename(tmp, join(dir, `${partNumber}.${md5}`));
      await this.dropOlderCopies(dir, partNumber, md5);
      return { eTag: `"${md5}"`, size };
    } catch (e) {
      await rm(tmp, { force: true });
      // An upload aborted while the part was streaming: report it as gone, not as a disk error.
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') throw new StoreError('NoSuchUpload', `upload ${uploadId} was aborted or completed`);
      throw e;
    }
  }

  /** Removes earlier copies of a part that was sent again; copies written later than this one stay. */
  private async dropOlderCopies(dir: string, partNumber: number, md5: string): Promise<void> {
    const mine = (await stat(join(dir, `${partNumber}.${md5}`))).mtimeMs;
    for (const f of await readdir(dir)) {
      const m = PART_FILE.exec(f);
      if (!m || Number(m[1]) !== partNumber || m[2] === md5) continue;
      const other = await stat(join(dir, f)).catch(() => undefined);
      if (other && other.mtimeMs <= mine) await unlink(join(dir, f)).catch(() => {});
    }
  }

  private async currentParts(dir: string): Promise<Map<number, UploadedPart & { size: number; file: string; mtimeMs: number }>> {
    const parts = new Map<number, UploadedPart & { size: number; file: string; mtimeMs: number }>();
    for (const f of await readdir(dir)) {
      const m = PART_FILE.exec(f);
      if (!m) continue;
      const s = await stat(join(dir, f)).catch(() => undefined);
      if (!s) continue;
      const partNumber = Number(m[1]);
      const seen = parts.get(partNumber);
      if (!seen || s.mtimeMs > seen.mtimeMs || (s.mtimeMs === seen.mtimeMs && f > seen.file)) {
        parts.set(partNumber, { partNumber, eTag: `"${m[2]}"`, size: s.size, file: join(dir, f), mtimeMs: s.mtimeMs });
      }
    }
    return parts;
  }

  async listParts(key: string, uploadId: string): Promise<(UploadedPart & { size: number })[]> {
    const parts = await this.currentParts(await this.upload(key, uploadId));
    return [...parts.values()].sort((a, b) => a.partNumber - b.partNumber).map(({ partNumber, eTag, size }) => ({ partNumber, eTag, size }));
  }

  /** Joins the named parts, in order, into the object; S3's rules: ascending numbers, ETags that match. */
  async completeMultipartUpload(key: string, uploadId: string, parts: UploadedPart[]): Promise<void> {
    const dir = await this.upload(key, uploadId);
    const current = await this.currentParts(dir);
    const files: string[] = [];
    let previous = 0;
    for (const p of parts) {
      if (p.partNumber <= previous) throw new StoreError('InvalidPartOrder', 'parts must be listed in ascending order of partNumber');
      previous = p.partNumber;
      const part = current.get(p.partNumber);
      if (!part || normalizeETag(part.eTag) !== normalizeETag(p.eTag)) {
        throw new StoreError('InvalidPart', `part ${p.partNumber} was not uploaded or its ETag does not match`);
      }
      files.push(part.file);
    }
    const target = this.path(key);
    await mkdir(dirname(target), { recursive: true });
    const tmp = `${target}.${randomUUID()}.tmp`;
    try {
      const out = createWriteStream(tmp);
      for (const file of files) await pipeline(createReadStream(file), out, { end: false });
      out.end();
      await new Promise<void>((resolve, reject) => out.once('close', resolve).once('error', reject));
      await rename(tmp, target);
    } catch (e) {
      await rm(tmp, { force: true });
      throw e;
    }
    await rm(dir, { recursive: true, force: true });
  }

  async abortMultipartUpload(_key: string, uploadId: string): Promise<void> {
    await rm(this.uploadDir(uploadId), { recursive: true, force: true });
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
      body instanceof Readable ? pipeline(body, createWriteStream(tmp)) : writeFile(tmp, body),
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

  async delete(key: string): Promise<void> {
    await rm(this.path(key), { force: true });
  }

  async deletePrefix(prefix: string): Promise<void> {
    const slash = prefix.lastIndexOf('/');
    const dir = slash < 0 ? '' : prefix.slice(0, slash);
    const start = prefix.slice(slash + 1);
    if (dir) assertKey(dir);
    const parent = join(this.bucket, dir);
    const names = await readdir(parent).catch(() => [] as string[]);
    for (const name of names) if (name.startsWith(start)) await rm(join(parent, name), { recursive: true, force: true });
  }
}

export class PartTooLargeError extends Error {
  constructor() {
    super(`a part may not be larger than ${MAX_PART_SIZE} bytes`);
  }
}

export const encodeKey = (key: string): string => key.split('/').map(encodeURIComponent).join('/');
