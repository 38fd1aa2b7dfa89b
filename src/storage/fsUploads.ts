import { randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream, readFileSync } from 'node:fs';
import { mkdir, open, readdir, readFile, rename, rm, stat, unlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { normalizeETag, StoreError, type UploadedPart } from './objectStore.ts';
import { PartWriter, type PartWriterOptions } from './partWriter.ts';

export { PartIdleError, PartTooLargeError } from './partWriter.ts';

/** S3 refuses parts above 5 GiB; so does the embedded store, so that one client works against both. */
const MAX_PART_SIZE = 5 * 1024 ** 3;

/**
 * Changes at every boot (Linux). Bytes written and not flushed survive the death of our process (they are in the
 * kernel's page cache) and are lost only with the machine: a part received in an earlier boot may not be on disk.
 */
const BOOT_ID = (() => {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  } catch {
    return undefined;
  }
})();

interface UploadRecord {
  key: string;
  contentType?: string;
  /** Known: parts are written in place into one file (`data`) at (partNumber - 1) * partSize. */
  partSize?: number;
}

interface StoredPart extends UploadedPart {
  size: number;
  /** The boot in which the part was written, when it was not flushed on its own. */
  bootId?: string;
}

const PART_META = /^(\d+)\.json$/;
const PART_FILE = /^(\d+)\.([0-9a-f]{32})$/;

/**
 * Multipart uploads of the embedded store, one directory per upload under `<dataDir>/uploads/<uploadId>`.
 *
 * When the part size is known (the files API always gives it), every part is written in place into one `data` file at
 * its offset, so completing is a truncate, one flush and a rename: the bytes are written once and their write-back
 * overlaps the upload. Such a part is not flushed before its ETag is answered (on Linux): its record names the boot it
 * was written in, and a part of an earlier boot counts as never uploaded, so a machine crash costs a re-send, never a
 * completed object with a hole. One flush per object instead of one per part is what lets uploads run at the disk's
 * speed. A part being sent again first forgets the earlier copy (its region is about to change), so a failed re-send
 * leaves the part missing, never half old and half new; sends of one part are serialized. Without a part size, each
 * part is its own file `<n>.<md5>`, flushed before it is answered, and completing joins them.
 */
export class FsUploads {
  private readonly queues = new Map<string, Promise<unknown>>();
  private readonly writer: PartWriter;
  private readonly records = new Map<string, UploadRecord>();

  constructor(
    private readonly root: string,
    receiving?: PartWriterOptions,
  ) {
    this.writer = new PartWriter(receiving);
  }

  /** Starts the part writer's thread now rather than with the first part. */
  start(): void {
    this.writer.start();
  }

  close(): Promise<void> {
    return this.writer.close();
  }

  private dir(uploadId: string): string {
    if (!/^[0-9a-f-]{36}$/.test(uploadId)) throw new StoreError('NoSuchUpload', `upload ${uploadId} does not exist`);
    return join(this.root, uploadId);
  }

  private async open(key: string, uploadId: string): Promise<{ dir: string; record: UploadRecord }> {
    const dir = this.dir(uploadId);
    // upload.json never changes, so it is read once; an upload completed or aborted since (by any process) shows when
    // its directory is used.
    let record = this.records.get(uploadId);
    if (!record) {
      try {
        record = JSON.parse(await readFile(join(dir, 'upload.json'), 'utf8')) as UploadRecord;
      } catch {
        throw new StoreError('NoSuchUpload', `upload ${uploadId} does not exist (completed, aborted or never started)`);
      }
      if (this.records.size >= 1000) this.records.delete(this.records.keys().next().value!);
      this.records.set(uploadId, record);
    }
    if (record.key !== key) throw new StoreError('NoSuchUpload', `upload ${uploadId} is not an upload of ${key}`);
    return { dir, record };
  }

  async create(key: string, contentType?: string, partSize?: number): Promise<string> {
    const uploadId = randomUUID();
    const dir = join(this.root, uploadId);
    await mkdir(dir, { recursive: true });
    if (partSize) await writeFile(join(dir, 'data'), '');
    await writeFile(join(dir, 'upload.json'), JSON.stringify({ key, contentType, partSize } satisfies UploadRecord));
    return uploadId;
  }

  /** Runs one send of a part at a time (per upload and part number), in arrival order. */
  private serialized<T>(id: string, fn: () => Promise<T>): Promise<T> {
    const previous = this.queues.get(id) ?? Promise.resolve();
    const run = previous.then(fn, fn);
    const tail = run.catch(() => {});
    this.queues.set(id, tail);
    void tail.then(() => this.queues.get(id) === tail && this.queues.delete(id));
    return run;
  }

  async receive(key: string, uploadId: string, partNumber: number, body: Readable): Promise<{ eTag: string; size: number }> {
    const { dir, record } = await this.open(key, uploadId);
    // ENOENT: the upload was aborted or completed before or while the part was streaming.
    if (record.partSize)
      return this.serialized(`${uploadId}/${partNumber}`, () => this.receiveInPlace(dir, record.partSize!, partNumber, body)).catch(gone(uploadId));
    return this.receiveFile(dir, partNumber, body).catch(gone(uploadId));
  }

  private async receiveInPlace(dir: string, partSize: number, partNumber: number, body: Readable): Promise<{ eTag: string; size: number }> {
    // The writer removes the part's record before writing its first byte and writes it once the part is whole.
    const data = join(dir, 'data');
    const record = { path: join(dir, `${partNumber}.json`), fields: { bootId: BOOT_ID } };
    if (BOOT_ID) return this.writer.write(body, data, 'r+', (partNumber - 1) * partSize, partSize, record);
    // Without a boot id the part is flushed before its record exists.
    await rm(record.path, { force: true });
    const part = await this.writer.write(body, data, 'r+', (partNumber - 1) * partSize, partSize);
    await flush(data);
    const tmp = join(dir, `.${partNumber}.${randomUUID()}.json`);
    await writeFile(tmp, JSON.stringify(part satisfies Omit<StoredPart, 'partNumber'>));
    await rename(tmp, record.path);
    return part;
  }

  private async receiveFile(dir: string, partNumber: number, body: Readable): Promise<{ eTag: string; size: number }> {
    const tmp = join(dir, `.${partNumber}.${randomUUID()}.tmp`);
    try {
      const part = await this.writer.write(body, tmp, 'w', 0, MAX_PART_SIZE);
      await flush(tmp);
      const md5 = normalizeETag(part.eTag);
      await rename(tmp, join(dir, `${partNumber}.${md5}`));
      await dropOlderCopies(dir, partNumber, md5);
      return part;
    } finally {
      await rm(tmp, { force: true });
    }
  }

  async list(key: string, uploadId: string): Promise<StoredPart[]> {
    const { dir } = await this.open(key, uploadId);
    const parts = await currentParts(dir).catch(gone(uploadId));
    return [...parts.values()].sort((a, b) => a.partNumber - b.partNumber).map(({ partNumber, eTag, size }) => ({ partNumber, eTag, size }));
  }

  /** Makes the listed parts, in order, the file at `target`; S3's rules: ascending numbers, ETags that match. */
  async complete(key: string, uploadId: string, parts: UploadedPart[], target: string): Promise<void> {
    const { dir, record } = await this.open(key, uploadId);
    const current = await currentParts(dir).catch(gone(uploadId));
    const chosen: (StoredPart & { file?: string })[] = [];
    for (const [i, p] of parts.entries()) {
      if (i > 0 && p.partNumber <= parts[i - 1].partNumber) throw new StoreError('InvalidPartOrder', 'parts must be listed in ascending order of partNumber');
      const part = current.get(p.partNumber);
      if (!part || normalizeETag(part.eTag) !== normalizeETag(p.eTag)) {
        throw new StoreError('InvalidPart', `part ${p.partNumber} was not uploaded or its ETag does not match`);
      }
      chosen.push(part);
    }
    await mkdir(dirname(target), { recursive: true });
    if (record.partSize) {
      // In place, the parts must be 1..n and all but the last exactly partSize: then the data file is the object.
      const partSize = record.partSize;
      chosen.forEach((p, i) => {
        if (p.partNumber !== i + 1) throw new StoreError('InvalidPart', `parts must be 1 to ${chosen.length} without gaps; part ${i + 1} is not listed`);
        if (i < chosen.length - 1 && p.size !== partSize)
          throw new StoreError('EntityTooSmall', `part ${p.partNumber} has ${p.size} bytes; every part but the last must have ${partSize}`);
      });
      const data = join(dir, 'data');
      const file = await open(data, 'r+');
      try {
        await file.truncate((chosen.length - 1) * partSize + chosen[chosen.length - 1].size);
        await file.datasync();
      } finally {
        await file.close();
      }
      await rename(data, target);
    } else {
      const tmp = `${target}.${randomUUID()}.tmp`;
      try {
        await pipeline(
          async function* () {
            for (const p of chosen) yield* createReadStream(p.file!, { highWaterMark: 1024 * 1024 });
          },
          createWriteStream(tmp, { flush: true }),
        );
        await rename(tmp, target);
      } finally {
        await rm(tmp, { force: true });
      }
    }
    await rm(dir, { recursive: true, force: true });
    this.records.delete(uploadId);
  }

  async abort(uploadId: string): Promise<void> {
    await rm(this.dir(uploadId), { recursive: true, force: true });
    this.records.delete(uploadId);
  }
}

/** An upload directory removed by another process (completed or aborted there) after its record was cached. */
const gone =
  (uploadId: string) =>
  (e: NodeJS.ErrnoException): never => {
    if (e.code === 'ENOENT') throw new StoreError('NoSuchUpload', `upload ${uploadId} was aborted or completed`);
    throw e;
  };

async function flush(path: string): Promise<void> {
  const file = await open(path, 'r+');
  try {
    await file.datasync();
  } finally {
    await file.close();
  }
}

async function currentParts(dir: string): Promise<Map<number, StoredPart & { file?: string; mtimeMs: number }>> {
  const parts = new Map<number, StoredPart & { file?: string; mtimeMs: number }>();
  for (const f of await readdir(dir)) {
    const meta = PART_META.exec(f);
    if (meta) {
      const { eTag, size, bootId } = JSON.parse(await readFile(join(dir, f), 'utf8')) as StoredPart;
      if (bootId !== undefined && bootId !== BOOT_ID) continue; // written before the machine restarted: maybe not on disk
      parts.set(Number(meta[1]), { partNumber: Number(meta[1]), eTag, size, mtimeMs: 0 });
      continue;
    }
    const m = PART_FILE.exec(f);
    const s = m && (await stat(join(dir, f)).catch(() => undefined));
    if (!m || !s) continue;
    const partNumber = Number(m[1]);
    const seen = parts.get(partNumber);
    // A part sent again while an older copy was still being renamed: the newest complete write wins.
    if (!seen || s.mtimeMs > seen.mtimeMs || (s.mtimeMs === seen.mtimeMs && f > seen.file!)) {
      parts.set(partNumber, { partNumber, eTag: `"${m[2]}"`, size: s.size, file: join(dir, f), mtimeMs: s.mtimeMs });
    }
  }
  return parts;
}

/** Removes earlier copies of a part that was sent again; copies written later than this one stay. */
async function dropOlderCopies(dir: string, partNumber: number, md5: string): Promise<void> {
  const mine = (await stat(join(dir, `${partNumber}.${md5}`))).mtimeMs;
  for (const f of await readdir(dir)) {
    const m = PART_FILE.exec(f);
    if (!m || Number(m[1]) !== partNumber || m[2] === md5) continue;
    const other = await stat(join(dir, f)).catch(() => undefined);
    if (other && other.mtimeMs <= mine) await unlink(join(dir, f)).catch(() => {});
  }
}
