import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ObjectStore } from '../src/storage/objectStore.ts';
import { parseS3Url, S3ObjectStore } from '../src/storage/s3Store.ts';
import { startPlatform, type TestPlatform } from './helpers/platform.ts';
import { STORES, stopSwift, storeEnv } from './helpers/stores.ts';

async function read(s: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of s) chunks.push(Buffer.from(c));
  return Buffer.concat(chunks);
}

/** What the transcoding pipeline relies on, identical on both back ends. */
for (const kind of STORES) {
  describe(`ObjectStore contract [${kind}]`, () => {
    let p: TestPlatform;
    let store: ObjectStore;
    const dir = mkdtempSync(join(tmpdir(), 'mediaplane-store-'));
    beforeAll(async () => {
      p = await startPlatform('pglite', await storeEnv(kind));
      store = p.ctx.store;
    });
    afterAll(async () => {
      await p?.stop();
      await stopSwift();
      rmSync(dir, { recursive: true, force: true });
    });

    it('puts buffers, strings, streams and local files, and reads them back whole and by range', async () => {
      const bytes = randomBytes(20_000);
      await store.putObject('t/a/buffer.bin', bytes);
      await store.putObject('t/a/index.m3u8', '#EXTM3U\n', 'application/vnd.apple.mpegurl');
      // A stream longer than one 8 MiB buffer goes through S3's multipart path.
      const big = randomBytes(9 * 1024 * 1024);
      await store.putObject('t/a/stream.ts', Readable.from([big.subarray(0, 5_000_000), big.subarray(5_000_000)]), 'video/mp2t');
      writeFileSync(join(dir, 'seg.m4s'), bytes);
      await store.putFile('t/a/b/seg.m4s', join(dir, 'seg.m4s'), 'video/iso.segment');

      expect(await read(await store.getStream('t/a/buffer.bin'))).toEqual(bytes);
      expect((await read(await store.getStream('t/a/index.m3u8'))).toString()).toBe('#EXTM3U\n');
      expect((await read(await store.getStream('t/a/stream.ts'))).equals(big)).toBe(true);
      expect(await read(await store.getStream('t/a/b/seg.m4s', { start: 10, end: 19 }))).toEqual(bytes.subarray(10, 20));
      expect(await read(await store.getStream('t/a/b/seg.m4s', { start: 19_990 }))).toEqual(bytes.subarray(19_990));
      expect(await store.head('t/a/index.m3u8')).toMatchObject({ size: 8, contentType: 'application/vnd.apple.mpegurl' });
      expect(await store.head('t/a/stream.ts')).toMatchObject({ size: big.length });
      expect(await store.head('t/a/missing')).toBeUndefined();
    });

    it('gives ffmpeg a readable location and browsers a signed download with CORS', async () => {
      await store.putObject('t/c/clip.mp4', randomBytes(100));
      const location = await store.readableLocation('t/c/clip.mp4');
      expect(location).toMatch(kind === 'fs' ? /^\/.*t\/c\/clip\.mp4$/ : /^http:\/\/127\.0\.0\.1:\d+\/.*clip\.mp4\?/);
      const url = await store.presignGet('t/c/clip.mp4', 60, 'My clip.mp4');
      const res = await fetch(url, { headers: { origin: 'https://player.example' } });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-disposition')).toContain("filename*=UTF-8''My%20clip.mp4");
      if (kind === 'fs') {
        expect(res.headers.get('content-type')).toBe('video/mp4');
        expect(res.headers.get('access-control-allow-origin')).toBe('*');
      }
    });

    it('runs a multipart upload through presigned part URLs, with or without a known part size', async () => {
      const partSize = 5 * 1024 * 1024;
      const data = randomBytes(partSize + 1234);
      for (const known of [undefined, partSize]) {
        const key = `t/m/${known ?? 'any'}.bin`;
        const { uploadId } = await store.createMultipartUpload(key, 'application/octet-stream', known);
        const sent = [];
        for (const [i, bytes] of [data.subarray(0, partSize), data.subarray(partSize)].entries()) {
          const res = await fetch(await store.presignUploadPart(key, uploadId, i + 1, 60), { method: 'PUT', body: bytes });
          expect(res.status).toBe(200);
          sent.push({ partNumber: i + 1, eTag: res.headers.get('etag')! });
        }
        expect(await store.listParts(key, uploadId)).toEqual(sent.map((p, i) => ({ ...p, size: i ? 1234 : partSize })));
        await store.completeMultipartUpload(key, uploadId, sent);
        expect((await read(await store.getStream(key))).equals(data)).toBe(true);
      }
      const { uploadId } = await store.createMultipartUpload('t/m/aborted.bin');
      await store.abortMultipartUpload('t/m/aborted.bin', uploadId);
      await expect(store.listParts('t/m/aborted.bin', uploadId)).rejects.toMatchObject({ code: 'NoSuchUpload' });
    });

    it('copies an object inside the store: an independent copy that replaces the target and outlives the original', async () => {
      const bytes = randomBytes(30_000);
      await store.putObject('t/x/seg.m4s', bytes, 'video/iso.segment');
      await store.putObject('t/y/seg.m4s', 'older object at the target');
      expect(await store.copy('t/x/seg.m4s', 't/y/seg.m4s')).toEqual({ size: bytes.length });
      expect(await read(await store.getStream('t/y/seg.m4s'))).toEqual(bytes);
      // Into a prefix that has nothing yet (on fs: a directory that does not exist).
      await store.copy('t/x/seg.m4s', 't/z/deep/seg.m4s');
      // Replacing the original leaves the copies as they were; deleting it too.
      await store.putObject('t/x/seg.m4s', 'replaced');
      expect(await read(await store.getStream('t/y/seg.m4s'))).toEqual(bytes);
      await store.delete('t/x/seg.m4s');
      expect(await read(await store.getStream('t/z/deep/seg.m4s'))).toEqual(bytes);
      await expect(store.copy('t/x/seg.m4s', 't/y/other.m4s')).rejects.toMatchObject({ code: 'NoSuchKey' });
      expect(await store.head('t/y/other.m4s')).toBeUndefined();
    });

    it.runIf(kind === 's3')('opens a bucket that does not exist yet from several processes starting at once', async () => {
      // A new deployment (compose.yaml): api, worker and live each find no bucket and create it.
      const { MEDIAPLANE_STORAGE_URL: url } = await storeEnv('s3');
      const stores = await Promise.all([1, 2, 3, 4].map(() => new S3ObjectStore(parseS3Url(url!)).open()));
      await stores[0]!.putObject('t/race/one.txt', 'one');
      expect(await read(await stores[3]!.getStream('t/race/one.txt'))).toEqual(Buffer.from('one'));
      await Promise.all(stores.map((s) => s.close()));
    });

    it.runIf(kind === 's3')('signs the URLs handed to clients for publicEndpoint, its own reads for endpoint', async () => {
      // The store as compose.yaml runs it: the platform reaches it at one address, clients at another (same server here).
      const { MEDIAPLANE_STORAGE_URL: url } = await storeEnv('s3');
      const endpoint = new URL(parseS3Url(url!).endpoint!);
      const publicEndpoint = `http://localhost:${endpoint.port}`;
      const split = await new S3ObjectStore(parseS3Url(`${url}&publicEndpoint=${encodeURIComponent(publicEndpoint)}`)).open();
      try {
        const bytes = randomBytes(6 * 1024 * 1024);
        const { uploadId } = await split.createMultipartUpload('t/p/clip.mp4');
        const partUrl = await split.presignUploadPart('t/p/clip.mp4', uploadId, 1, 60);
        expect(new URL(partUrl).origin).toBe(publicEndpoint);
        const put = await fetch(partUrl, { method: 'PUT', body: bytes });
        expect(put.status).toBe(200);
        await split.completeMultipartUpload('t/p/clip.mp4', uploadId, [{ partNumber: 1, eTag: put.headers.get('etag')! }]);
        const download = await split.presignGet('t/p/clip.mp4', 60);
        expect(new URL(download).origin).toBe(publicEndpoint);
        expect(Buffer.from(await (await fetch(download)).arrayBuffer()).equals(bytes)).toBe(true);
        expect(split.location('t/p/clip.mp4')).toMatch(new RegExp(`^${publicEndpoint}/`));
        // ffmpeg in the platform's own container reads through endpoint, which clients may not reach.
        expect(new URL(await split.readableLocation('t/p/clip.mp4')).origin).toBe(endpoint.origin);
      } finally {
        await split.close();
      }
    });

    it('deletes one object, and every object under a prefix', async () => {
      await store.putObject('t/d/1.ts', 'a');
      await store.putObject('t/d/sub/2.ts', 'b');
      await store.putObject('t/dd/3.ts', 'c');
      await store.delete('t/d/1.ts');
      await store.delete('t/d/never-there.ts');
      expect(await store.head('t/d/1.ts')).toBeUndefined();
      await store.deletePrefix('t/d/');
      expect(await store.head('t/d/sub/2.ts')).toBeUndefined();
      expect(await store.head('t/dd/3.ts')).toMatchObject({ size: 1 });
    });
  });
}
