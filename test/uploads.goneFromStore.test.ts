import { afterAll, beforeAll, expect, it } from 'vitest';
import { putPart, startUpload, uploadIdOf } from './helpers/files.ts';
import { describeEachDb, type TestPlatform, type TestTenant, startPlatform } from './helpers/platform.ts';

/** The store key a presigned part URL of the embedded store writes to. */
const keyOf = (url: string) => new URL(url).pathname.slice('/storage/v1/upload/'.length).split('/').map(decodeURIComponent).join('/');

// An upload the store no longer holds (aborted behind the platform's back, or expired by a bucket's lifecycle rule) is
// answered alike wherever parts are uploaded: 409 "not uploading", not a 400 that tells the client to fix its parts.
describeEachDb('a multipart upload gone from the store', (kind) => {
  let p: TestPlatform;
  let t: TestTenant;

  beforeAll(async () => {
    p = await startPlatform(kind);
    t = await p.createTenant();
  });
  afterAll(() => p?.stop());

  async function startAndLose(path: string): Promise<{ fileId: string; parts: { partNumber: number; eTag: string }[] }> {
    const s = path === 'vod' ? await startUpload(t, { name: 'gone.mp4', fileSize: 10 }) : (await t.json('POST', path, { name: 'gone.mp4', fileSize: 10 })).body;
    const url = s.multipartUrls[0] as string;
    const part = await putPart(url, Buffer.from('0123456789'));
    await p.ctx.store.abortMultipartUpload(keyOf(url), uploadIdOf(url));
    return { fileId: s.fileId, parts: [{ partNumber: 1, eTag: part.eTag! }] };
  }

  it('VOD files: 409 file_not_uploading', async () => {
    const { fileId, parts } = await startAndLose('vod');
    const r = await t.json('POST', '/vod/v1/files/complete', { fileId, parts });
    expect(r.status).toBe(409);
    expect(r.body.status).toMatchObject({ code: 'file_not_uploading', message: `The upload of file ${fileId} is no longer open in the store` });
  });

  it('watermarking suspect files: 409 file_not_uploading, as VOD files', async () => {
    const { fileId, parts } = await startAndLose('/watermarking/v1/files/start');
    const r = await t.json('POST', '/watermarking/v1/files/complete', { fileId, parts });
    expect(r.status).toBe(409);
    expect(r.body.status).toMatchObject({ code: 'file_not_uploading', message: `The upload of file ${fileId} is no longer open in the store` });
  });
});
