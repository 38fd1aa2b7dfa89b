import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startUpload, uploadFile as uploadBytes } from './helpers/files.ts';
import { makeClip, tempDir } from './helpers/media.ts';
import { describeEachDb, startPlatform, type TestPlatform, type TestTenant } from './helpers/platform.ts';
import { until } from './helpers/until.ts';
import { uploadFile } from './helpers/upload.ts';

/**
 * Issue 14, items 5, 6 and 9: one validation rule everywhere (coercion only where HTTP gives strings, never in JSON
 * bodies), the cases that were silently accepted, no server path shown to tenants, and one notation for fields.
 */
describeEachDb('Validation: no silent accepts', (kind) => {
  const { dir, cleanup } = tempDir();
  let p: TestPlatform;
  let t: TestTenant;
  let clipId: string;
  let assetId: string;
  let outputId: string;

  /** A request through `app.inject` (no socket): the raw body and headers exactly as given. */
  const inject = async (method: string, url: string, payload?: string, contentType = 'application/json') => {
    const res = await p.app.inject({
      method: method as 'POST',
      url,
      headers: { 'x-api-key': t.key, 'x-tenant-id': t.id, ...(payload !== undefined ? { 'content-type': contentType } : {}) },
      payload,
    });
    return { status: res.statusCode, body: res.body ? res.json() : undefined };
  };
  const send = (method: string, url: string, body?: unknown) => inject(method, url, body === undefined ? undefined : JSON.stringify(body));

  function expectInvalid(res: { status: number; body: any }, field: string, message?: string) {
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.status.code).toBe('validation_failed');
    const found = res.body.errors.find((e: { field: string }) => e.field === field);
    expect(found, `no error on ${field}: ${JSON.stringify(res.body.errors)}`).toBeDefined();
    if (message) expect(found.message).toBe(message);
    return found;
  }

  beforeAll(async () => {
    p = await startPlatform(kind);
    t = await p.createTenant();
    clipId = await uploadFile(t, await makeClip(dir, 'clip', { width: 160, height: 90, seconds: 1, audio: [] }));
    const created = await send('POST', '/vod/v1/assets', { transcodedSources: [{ fileId: clipId }], preset: 'remux-hls-mp4', title: 'first' });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    assetId = created.body.id;
    const asset = await until(
      () => send('GET', `/vod/v1/assets/${assetId}`),
      (r) => r.body.status === 'Available' || r.body.status === 'Error',
      { timeoutMs: 150_000 },
    );
    expect(asset.body.status, JSON.stringify(asset.body)).toBe('Available');
    outputId = asset.body.outputs[0].id;
    // A first start of the embedded database and a transcode, on a machine shared with other suites.
  }, 180_000);
  afterAll(async () => {
    await p?.stop();
    cleanup();
  });

  describe('JSON bodies are taken as typed, never coerced', () => {
    it('PATCH file: tags must be an array of strings, names strings, metadata values strings', async () => {
      const file = (await startUpload(t, { name: 'typed.mp4', fileSize: 10 })).fileId;
      const path = `/vod/v1/files/${file}`;
      expectInvalid(await send('PATCH', path, { tags: 'a,b' }), 'tags', 'must be an array');
      expectInvalid(await send('PATCH', path, { tags: 5 }), 'tags', 'must be an array');
      expectInvalid(await send('PATCH', path, { tags: ['a', 5] }), 'tags[1]', 'must be a string');
      for (const name of [12345, true, ['a'], null]) expectInvalid(await send('PATCH', path, { name }), 'name');
      expectInvalid(await send('PATCH', path, { metadata: { k: 1 } }), 'metadata.k', 'must be a string');
      const stored = await send('GET', path);
      expect(stored.body).toMatchObject({ name: 'typed.mp4', tags: [], metadata: {} });
      // The right types still work.
      expect((await send('PATCH', path, { tags: ['a', 'b'], metadata: { k: '1' } })).body).toMatchObject({ tags: ['a', 'b'], metadata: { k: '1' } });
    });

    it('null where a field is not nullable is a 400, not "", 0 or false', async () => {
      expectInvalid(await send('PATCH', `/vod/v1/assets/${assetId}`, { title: null }), 'title', 'must be a string');
      expect((await send('GET', `/vod/v1/assets/${assetId}`)).body.title).toBe('first');
      const hook = await send('POST', '/notifications/v1/webhook', {
        name: 'h',
        url: 'https://example.com/hook',
        eventTypes: ['webhook.test'],
        isEnabled: true,
      });
      expect(hook.status, JSON.stringify(hook.body)).toBe(200);
      expectInvalid(await send('PATCH', `/notifications/v1/webhook/${hook.body.id}`, { isEnabled: null }), 'isEnabled', 'must be a boolean (true or false)');
      expect((await send('GET', `/notifications/v1/webhook/${hook.body.id}`)).body.isEnabled).toBe(true);
      const admin = await p.admin('PATCH', `/admin/v1/tenants/${t.id}`, { channelsLimit: null });
      expect(admin.status).toBe(400);
      expect((await admin.json()).errors).toContainEqual({ field: 'channelsLimit', message: 'must be an integer' });
    });

    it('a bare JSON string is no one-item array for deletemany', async () => {
      const res = await inject('POST', '/vod/v1/assets/deletemany', JSON.stringify('0190b0a0-0000-7000-8000-000000000000'));
      expectInvalid(res, 'body', 'must be an array');
    });

    it('a value outside its enumeration, or a nullable uuid given as "", is a 400', async () => {
      const source = { transcodedSources: [{ fileId: clipId }], preset: 'remux-hls-mp4' };
      expectInvalid(
        await send('POST', '/vod/v1/assets', { ...source, distributionInfo: { accessPolicyId: '' } }),
        'distributionInfo.accessPolicyId',
        'must be a uuid or null',
      );
      expectInvalid(await send('PATCH', `/vod/v1/assets/${assetId}`, { accessPolicyId: '' }), 'accessPolicyId', 'must be a uuid or null');
      expect((await send('PATCH', `/vod/v1/assets/${assetId}`, { accessPolicyId: null })).status).toBe(200);
      expectInvalid(await send('POST', '/core/v1/api-key', { name: 'k', roleType: 'Owner' }), 'roleType');
    });

    it('names the field of an error inside an array as transcodedSources[0].fileId', async () => {
      const res = await send('POST', '/vod/v1/assets', { transcodedSources: [{ fileId: 7 }], preset: 'remux-hls-mp4' });
      expectInvalid(res, 'transcodedSources[0].fileId', 'must be a string');
      expect(res.body.status.message).toBe('transcodedSources[0].fileId: must be a string');
      expectInvalid(await send('POST', '/vod/v1/assets', { transcodedSources: [{}], preset: 'remux-hls-mp4' }), 'transcodedSources[0].fileId', 'is required');
      expectInvalid(await inject('POST', '/vod/v1/files/start', '{"name":"a.mp4","friendlyName":"f","fileSize":10,"tags":["ok","a\\u0000"]}'), 'tags[1]');
      expectInvalid(
        await send('POST', '/vod/v1/files/start', { name: 'a.mp4', friendlyName: 'f', fileSize: 10, metadata: { 'a.b': 3 } }),
        'metadata["a.b"]',
        'must be a string',
      );
    });

    it('unknown properties are refused, naming each (issue 25, item 5)', async () => {
      const res = await send('PATCH', `/vod/v1/assets/${assetId}`, { title: 'changed', somethingElse: [1, null] });
      expectInvalid(res, 'somethingElse', 'is not allowed here');
      expect((await send('GET', `/vod/v1/assets/${assetId}`)).body.title).toBe('first');
    });
  });

  describe('query strings and paths are text: still read as numbers, booleans and arrays', () => {
    it('takes limit=1, desc=true, repeated and comma-separated arrays', async () => {
      const list = await send('GET', '/vod/v1/assets?limit=1&desc=true');
      expect(list.status).toBe(200);
      expect(list.body.pageSize).toBe(1);
      for (const qs of [`ids=${assetId}`, `ids=${assetId},${assetId}`, `ids=${assetId}&ids=0190b0a0-0000-7000-8000-000000000000`]) {
        expect((await send('GET', `/vod/v1/assets?${qs}`)).body.totalCount, qs).toBe(1);
      }
    });
  });

  describe('the cases found silently accepted', () => {
    it('cancel upload validates its body: {"delete":"yes"} is a 400 and the file is kept', async () => {
      const { fileId } = await startUpload(t, { name: 'cancel.mp4', fileSize: 10 });
      expectInvalid(await send('POST', `/vod/v1/files/${fileId}/cancel`, { delete: 'yes' }), 'delete', 'must be a boolean (true or false)');
      expectInvalid(await send('POST', `/vod/v1/files/${fileId}/cancel`, { delete: 'true' }), 'delete');
      expect((await send('GET', `/vod/v1/files/${fileId}`)).body.status).toBe('Uploading');
      // No body still means "delete: false": the file stays, in Error.
      expect((await send('POST', `/vod/v1/files/${fileId}/cancel`)).status).toBe(204);
      expect((await send('GET', `/vod/v1/files/${fileId}`)).body.status).toBe('Error');
      const other = await startUpload(t, { name: 'cancel2.mp4', fileSize: 10 });
      expect((await send('POST', `/vod/v1/files/${other.fileId}/cancel`, { delete: true })).status).toBe(204);
      expect((await send('GET', `/vod/v1/files/${other.fileId}`)).status).toBe(404);
    });

    it('the OpenAPI document shows the body of cancel upload', async () => {
      const doc = (await p.app.inject({ method: 'GET', url: '/openapi.json' })).json();
      const body = doc.paths['/vod/v1/files/{id}/cancel'].post.requestBody;
      expect(body.content['application/json'].schema.properties.delete).toMatchObject({ type: 'boolean' });
    });

    it('statuses on the assets list: an unknown status is a 400; known ones match in any case', async () => {
      for (const bogus of ['Bogus', 'null']) expectInvalid(await send('GET', `/vod/v1/assets?statuses=${bogus}`), 'statuses');
      for (const status of ['Available', 'available', 'AVAILABLE,Error']) {
        expect((await send('GET', `/vod/v1/assets?statuses=${status}`)).body.totalCount, status).toBe(1);
      }
      expect((await send('GET', '/vod/v1/assets?statuses=Pending')).body.totalCount).toBe(0);
    });

    it('presets: an unknown mediaType is a 400', async () => {
      expectInvalid(await send('GET', '/transcoder/v1/presets?mediaType=Banana'), 'mediaType');
      expect((await send('GET', '/transcoder/v1/presets?mediaType=Audio')).status).toBe(200);
    });

    it('webhook events: a day that does not exist (2020-02-30) is a 400, not 1 March', async () => {
      for (const date of ['2020-02-30', '2021-02-29', '2020-04-31T00:00:00Z']) {
        expectInvalid(await send('GET', `/notifications/v1/webhook-events?start=${date}`), 'start');
      }
      expect((await send('GET', '/notifications/v1/webhook-events?start=2020-02-29&end=2020-12-31')).status).toBe(200);
    });

    it('progress of several outputs: unknown asset and output ids are a 404 naming each', async () => {
      const unknownAsset = '0190b0a0-0000-7000-8000-000000000000';
      const res = await send('POST', '/vod/v1/assets/outputs/progress', [
        { id: assetId, outputs: [{ id: outputId }, { id: 'nope' }] },
        { id: unknownAsset, outputs: [{ id: 'x' }] },
      ]);
      expect(res.status).toBe(404);
      expect(res.body.status.code).toBe('asset_not_found');
      expect(res.body.errors.map((e: { field: string }) => e.field)).toEqual(['[0].outputs[1].id', '[1].id']);
      const outputOnly = await send('POST', '/vod/v1/assets/outputs/progress', [{ id: assetId, outputs: [{ id: 'nope' }] }]);
      expect(outputOnly.status).toBe(404);
      expect(outputOnly.body.status.code).toBe('output_not_found');
      const known = await send('POST', '/vod/v1/assets/outputs/progress', [{ id: assetId, outputs: [{ id: outputId }] }]);
      expect(known.body).toEqual([{ id: assetId, outputs: [{ id: outputId, progressPercent: 100 }] }]);
    });

    it('add output: a body assetId other than the path is a 400', async () => {
      const other = '0190b0a0-0000-7000-8000-000000000000';
      expectInvalid(await send('POST', `/vod/v1/assets/${assetId}/outputs`, { preset: 'remux-hls-mp4', assetId: other }), 'assetId');
      const same = await send('POST', `/vod/v1/assets/${assetId}/outputs`, { preset: 'remux-hls-mp4', assetId: assetId.toUpperCase(), id: 'same-asset' });
      expect(same.status, JSON.stringify(same.body)).toBe(200);
    });

    it('overlays are refused on a preset that does not transcode', async () => {
      const overlays = [{ startTime: '0', duration: 1000, width: 10, height: 10, input: { type: 'URL', url: 'https://example.com/logo.png' } }];
      expectInvalid(await send('POST', '/vod/v1/assets', { transcodedSources: [{ fileId: clipId }], preset: 'remux-hls-mp4', overlays }), 'overlays');
      expectInvalid(await send('POST', `/vod/v1/assets/${assetId}/outputs`, { preset: 'remux-hls-mp4', overlays }), 'overlays');
    });

    it('a JSON body in another charset than UTF-8 is a 415', async () => {
      for (const charset of ['utf-16', 'bogus', 'iso-8859-1']) {
        const res = await inject('POST', '/core/v1/api-key', '{"name":"k","roleType":"Viewer"}', `application/json; charset=${charset}`);
        expect(res.status, charset).toBe(415);
        expect(res.body.status.code).toBe('unsupported_media_type');
      }
      expect((await inject('POST', '/core/v1/api-key', '{"name":"k","roleType":"Viewer"}', 'application/json; charset=UTF-8')).status).toBe(200);
    });

    it('a file of random bytes: an asset from it is refused at once, naming the source', async () => {
      const { fileId } = await uploadBytes(t, 'noise.mp4', randomBytes(4000));
      const res = await send('POST', '/vod/v1/assets', { transcodedSources: [{ fileId }], preset: 'remux-hls-mp4' });
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.body.status.code).toBe('file_not_media');
      expect(res.body.errors).toEqual([{ field: 'transcodedSources[0].fileId', message: 'is not a media file' }]);
      expect((await send('GET', `/vod/v1/assets?limit=10`)).body.totalCount).toBe(1);
    });
  });

  describe('no server path reaches a tenant', () => {
    it('file fields and detect/duration errors show store keys and URLs, never the data directory', async () => {
      const { fileId, fileKey } = await uploadBytes(t, 'junk.mp4', randomBytes(3000));
      const file = (await send('GET', `/vod/v1/files/${fileId}`)).body;
      for (const field of ['location', 's3Uri', 'bucket']) {
        expect(file[field], field).not.toContain(p.config.dataDir);
        expect(file[field], field).not.toMatch(/^file:|^\//);
      }
      expect(file.s3Uri).toContain(fileKey);
      expect(new URL(file.location).pathname).toContain(fileKey);
      for (const [method, op] of [
        ['POST', 'detect'],
        ['GET', 'duration'],
      ]) {
        const res = await send(method, `/vod/v1/files/${fileId}/${op}`);
        expect(res.status, op).toBe(400);
        expect(res.body.status.code).toBe('file_not_media');
        expect(JSON.stringify(res.body), op).not.toContain(p.config.dataDir);
      }
    });
  });
});
