import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { closeSync, constants, existsSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { PartWriter } from '../../src/storage/partWriter.ts';

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
