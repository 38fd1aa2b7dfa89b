import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { eventTypes, PART_SIZE, putPart, startUpload, uploadFile } from './helpers/files.ts';
import { startPlatform, type TestPlatform, type TestTenant } from './helpers/platform.ts';
import { describeEachDbAndStore, storeEnv } from './helpers/stores.ts';
import { sleep } from './helpers/until.ts';

/** On purpose: time passes between two writes, so that their CreatedAt and ModifiedAt differ and sort apart. */
const pause = () => sleep(15);

describeEachDbAndStore('VOD file list, update, delete and tenant isolation', (db, store) => {
  let p: TestPlatform;
  let t: TestTenant;
  let other: TestTenant;
  const f: Record<'alpha' | 'beta' | 'gamma' | 'delta', { fileId: string; fileKey: string; multipartUrls: string[] }> = {} as never;
  let modifiedAfter: string;

  beforeAll(async () => {
    p = await startPlatform(db, { ...(await storeEnv(store)), MEDIAPLANE_UPLOAD_PART_SIZE: String(PART_SIZE[store]) });
    [t, other] = [await p.createTenant(), await p.createTenant()];
    f.alpha = await uploadFile(t, 'alpha.mp4', randomBytes(1000), { friendlyName: 'Zebra', tags: ['a', 'b'], attributes: ['k=1'] });
    await pause();
    f.beta = await uploadFile(t, 'beta.mp3', randomBytes(2000), { friendlyName: 'Yak', tags: ['b'], attributes: ['k=2', 'lang=en'] });
    await pause();
    f.gamma = await startUpload(t, { name: 'gamma.srt', friendlyName: 'Xerus', fileSize: 3000 });
    await pause();
    f.delta = await startUpload(t, { name: 'delta.MOV', friendlyName: 'Wolf', fileSize: 500 });
    expect((await t.call('POST', `/vod/v1/files/${f.delta.fileId}/cancel`, { delete: false })).status).toBe(204);
    await pause();
    modifiedAfter = new Date().toISOString();
    await pause();
    const patched = await t.json('PATCH', `/vod/v1/files/${f.alpha.fileId}`, { metadata: { source: 'camera' } });
    expect(patched.status).toBe(200);
  });
  afterAll(() => p?.stop());

  const ids = async (query: string) => {
    const { status, body } = await t.json('GET', `/vod/v1/files?${query}`);
    expect(status, JSON.stringify(body)).toBe(200);
    return body.items.map((i: { id: string }) => Object.entries(f).find(([, v]) => v.fileId === i.id)?.[0] ?? i.id);
  };

  it('pages the list in the spec envelope with every item field', async () => {
    const { body } = await t.json('GET', '/vod/v1/files?limit=3&page=1');
    expect(body).toMatchObject({ pageCount: 2, pageSize: 3, totalCount: 4, pageNumber: 1, hasMore: true });
    expect(body.items[0]).toMatchObject({
      id: f.alpha.fileId,
      fileKey: f.alpha.fileKey,
      status: 'Completed',
      fileSize: 1000,
      name: 'alpha.mp4',
      friendlyName: 'Zebra',
      tags: ['a', 'b'],
      attributes: ['k=1'],
      metadata: { source: 'camera' },
    });
    for (const field of ['createDate', 'lastModificationDate']) expect(body.items[0][field]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
    const last = await t.json('GET', '/vod/v1/files?limit=3&page=2');
    expect(last.body).toMatchObject({ pageCount: 2, pageSize: 3, totalCount: 4, pageNumber: 2, hasMore: false });
    expect(last.body.items).toHaveLength(1);
  });

  it('filters by file type, status, statuses and ids', async () => {
    expect(await ids('fileType=Audio')).toEqual(['beta']);
    expect(await ids('fileType=Caption')).toEqual(['gamma']);
    expect(await ids('fileType=video')).toEqual(['alpha', 'delta']);
    expect(await ids('status=Completed')).toEqual(['alpha', 'beta']);
    expect(await ids('statuses=Uploading,Error')).toEqual(['gamma', 'delta']);
    expect(await ids('statuses=Uploading&statuses=Completed')).toEqual(['alpha', 'beta', 'gamma']);
    expect(await ids(`ids=${f.gamma.fileId},${f.alpha.fileId}`)).toEqual(['alpha', 'gamma']);
    expect(await ids(`ids=${f.beta.fileId}&ids=${f.delta.fileId}`)).toEqual(['beta', 'delta']);
    for (const bad of ['fileType=Image', 'status=Done', 'ids=nope', 'sort=Color', 'createDateStart=yesterday']) {
      const r = await t.json('GET', `/vod/v1/files?${bad}`);
      expect(r.status, bad).toBe(400);
      expect(r.body.status.code).toBe('validation_failed');
    }
  });

  it('filters by creation and modification dates', async () => {
    const { body: beta } = await t.json('GET', `/vod/v1/files/${f.beta.fileId}`);
    expect(await ids(`createDateStart=${beta.createDate}`)).toEqual(['beta', 'gamma', 'delta']);
    expect(await ids(`createDateEnd=${beta.createDate}`)).toEqual(['alpha', 'beta']);
    expect(await ids(`createDateStart=${beta.createDate}&createDateEnd=${beta.createDate}`)).toEqual(['beta']);
    expect(await ids(`lastModificationDateStart=${modifiedAfter}`)).toEqual(['alpha']);
    expect(await ids(`lastModificationDateEnd=${modifiedAfter}`)).toEqual(['beta', 'gamma', 'delta']);
    // An offset instead of Z means the same instant.
    const offset = new Date(Date.parse(modifiedAfter) + 2 * 3600_000).toISOString().replace('Z', '+02:00');
    expect(await ids(`lastModificationDateStart=${encodeURIComponent(offset)}`)).toEqual(['alpha']);
  });

  it('filters by tags, attributes, allowed extensions and text', async () => {
    expect(await ids('tags=b')).toEqual(['alpha', 'beta']);
    expect(await ids('tags=a,b')).toEqual(['alpha']);
    expect(await ids('tags=a&tags=c')).toEqual([]);
    expect(await ids(`attributes=${encodeURIComponent('[k]=2')}`)).toEqual(['beta']);
    expect(await ids(`attributes=${encodeURIComponent('[k]=2')}&attributes=${encodeURIComponent('[lang]=en')}`)).toEqual(['beta']);
    expect(await ids('allowedExtensionsFile=.mp4,.mov')).toEqual(['alpha', 'delta']);
    expect(await ids('allowedExtensionsFile=mp3&allowedExtensionsFile=.srt')).toEqual(['beta', 'gamma']);
    expect(await ids('query=ALP')).toEqual(['alpha']);
    expect(await ids('query=ol')).toEqual(['delta']);
  });

  it('sorts by CreateDate, FileSize and Metadata.FriendlyName', async () => {
    expect(await ids('sort=CreateDate&desc=true')).toEqual(['delta', 'gamma', 'beta', 'alpha']);
    expect(await ids('sort=FileSize')).toEqual(['delta', 'alpha', 'beta', 'gamma']);
    expect(await ids('sort=FileSize&desc=true')).toEqual(['gamma', 'beta', 'alpha', 'delta']);
    expect(await ids('sort=Metadata.FriendlyName')).toEqual(['delta', 'gamma', 'beta', 'alpha']);
    expect(await ids('sort=metadata.friendlyname&desc=true&limit=1')).toEqual(['alpha']);
  });

  it('updates a file per the spec, keeping its original name', async () => {
    const before = (await t.json('GET', `/vod/v1/files/${f.beta.fileId}`)).body;
    await pause();
    const { status, body } = await t.json('PATCH', `/vod/v1/files/${f.beta.fileId}`, {
      name: 'beta-renamed.mp3',
      friendlyName: 'Yak 2',
      metadata: { a: '1' },
      tags: ['c'],
      attributes: ['x=y'],
    });
    expect(status).toBe(200);
    expect(body).toMatchObject({
      id: f.beta.fileId,
      fileKey: f.beta.fileKey,
      status: 'Completed',
      fileSize: 2000,
      name: 'beta-renamed.mp3',
      friendlyName: 'Yak 2',
      tags: ['c'],
      attributes: ['x=y'],
      createDate: before.createDate,
    });
    expect(Date.parse(body.lastModificationDate)).toBeGreaterThan(Date.parse(before.lastModificationDate));
    const after = (await t.json('GET', `/vod/v1/files/${f.beta.fileId}`)).body;
    expect(after).toMatchObject({ name: 'beta-renamed.mp3', orginalFileName: 'beta.mp3', metadata: { a: '1' }, tags: ['c'] });
    expect(await eventTypes(p, f.beta.fileId)).toEqual(['vod.file.created', 'vod.file.completed', 'vod.file.updated']);

    const bad = await t.json('PATCH', `/vod/v1/files/${f.beta.fileId}`, { attributes: ['novalue'], name: 'x'.repeat(1025) });
    expect(bad.status).toBe(400);
    expect(bad.body.errors.map((e: { field: string }) => e.field).sort()).toEqual(['attributes[0]', 'name']);
  });

  it('answers another tenant exactly as for a missing file, everywhere', async () => {
    const fileId = f.gamma.fileId;
    const missing = randomUUID();
    const calls: [string, string, unknown?][] = [
      ['GET', `/vod/v1/files/${fileId}`],
      ['PATCH', `/vod/v1/files/${fileId}`, { name: 'mine.srt' }],
      ['GET', `/vod/v1/files/${fileId}/part/1`],
      ['POST', '/vod/v1/files/complete', { fileId, parts: [{ partNumber: 1, eTag: 'x' }] }],
      ['POST', `/vod/v1/files/${fileId}/cancel`, { delete: true }],
      ['GET', `/vod/v1/files/${f.alpha.fileId}/preview`],
      ['POST', `/vod/v1/files/${f.alpha.fileId}/detect`],
      ['GET', `/vod/v1/files/${f.alpha.fileId}/duration`],
      ['DELETE', `/vod/v1/files/${f.alpha.fileId}`],
    ];
    for (const [method, path, body] of calls) {
      const theirs = await other.json(method, path, body);
      const none = await other.json(
        method,
        path.replace(fileId, missing).replace(f.alpha.fileId, missing),
        body && JSON.parse(JSON.stringify(body).replace(fileId, missing)),
      );
      expect(theirs.status, `${method} ${path}`).toBe(404);
      expect(theirs.body.status.code).toBe('file_not_found');
      expect(theirs.body.status.message.replace(fileId, missing).replace(f.alpha.fileId, missing)).toBe(none.body.status.message);
    }
    const many = await other.json('POST', '/vod/v1/files/deletemany', [fileId]);
    expect(many.body[fileId]).toMatchObject({ success: false, status: { code: 'file_not_found', status: 404 } });
    expect((await other.json('GET', '/vod/v1/files')).body.totalCount).toBe(0);

    // Another tenant's signed part URL pointed at this file's key (or this file's upload) is refused.
    const theirUpload = await startUpload(other, { name: 'theirs.srt', fileSize: 3000 });
    const retargeted = new URL(theirUpload.multipartUrls[0]);
    retargeted.pathname = retargeted.pathname.replace(encodeURI(theirUpload.fileKey), encodeURI(f.gamma.fileKey));
    expect(retargeted.href).not.toBe(theirUpload.multipartUrls[0]);
    expect((await putPart(retargeted.href, randomBytes(3000))).status).toBe(403);
    retargeted.searchParams.set('uploadId', new URL(f.gamma.multipartUrls[0]).searchParams.get('uploadId')!);
    expect((await putPart(retargeted.href, randomBytes(3000))).status).toBe(403);

    // The owner's file is untouched, and its part URLs still work for the owner only (they are bound to this upload).
    expect((await t.json('GET', `/vod/v1/files/${fileId}`)).body.status).toBe('Uploading');
    expect((await putPart(f.gamma.multipartUrls[0], randomBytes(3000))).status).toBe(200);
  });

  it('deletes many files, reporting each id', async () => {
    const extra = await startUpload(t, { name: 'extra.mp4', fileSize: 10 });
    const junk = 'not-a-file';
    const missing = randomUUID();
    const { status, body } = await t.json('POST', '/vod/v1/files/deletemany', [extra.fileId, missing, junk, extra.fileId]);
    expect(status).toBe(200);
    expect(Object.keys(body).sort()).toEqual([extra.fileId, missing, junk].sort());
    expect(body[extra.fileId]).toEqual({ status: { code: 'success', status: 200, message: 'Deleted' }, success: true });
    for (const id of [missing, junk])
      expect(body[id]).toEqual({ status: { code: 'file_not_found', status: 404, message: `File ${id} was not found` }, success: false });
    expect((await t.json('GET', `/vod/v1/files/${extra.fileId}`)).status).toBe(404);
  });
});
