import { afterAll, beforeAll, expect, it } from 'vitest';
import { makeClip, tempDir } from './helpers/media.ts';
import { describeEachDb, startInProcess, type TestPlatform, type TestTenant } from './helpers/platform.ts';
import { until } from './helpers/until.ts';
import { uploadFile } from './helpers/upload.ts';
import { prepare, uploadSuspect } from './helpers/watermarking.ts';

const { dir, cleanup } = tempDir('mediaplane-watermark-routes-');
afterAll(cleanup);

const errorBody = (code: string, status: number) => ({ status: { code, status, message: expect.any(String) } });
const MISSING = '0190f0f0-0000-7000-8000-000000000000';

describeEachDb('Watermarking routes', (kind) => {
  let p: TestPlatform;
  let t: TestTenant;
  let other: TestTenant;
  let vodAssetId: string;
  let asset: any;

  beforeAll(async () => {
    p = await startInProcess(kind);
    t = await p.createTenant();
    other = await p.createTenant();
    // 48 s: the shortest asset the default settings prepare (16 bits + 8 CRC bits, one 2 s segment each).
    const clip = await makeClip(dir, `clip-${kind}`, { width: 320, height: 180, seconds: 48, fps: 15, audio: [] });
    const vod = await t.json('POST', '/vod/v1/assets', { transcodedSources: [{ fileId: await uploadFile(t, clip) }], preset: 'remux-hls-mp4' });
    vodAssetId = vod.body.id;
    asset = await prepare(t, vodAssetId);
  }, 120_000);
  afterAll(() => p?.stop());

  it('settings: defaults, a partial update, refused values, and one tenant at a time', async () => {
    const defaults = { userNumberBits: 16, segmentDuration: 2, strength: 3, tokenTtlSeconds: 86400, minConfidence: 0.4 };
    expect((await other.json('GET', '/watermarking/v1/settings')).body).toEqual(defaults);
    for (const bad of [{ userNumberBits: 2 }, { segmentDuration: 0 }, { strength: 50 }, { minConfidence: 0 }, { userNumberBits: 'many' }]) {
      const res = await other.json('PATCH', '/watermarking/v1/settings', bad);
      expect(res.status, JSON.stringify(bad)).toBe(400);
      expect(res.body).toMatchObject(errorBody('validation_failed', 400));
    }
    const changed = await other.json('PATCH', '/watermarking/v1/settings', { userNumberBits: 20 });
    expect(changed.body).toEqual({ ...defaults, userNumberBits: 20 });
    expect((await other.json('GET', '/watermarking/v1/settings')).body.userNumberBits).toBe(20);
    expect((await t.json('GET', '/watermarking/v1/settings')).body.userNumberBits).toBe(16);
  });

  it('assets: one too short for the tenant settings is refused with the minimum, which the settings change', async () => {
    const clip = await makeClip(dir, `short-${kind}`, { width: 320, height: 180, seconds: 10, fps: 15, audio: [] });
    const short = await t.json('POST', '/vod/v1/assets', { transcodedSources: [{ fileId: await uploadFile(t, clip) }], preset: 'remux-hls-mp4' });
    const refused = await t.json('POST', '/watermarking/v1/assets', { vodAssetId: short.body.id });
    expect(refused.body).toEqual(errorBody('watermarking_asset_too_short', 400));
    expect(refused.body.status.message).toContain('at least 48 s');
    expect(refused.body.status.message).toContain('10.0 s long');
    expect(refused.body.status.message).toContain('PATCH /watermarking/v1/settings');
    // Fewer bits and shorter segments lower the minimum (4 + 8 bits of 1 s: 12 s), which the message follows.
    expect((await t.json('PATCH', '/watermarking/v1/settings', { userNumberBits: 4, segmentDuration: 1 })).status).toBe(200);
    try {
      const still = await t.json('POST', '/watermarking/v1/assets', { vodAssetId: short.body.id });
      expect(still.body.status.message).toContain('at least 12 s');
    } finally {
      expect((await t.json('PATCH', '/watermarking/v1/settings', { userNumberBits: 16, segmentDuration: 2 })).status).toBe(200);
    }
    expect((await t.json('GET', '/watermarking/v1/assets')).body.totalCount).toBe(1);
  });

  it('assets: created from the tenant own VOD asset only, listed in the paging envelope, 404 for another tenant', async () => {
    expect(asset).toMatchObject({ status: 'Available', vodAssetId, width: 320, height: 180, segmentDuration: 2, userNumberBits: 16 });
    expect((await other.json('POST', '/watermarking/v1/assets', { vodAssetId })).body).toEqual(errorBody('asset_not_found', 404));
    expect((await t.json('POST', '/watermarking/v1/assets', { vodAssetId: 'x' })).status).toBe(400);
    expect((await t.json('POST', '/watermarking/v1/assets', {})).status).toBe(400);
    expect((await other.json('GET', `/watermarking/v1/assets/${asset.id}`)).body).toEqual(errorBody('watermarking_asset_not_found', 404));
    expect((await t.json('GET', `/watermarking/v1/assets/${MISSING}`)).body).toEqual(errorBody('watermarking_asset_not_found', 404));
    expect((await t.json('GET', '/watermarking/v1/assets/not-a-uuid')).status).toBe(400);
    const list = await t.json('GET', '/watermarking/v1/assets?limit=1&sort=CreateDate&desc=true');
    expect(list.body).toMatchObject({ pageSize: 1, pageNumber: 1, totalCount: 1, pageCount: 1, hasMore: false });
    expect(Object.keys(list.body.items[0])).toEqual(expect.arrayContaining(['id', 'createDate', 'metadata']));
    expect((await other.json('GET', '/watermarking/v1/assets')).body.totalCount).toBe(0);
    expect((await t.json('GET', '/watermarking/v1/assets?sort=Password')).body).toMatchObject(errorBody('validation_failed', 400));
    expect((await t.json('GET', '/watermarking/v1/assets?createDateStart=yesterday')).status).toBe(400);
    expect((await t.json('GET', `/watermarking/v1/assets?createDateStart=${new Date(Date.now() + 3600_000).toISOString()}`)).body.totalCount).toBe(0);
  });

  it('tokens and sessions: limits on the user number, another tenant sees nothing, revocation is per tenant', async () => {
    const refused = [
      { assetId: asset.id, userNumber: 2 ** 16, userName: 'Too big' },
      { assetId: asset.id, userNumber: -1, userName: 'Negative' },
      { assetId: asset.id, userNumber: 1.5, userName: 'Fraction' },
      { assetId: asset.id, userNumber: 1, userName: '' },
      { assetId: asset.id, userNumber: 1 },
    ];
    for (const body of refused) expect((await t.json('POST', '/watermarking/v1/redirector/token', body)).status, JSON.stringify(body)).toBe(400);
    const foreign = await other.json('POST', '/watermarking/v1/redirector/token', { assetId: asset.id, userNumber: 1, userName: 'Mallory' });
    expect(foreign.body).toEqual(errorBody('watermarking_asset_not_found', 404));

    const first = await t.json('POST', '/watermarking/v1/redirector/token', { assetId: asset.id, userNumber: 7, userName: 'Ann', expiresInSeconds: 600 });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({
      token: expect.any(String),
      sessionId: expect.any(String),
      playbackUrl: expect.stringContaining('/watermarking/v1/redirector/'),
    });
    const again = await t.json('POST', '/watermarking/v1/redirector/token', { assetId: asset.id, userNumber: 7, userName: 'Ann' });
    expect(again.body.sessionId).toBe(first.body.sessionId);

    const sessions = await t.json('GET', `/watermarking/v1/sessions?assetId=${asset.id}&userNumber=7`);
    expect(sessions.body).toMatchObject({
      totalCount: 1,
      items: [{ id: first.body.sessionId, userNumber: 7, userName: 'Ann', revoked: false, revokeDate: null }],
    });
    expect((await t.json('GET', '/watermarking/v1/sessions?query=ann')).body.totalCount).toBe(1);
    expect((await t.json('GET', '/watermarking/v1/sessions?assetId=nope')).status).toBe(400);
    expect((await other.json('GET', '/watermarking/v1/sessions')).body.totalCount).toBe(0);
    const id = first.body.sessionId;
    expect((await other.json('GET', `/watermarking/v1/sessions/${id}`)).body).toEqual(errorBody('watermarking_session_not_found', 404));
    expect((await other.json('POST', `/watermarking/v1/sessions/${id}/revoke`)).body).toEqual(errorBody('watermarking_session_not_found', 404));
    expect((await t.json('GET', `/watermarking/v1/sessions/${id}`)).body.revoked).toBe(false);
    // Revoking twice is one revocation; the date stays the first.
    const revoked = (await t.json('POST', `/watermarking/v1/sessions/${id}/revoke`)).body;
    expect((await t.json('POST', `/watermarking/v1/sessions/${id}/revoke`)).body.revokeDate).toBe(revoked.revokeDate);
    expect((await t.json('GET', '/watermarking/v1/sessions?revoked=true')).body.items.map((s: any) => s.id)).toEqual([id]);
    expect((await t.json('POST', `/watermarking/v1/sessions/${id}/unrevoke`)).body).toMatchObject({ revoked: false, revokeDate: null });
  });

  it('the redirector: playlists for a valid token, 401 for a forged, truncated or foreign-signed one, 404 past the last segment', async () => {
    const { token } = (await t.json('POST', '/watermarking/v1/redirector/token', { assetId: asset.id, userNumber: 9, userName: 'Ben' })).body;
    const base = `${p.baseUrl}/watermarking/v1/redirector`;
    const master = await p.fetch(`${base}/${token}/master.m3u8`);
    expect(master.status).toBe(200);
    expect(master.headers.get('content-type')).toContain('mpegurl');
    expect(await master.text()).toContain('RESOLUTION=320x180');
    const media = await (await p.fetch(`${base}/${token}/media.m3u8`)).text();
    expect(media.match(/^segments\/\d+\.ts$/gm)).toHaveLength(asset.segmentCount);
    const seg = await p.fetch(`${base}/${token}/segments/0.ts`, { redirect: 'manual' });
    expect(seg.status).toBe(302);
    // The store URL of one variant of segment 0; the token does not show through.
    expect(seg.headers.get('location')).toMatch(/\/(A|B)\/seg_00000\.ts/);
    expect((await p.fetch(seg.headers.get('location')!)).status).toBe(200);

    const [head, payload, signature] = token.split('.');
    const forged = `${head}.${Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(payload, 'base64url').toString()), sub: MISSING })).toString('base64url')}.${signature}`;
    const alg = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')}.${payload}.`;
    for (const bad of [forged, alg, token.slice(0, -3), 'x', 'a.b.c', '%00']) {
      const res = await p.fetch(`${base}/${encodeURIComponent(bad)}/media.m3u8`);
      expect(res.status, bad.slice(0, 40)).toBe(401);
      expect(await res.json()).toEqual(errorBody('redirector_token_invalid', 401));
    }
    // A path parameter longer than the platform takes: refused before any lookup, in the one error shape.
    const long = await p.fetch(`${base}/${'x'.repeat(3000)}/media.m3u8`);
    expect(long.status).toBe(414);
    expect((await long.json()).status.status).toBe(414);
    const past = await p.fetch(`${base}/${token}/segments/${asset.segmentCount}.ts`, { redirect: 'manual' });
    expect(await past.json()).toEqual(errorBody('segment_not_found', 404));
    for (const path of ['segments/..%2F..%2Fsecret.ts', 'segments/-1.ts', 'segments/1.mp4', 'segments/99999999.ts']) {
      const res = await p.fetch(`${base}/${token}/${path}`, { redirect: 'manual' });
      expect(res.status, path).toBe(400);
    }
  });

  it('suspect files: the multipart flow, 404 across tenants, refused parts and detection of an unfinished upload', async () => {
    const start = await t.json('POST', '/watermarking/v1/files/start', { name: 'leak.mp4', fileSize: 1000 });
    expect(start.status).toBe(200);
    const { fileId } = start.body;
    expect((await t.json('GET', `/watermarking/v1/files/${fileId}/part/2`)).body).toEqual(errorBody('upload_part_invalid', 400));
    expect((await t.json('GET', `/watermarking/v1/files/${fileId}/part/0`)).status).toBe(400);
    expect((await other.json('GET', `/watermarking/v1/files/${fileId}/part/1`)).body).toEqual(errorBody('watermarking_file_not_found', 404));
    expect((await t.json('POST', '/watermarking/v1/detectjobs', { fileId })).body).toEqual(errorBody('file_not_completed', 409));
    expect((await t.json('POST', '/watermarking/v1/files/complete', { fileId, parts: [{ partNumber: 1 }] })).body).toMatchObject(
      errorBody('upload_parts_not_uploaded', 400),
    );
    expect((await other.json('POST', '/watermarking/v1/files/complete', { fileId, parts: [{ partNumber: 1 }] })).status).toBe(404);
    expect((await t.json('POST', '/watermarking/v1/files/start', { name: 'x.mp4', fileSize: 0 })).status).toBe(400);
    expect((await t.json('POST', '/watermarking/v1/detectjobs', {})).status).toBe(400);
    expect((await t.json('POST', '/watermarking/v1/detectjobs', { fileId: MISSING })).body).toEqual(errorBody('watermarking_file_not_found', 404));

    const garbage = `${dir}/garbage-${kind}.mp4`;
    await import('node:fs/promises').then((fs) => fs.writeFile(garbage, 'not a video at all'));
    const done = await uploadSuspect(t, garbage);
    expect((await other.json('POST', '/watermarking/v1/detectjobs', { fileId: done })).status).toBe(404);
    const file = (await t.json('GET', `/watermarking/v1/files/${done}`)).body;
    expect(file).toMatchObject({ id: done, orginalFileName: `garbage-${kind}.mp4`, uploadStatus: 'Completed', detection: null });
    const list = await t.json('GET', '/watermarking/v1/files?query=garbage');
    expect(list.body).toMatchObject({ totalCount: 1, items: [{ id: done }] });
    expect((await other.json('GET', '/watermarking/v1/files')).body.totalCount).toBe(0);
    // A file that is not video ends its detection in Error with a reason, never as a result.
    const { jobId } = (await t.json('POST', '/watermarking/v1/detectjobs', { fileId: done })).body;
    const failed = await until(
      () => t.json('GET', `/watermarking/v1/files/${done}`),
      (r) => r.body.detection?.status === 'Error',
      { timeoutMs: 30_000 },
    );
    expect(failed.body.detection).toMatchObject({ jobId, progress: 100, message: expect.stringContaining('could not be read') });
    expect(failed.body.detection.userNumber).toBeUndefined();
  });
});
