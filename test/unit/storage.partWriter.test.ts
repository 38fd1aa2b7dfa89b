import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { closeSync, constants, existsSync, mkdtempSync, openSync, read, readFileSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { PartWriter } from '../../src/storage/partWriter.ts';
import { sleep } from '../helpers/until.ts';

const MiB = 1024 * 1024;
const md5 = (b: Buffer) => createHash('md5').update(b).digest('hex');
/** A body as a socket delivers it: chunks of 64 KiB. */
const body = (data: Buffer) => Readable.from(Array.from({ length: Math.ceil(data.length / 65536) }, (_, i) => data.subarray(i * 65536, (i + 1) * 65536)));

function directIo(dir: string): boolean {
  try {
    closeSync(openSync(join(dir, '.probe'), constants.O_CREAT | constants.O_WRONLY | (constants.O_DIRECT ?? 0)));
    return constants.O_DIRECT !== undefined;
  } catch {
    return false;
  }
}

/** Pages of the file in the page cache, by util-linux's fincore. */
const cachedPages = (path: string) => Number(execFileSync('fincore', ['--raw', '--noheadings', '--output', 'PAGES', path], { encoding: 'utf8' }).trim());

describe('part writer', () => {
  const writer = new PartWriter();
  const dirs: string[] = [];
  const dirOn = (root: string) => {
    const dir = mkdtempSync(join(root, 'mediaplane-partwriter-'));
    dirs.push(dir);
    return dir;
  };
  afterAll(async () => {
    await writer.close();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it.runIf(directIo(tmpdir()) && existsSync('/usr/bin/fincore'))('writes aligned parts around the page cache, the tail of a part through it', async () => {
    const dir = dirOn(tmpdir());
    const path = join(dir, 'data');
    const data = randomBytes(8 * MiB + 1000); // eight whole slots, then 1000 bytes no disk block holds alone
    writeFileSync(path, '');
    const part = await writer.write(body(data), path, 'r+', 4 * MiB, 16 * MiB);
    expect(part).toEqual({ eTag: `"${md5(data)}"`, size: data.length });
    expect(md5(readFileSync(path).subarray(4 * MiB))).toBe(md5(data));
    // Reading the file back above brought it into the cache; what was there before shows in a second part.
    const second = join(dir, 'second');
    await writer.write(body(data), second, 'w', 0, 16 * MiB);
    expect(cachedPages(second)).toBeLessThanOrEqual(1);
    expect(md5(readFileSync(second))).toBe(md5(data));
  });

  it('writes parts at offsets and of sizes no disk block aligns with', async () => {
    const dir = dirOn(tmpdir());
    const path = join(dir, 'data');
    writeFileSync(path, '');
    const parts = [randomBytes(MiB + 100), randomBytes(3 * MiB + 4095), randomBytes(77)];
    let position = 0;
    const positions = parts.map((p) => ((position += p.length), position - p.length));
    const answers = await Promise.all(parts.map((p, i) => writer.write(body(p), path, 'r+', positions[i], 16 * MiB)));
    expect(answers.map((a) => a.eTag)).toEqual(parts.map((p) => `"${md5(p)}"`));
    expect(md5(readFileSync(path))).toBe(md5(Buffer.concat(parts)));
  });

  it.runIf(existsSync('/dev/shm'))('falls back to ordinary writes where the file system has no direct I/O (tmpfs)', async () => {
    const dir = dirOn('/dev/shm');
    const data = randomBytes(5 * MiB);
    const part = await writer.write(body(data), join(dir, 'part'), 'w', 0, 16 * MiB);
    expect(part.eTag).toBe(`"${md5(data)}"`);
    expect(md5(readFileSync(join(dir, 'part')))).toBe(md5(data));
  });

  it('removes the part record before the first byte and writes it once the part is whole, never for a failed part', async () => {
    const dir = dirOn(tmpdir());
    const record = { path: join(dir, '1.json'), fields: { bootId: 'this-boot' } };
    writeFileSync(record.path, JSON.stringify({ eTag: '"stale"', size: 1 }));
    const data = randomBytes(2 * MiB + 3);
    const part = await writer.write(body(data), join(dir, 'part'), 'w', 0, 16 * MiB, record);
    expect(JSON.parse(readFileSync(record.path, 'utf8'))).toEqual({ ...part, bootId: 'this-boot' });

    const broken = new Readable({ read() {} });
    const sent = writer.write(broken, join(dir, 'part'), 'w', 0, 16 * MiB, record);
    broken.push(randomBytes(MiB + 5));
    setTimeout(() => broken.destroy(new Error('connection reset')), 20);
    await expect(sent).rejects.toThrow('connection reset');
    expect(existsSync(record.path)).toBe(false);
  });
});

describe('part writer: a part that fails', () => {
  const writer = new PartWriter();
  let dir: string;
  afterAll(async () => {
    await writer.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('is answered only once none of its writes can still land, so that a send again is not overwritten', async () => {
    dir = mkdtempSync(join(tmpdir(), 'mediaplane-partwriter-'));
    const path = join(dir, 'data');
    await writer.write(body(randomBytes(1000)), path, 'w', 0, 16 * MiB); // the worker is up
    // The thread pool that runs the worker's writes is kept busy with reads of an empty pipe: the writes of the part
    // are still queued when its sender goes away.
    const pipe = join(dir, 'pipe');
    execFileSync('mkfifo', [pipe]);
    const fd = openSync(pipe, constants.O_RDWR); // opening both ends does not wait for a writer
    const threads = Number(process.env.UV_THREADPOOL_SIZE ?? 4);
    const busy = Array.from({ length: threads }, () => new Promise((resolve) => read(fd, Buffer.alloc(1), 0, 1, null, resolve)));
    let released = false;
    const release = () => released || ((released = true), writeSync(fd, Buffer.alloc(threads)));
    try {
      const broken = new Readable({ read() {} });
      let answered = false;
      const sent = writer.write(broken, path, 'r+', 0, 16 * MiB).finally(() => (answered = true));
      sent.catch(() => {});
      broken.push(randomBytes(2 * MiB + 5));
      await sleep(300); // the two whole slots reach the worker, whose writes queue
      broken.destroy(new Error('connection reset'));
      await sleep(500);
      expect(answered).toBe(false);
      release();
      await expect(sent).rejects.toThrow('connection reset');
    } finally {
      release();
      await Promise.all(busy);
      closeSync(fd);
    }
  });
});

describe('part writer: parts that share the slots', () => {
  const writer = new PartWriter();
  let dir: string;
  afterAll(async () => {
    await writer.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("keeps a part's bytes when another part resumes after giving its slot back mid-block", async () => {
    // Part B holds a slot half filled while part A, idle past the idle check, gives its slot back mid-block; A's next
    // slot then starts with the bytes A kept back, and those must land in that slot only, not in B's.
    dir = mkdtempSync(join(tmpdir(), 'mediaplane-partwriter-'));
    const a = randomBytes(3 * MiB + 777);
    const b = randomBytes(3 * MiB + 555);
    const bodyA = new Readable({ read() {} });
    const bodyB = new Readable({ read() {} });
    // B first: the free slots are taken from the top, so B's slot lies above any A takes later.
    const sentB = writer.write(bodyB, join(dir, 'b'), 'w', 0, 16 * MiB);
    bodyB.push(b.subarray(0, 512 * 1024));
    await sleep(20);
    const sentA = writer.write(bodyA, join(dir, 'a'), 'w', 0, 16 * MiB);
    bodyA.push(a.subarray(0, 5000)); // one whole block and 904 bytes
    // B keeps sending small pieces (so it does not spill) while A is silent long enough to spill.
    let atB = 512 * 1024;
    for (let i = 0; i < 10; i++, atB += 1000) {
      bodyB.push(b.subarray(atB, atB + 1000));
      await sleep(40);
    }
    bodyA.push(a.subarray(5000));
    bodyA.push(null);
    bodyB.push(b.subarray(atB));
    bodyB.push(null);
    const [partA, partB] = await Promise.all([sentA, sentB]);
    expect(md5(readFileSync(join(dir, 'a')))).toBe(md5(a));
    expect(md5(readFileSync(join(dir, 'b')))).toBe(md5(b));
    expect(partA).toEqual({ eTag: `"${md5(a)}"`, size: a.length });
    expect(partB).toEqual({ eTag: `"${md5(b)}"`, size: b.length });
  });
});
