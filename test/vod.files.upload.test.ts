import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { eventTypes, md5, notMediaBytes, PART_SIZE, partsOf, putPart, startUpload } from './helpers/files.ts';
import { startPlatform, type TestPlatform, type TestTenant } from './helpers/platform.ts';
import { describeEachDbAndStore, storeEnv } from './helpers/stores.ts';
import { sleep } from './helpers/until.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describeEachDbAndStore('VOD file upload', (db, store) => {
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

  it('uploads a file in three parts sent in parallel and stores exactly its bytes', async () => {
    const data = notMediaBytes(fileSize, 'parallel');
    const s = await startUpload(t, {
      name: 'holiday clip.mp4',
      friendlyName: 'Holiday clip',
      fileSize,
      metadata: { camera: 'x1' },
      tags: ['beach'],
      attributes: ['year=2024'],
    });
    expect(s.fileId).toMatch(UUID);
    expect(s.fileKey).toBe(`tenants/${t.id}/files/${s.fileId}/holiday_clip.mp4`);
    expect(s).toMatchObject({ partSize, lastPartSize: 100_003, partsCount: 3 });
    expect(s.multipartUrls).toHaveLength(3);
    expect(new Set(s.multipartUrls).size).toBe(3);

    const uploading = await t.json('GET', `/vod/v1/files/${s.fileId}`);
    expect(uploading.body).toMatchObject({ id: s.fileId, status: 'Uploading', fileSize, fileTypes: 'Video', orginalFileName: 'holiday clip.mp4' });

    const parts = partsOf(data, partSize);
    const sent = await Promise.all(s.multipartUrls.map((url, i) => putPart(url, parts[i])));
    sent.forEach((r, i) => {
      expect(r.status, r.body).toBe(200);
      expect(r.eTag).toBe(`"${md5(parts[i])}"`);
    });
    const done = await complete(
      s.fileId,
      sent.map((r, i) => ({ partNumber: i + 1, eTag: r.eTag })),
    );
    expect(done).toEqual({ status: 200, body: { fileId: s.fileId, fileKey: s.fileKey } });

    const { body: file } = await t.json('GET', `/vod/v1/files/${s.fileId}`);
    expect(file).toMatchObject({
      id: s.fileId,
      tenantId: t.id,
      fileKey: s.fileKey,
      status: 'Completed',
      fileSize,
      name: 'holiday clip.mp4',
      friendlyName: 'Holiday clip',
      orginalFileName: 'holiday clip.mp4',
      metadata: { camera: 'x1' },
      tags: ['beach'],
      attributes: ['year=2024'],
      vodAssets: [],
      bucket: p.ctx.store.bucket,
      s3Uri: p.ctx.store.uri(s.fileKey),
      location: p.ctx.store.location(s.fileKey),
      // Random bytes are no media: the type stays the one the extension gave, and no track is known.
      fileTypes: 'Video',
      tracks: [],
    });
    expect(file.s3Uri).toMatch(store === 's3' ? /^s3:\/\/mediaplane-test-/ : /^local:\/\/tenants\//);
    expect(Date.parse(file.lastModificationDate)).toBeGreaterThanOrEqual(Date.parse(file.createDate));

    // Byte for byte, through the store and through the preview link.
    const chunks: Buffer[] = [];
    for await (const c of await p.ctx.store.getStream(s.fileKey)) chunks.push(Buffer.from(c));
    expect(md5(Buffer.concat(chunks))).toBe(md5(data));
    const { body: preview } = await t.json('GET', `/vod/v1/files/${s.fileId}/preview`);
    const download = await fetch(preview.link);
    expect(download.status).toBe(200);
    expect(Buffer.from(await download.arrayBuffer()).equals(data)).toBe(true);

    expect(await eventTypes(p, s.fileId)).toEqual(['vod.file.created', 'vod.file.completed']);
  });

  it('takes a part sent again (the last copy wins) and refuses the stale ETag', async () => {
    const data = notMediaBytes(fileSize, 'again');
    const s = await startUpload(t, { name: 'again.mov', fileSize });
    const parts = partsOf(data, partSize);
    const first = await putPart(s.multipartUrls[0], randomBytes(partSize));
    expect(first.status).toBe(200);
    const sent = await Promise.all(s.multipartUrls.map((url, i) => putPart(url, parts[i])));
    expect(sent.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(first.eTag).not.toBe(sent[0].eTag);

    const stale = await complete(s.fileId, [{ partNumber: 1, eTag: first.eTag }, ...sent.slice(1).map((r, i) => ({ partNumber: i + 2, eTag: r.eTag }))]);
    expect(stale.status).toBe(400);
    expect(stale.body.status.code).toBe('upload_part_etag_mismatch');
    expect(stale.body.status.message).toContain('part 1');

    const done = await complete(
      s.fileId,
      sent.map((r, i) => ({ partNumber: i + 1, eTag: r.eTag })),
    );
    expect(done.status).toBe(200);
    const chunks: Buffer[] = [];
    for await (const c of await p.ctx.store.getStream(s.fileKey)) chunks.push(Buffer.from(c));
    expect(Buffer.concat(chunks).equals(data)).toBe(true);
  });

  it('refuses expired and tampered part URLs with 403, and a fresh URL still works', async () => {
    const data = notMediaBytes(fileSize, 'signed');
    const s = await startUpload(t, { name: 'signed.mkv', fileSize });
    const part1 = partsOf(data, partSize)[0];

    p.config.uploadUrlTtlSeconds = 1;
    const short = await t.json('GET', `/vod/v1/files/${s.fileId}/part/1`);
    p.config.uploadUrlTtlSeconds = 6 * 3600;
    expect(short.status).toBe(200);
    await sleep(2100); // on purpose: the 1 s URL must expire, and expiry is signed to the second
    const expired = await putPart(short.body.url, part1);
    expect(expired.status).toBe(403);
    expect(expired.body).toContain(store === 'fs' ? '"url_expired"' : '<Code>AccessDenied</Code>');

    // The URL of part 1 used for part 2, and a changed signature.
    const otherPart = new URL(s.multipartUrls[0]);
    otherPart.searchParams.set('partNumber', '2');
    const moved = await putPart(otherPart.href, part1);
    expect(moved.status).toBe(403);
    const sigParam = store === 'fs' ? 'signature' : 'X-Amz-Signature';
    const forged = new URL(s.multipartUrls[0]);
    const sig = forged.searchParams.get(sigParam)!;
    forged.searchParams.set(sigParam, (sig[0] === 'a' ? 'b' : 'a') + sig.slice(1));
    const tampered = await putPart(forged.href, part1);
    expect(tampered.status).toBe(403);
    expect(tampered.body).toContain(store === 'fs' ? '"url_signature_invalid"' : '<Code>SignatureDoesNotMatch</Code>');

    const fresh = await t.json('GET', `/vod/v1/files/${s.fileId}/part/1`);
    expect(fresh.body.url).not.toBe(short.body.url);
    const ok = await putPart(fresh.body.url, part1);
    expect(ok).toMatchObject({ status: 200, eTag: `"${md5(part1)}"` });
    expect((await t.json('GET', `/vod/v1/files/${s.fileId}/part/4`)).body.status.code).toBe('upload_part_invalid');
  });
});
