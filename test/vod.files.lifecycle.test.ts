import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { StoreError } from '../src/storage/objectStore.ts';
import { eventTypes, PART_SIZE, partsOf, putPart, startUpload, uploadIdOf } from './helpers/files.ts';
import { startPlatform, type TestPlatform, type TestTenant } from './helpers/platform.ts';
import { describeEachDbAndStore, storeEnv } from './helpers/stores.ts';
import { until } from './helpers/until.ts';

describeEachDbAndStore('VOD file upload completion, cancel and expiry', (db, store) => {
  let p: TestPlatform;
  let t: TestTenant;
  const partSize = PART_SIZE[store];
  // Three parts, the last one not aligned to the part size.
  const fileSize = 2 * partSize + 100_003;

  beforeAll(async () => {
    p = await startPlatform(db, { ...(await storeEnv(store)), MEDIAPLANE_UPLOAD_PART_SIZE: String(partSize) });
    t = await p.createTenant();
  });
  afterAll(() => p?.stop());

  const complete = (fileId: string, parts: { partNumber: number; eTag?: string | null }[]) => t.json('POST', '/vod/v1/files/complete', { fileId, parts });
  const partsGone = (key: string, uploadId: string) =>
    p.ctx.store.listParts(key, uploadId).then(
      () => false,
      (e) => e instanceof StoreError && e.code === 'NoSuchUpload',
    );

  it('fails completion with a missing part, a wrong ETag or a wrong size, and stays completable', async () => {
    const data = randomBytes(fileSize);
    const s = await startUpload(t, { name: 'careful.mp4', fileSize });
    const parts = partsOf(data, partSize);
    const p1 = await putPart(s.multipartUrls[0], parts[0]);
    const p3 = await putPart(s.multipartUrls[2], parts[2]);

    const unlisted = await complete(s.fileId, [
      { partNumber: 1, eTag: p1.eTag },
      { partNumber: 3, eTag: p3.eTag },
    ]);
    expect(unlisted.status).toBe(400);
    expect(unlisted.body.status).toMatchObject({ code: 'upload_parts_missing', status: 400 });
    expect(unlisted.body.status.message).toContain('missing: 2');

    const notSent = await complete(s.fileId, [
      { partNumber: 1, eTag: p1.eTag },
      { partNumber: 2, eTag: '"0123"' },
      { partNumber: 3, eTag: p3.eTag },
    ]);
    expect(notSent.body.status.code).toBe('upload_parts_not_uploaded');

    const short = await putPart(s.multipartUrls[1], parts[1].subarray(1));
    const wrongSize = await complete(s.fileId, [
      { partNumber: 1, eTag: p1.eTag },
      { partNumber: 2, eTag: short.eTag },
      { partNumber: 3, eTag: p3.eTag },
    ]);
    expect(wrongSize.status).toBe(400);
    expect(wrongSize.body.status.code).toBe('upload_part_size_mismatch');
    expect(wrongSize.body.status.message).toContain(`part 2 has ${partSize - 1} bytes, expected ${partSize}`);

    // A part larger than the part size: the embedded store refuses it at once (it writes parts in place), S3 at completion.
    const long = await putPart(s.multipartUrls[1], Buffer.concat([parts[1], Buffer.from('x')]));
    if (store === 'fs') {
      expect(long.status).toBe(413);
      expect(long.body).toContain('"part_too_large"');
    } else {
      const tooLong = await complete(s.fileId, [
        { partNumber: 1, eTag: p1.eTag },
        { partNumber: 2, eTag: long.eTag },
        { partNumber: 3, eTag: p3.eTag },
      ]);
      expect(tooLong.body.status.message).toContain(`part 2 has ${partSize + 1} bytes, expected ${partSize}`);
    }
    const p2 = await putPart(s.multipartUrls[1], parts[1]);
    const wrongETag = await complete(s.fileId, [
      { partNumber: 1, eTag: p1.eTag },
      { partNumber: 2, eTag: p2.eTag },
      { partNumber: 3, eTag: p1.eTag },
    ]);
    expect(wrongETag.body.status.code).toBe('upload_part_etag_mismatch');
    const beyond = await complete(s.fileId, [{ partNumber: 4, eTag: p1.eTag }]);
    expect(beyond.body.status.code).toBe('upload_part_invalid');

    expect((await t.json('GET', `/vod/v1/files/${s.fileId}`)).body.status).toBe('Uploading');
    // ETags may be omitted: the store's own are used.
    const done = await complete(s.fileId, [{ partNumber: 1, eTag: p1.eTag }, { partNumber: 2 }, { partNumber: 3, eTag: p3.eTag!.replace(/"/g, '') }]);
    expect(done.status).toBe(200);
    const again = await complete(s.fileId, [{ partNumber: 1, eTag: p1.eTag }]);
    expect(again.status).toBe(409);
    expect(again.body.status.code).toBe('file_not_uploading');
    expect((await t.json('GET', `/vod/v1/files/${s.fileId}/part/1`)).status).toBe(409);
  });

  it('cancels an upload to Error (parts freed) or deletes it at once', async () => {
    const part = randomBytes(partSize);
    const a = await startUpload(t, { name: 'cancel-a.mp4', fileSize });
    expect((await putPart(a.multipartUrls[0], part)).status).toBe(200);
    const cancelled = await t.call('POST', `/vod/v1/files/${a.fileId}/cancel`, {});
    expect(cancelled.status).toBe(204);
    expect(await cancelled.text()).toBe('');
    expect((await t.json('GET', `/vod/v1/files/${a.fileId}`)).body.status).toBe('Error');
    expect(await partsGone(a.fileKey, uploadIdOf(a.multipartUrls[0]))).toBe(true);
    expect((await putPart(a.multipartUrls[1], part)).status).toBe(404);
    const twice = await t.json('POST', `/vod/v1/files/${a.fileId}/cancel`, { delete: false });
    expect(twice.status).toBe(409);
    expect(await eventTypes(p, a.fileId)).toEqual(['vod.file.created', 'vod.file.failed']);

    const b = await startUpload(t, { name: 'cancel-b.mp4', fileSize });
    expect((await putPart(b.multipartUrls[2], part.subarray(0, 100_003))).status).toBe(200);
    expect((await t.call('POST', `/vod/v1/files/${b.fileId}/cancel`, { delete: true })).status).toBe(204);
    expect((await t.json('GET', `/vod/v1/files/${b.fileId}`)).body.status.code).toBe('file_not_found');
    expect(await partsGone(b.fileKey, uploadIdOf(b.multipartUrls[0]))).toBe(true);
    expect(await eventTypes(p, b.fileId)).toEqual(['vod.file.created', 'vod.file.deleted']);

    // No body at all means delete false.
    const c = await startUpload(t, { name: 'cancel-c.mp4', fileSize });
    expect((await t.call('POST', `/vod/v1/files/${c.fileId}/cancel`)).status).toBe(204);
    expect((await t.json('GET', `/vod/v1/files/${c.fileId}`)).body.status).toBe('Error');
  });

  it('deletes abandoned uploads after the configured time and frees their parts', async () => {
    p.config.uploadTtlHours = 2 / 3600;
    const s = await startUpload(t, { name: 'abandoned.mp4', fileSize });
    expect((await putPart(s.multipartUrls[0], randomBytes(partSize))).status).toBe(200);
    expect((await t.json('GET', `/vod/v1/files/${s.fileId}`)).body.status).toBe('Uploading');
    await until(
      async () => (await t.json('GET', `/vod/v1/files/${s.fileId}`)).status,
      (status) => status === 404,
      { timeoutMs: 20_000, everyMs: 250, what: 'the abandoned upload to be swept' },
    );
    p.config.uploadTtlHours = 24;
    expect(await partsGone(s.fileKey, uploadIdOf(s.multipartUrls[0]))).toBe(true);
    expect(await eventTypes(p, s.fileId)).toEqual(['vod.file.created', 'vod.file.deleted']);
  });

  it('deletes a completed file and its bytes', async () => {
    const data = randomBytes(1000);
    const s = await startUpload(t, { name: 'gone.mp3', fileSize: data.length });
    const r = await putPart(s.multipartUrls[0], data);
    expect((await complete(s.fileId, [{ partNumber: 1, eTag: r.eTag }])).status).toBe(200);
    expect(await p.ctx.store.head(s.fileKey)).toMatchObject({ size: 1000 });
    expect(await t.json('DELETE', `/vod/v1/files/${s.fileId}`)).toEqual({ status: 200, body: { deletedFileKey: s.fileKey } });
    expect(await p.ctx.store.head(s.fileKey)).toBeUndefined();
    expect((await t.json('DELETE', `/vod/v1/files/${s.fileId}`)).status).toBe(404);
  });
});
