import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { makeClip, tempDir } from './helpers/media.ts';
import { describeEachDb, startPlatform, tenantClient, type TestPlatform, type TestTenant } from './helpers/platform.ts';
import { uploadFile } from './helpers/upload.ts';
import { until } from './helpers/until.ts';

const { dir, cleanup } = tempDir('mediaplane-hostile-');
afterAll(cleanup);

/** The one error body, and nothing beside it. */
const errorBody = (code: string, status: number) => ({ status: { code, status, message: expect.any(String) } });

/** Strings of 36 hex digits or hyphens that are no UUID: they are names to look up, not ids to query. */
const UUID_SHAPED = ['a'.repeat(36), '-'.repeat(36), `${'0'.repeat(35)}-`];

describeEachDb('Hostile input to core, admin, OAuth and VOD delivery', (kind) => {
  let p: TestPlatform;
  const admin = async (method: string, path: string, body?: unknown) => {
    const res = await p.admin(method, path, body);
    return { status: res.status, body: (await res.json()) as any };
  };

  beforeAll(async () => {
    p = await startPlatform(kind);
  });
  afterAll(() => p.stop());

  it('the last Admin key can be neither deleted nor demoted through another spelling of its id', async () => {
    const t = await p.createTenant();
    const [last] = (await t.json('GET', '/core/v1/api-key')).body.items;
    for (const id of [last.id.toUpperCase(), `${last.id.slice(0, 8).toUpperCase()}${last.id.slice(8)}`]) {
      const demote = await t.json('PUT', `/core/v1/api-key/${id}`, { name: 'demoted', roleType: 'Viewer' });
      expect(demote.status, id).toBe(409);
      expect(demote.body).toEqual(errorBody('last_admin_key', 409));
      const remove = await t.json('DELETE', `/core/v1/api-key/${id}`);
      expect(remove.status, id).toBe(409);
      expect(remove.body).toEqual(errorBody('last_admin_key', 409));
    }
    // A URN spelling is bad input, never a server fault: a 404 from core, or a 400 once the `uuid` format refuses it.
    const urn = await t.json('DELETE', `/core/v1/api-key/urn:uuid:${last.id}`);
    expect(urn.body).toEqual(urn.status === 400 ? { ...errorBody('validation_failed', 400), errors: expect.any(Array) } : errorBody('api_key_not_found', 404));

    // The key still manages keys, unchanged.
    const after = await t.json('GET', '/core/v1/api-key');
    expect(after.status).toBe(200);
    expect(after.body.items).toEqual([expect.objectContaining({ id: last.id, name: 'initial admin key', roleType: 'Admin' })]);

    // With a second Admin key, an upper-case id deletes the first, which stops working; the other is then the last.
    const second = (await t.json('POST', '/core/v1/api-key', { name: 'second admin', roleType: 'Admin' })).body;
    expect((await t.call('DELETE', `/core/v1/api-key/${last.id.toUpperCase()}`)).status).toBe(204);
    expect((await t.call('GET', '/core/v1/api-key')).status).toBe(401);
    const withSecond = tenantClient(p.baseUrl, t.id, t.name, second.key);
    const lastNow = await withSecond.call('DELETE', `/core/v1/api-key/${second.id.toUpperCase()}`);
    expect(lastNow.status).toBe(409);
    expect(await lastNow.json()).toEqual(errorBody('last_admin_key', 409));
    expect((await withSecond.call('GET', '/core/v1/api-key')).status).toBe(200);
  });

  it('admin: an {idOrName} of 36 hex digits or hyphens that is no UUID is a name: 404 tenant_not_found, never 500', async () => {
    for (const idOrName of UUID_SHAPED) {
      const get = await admin('GET', `/admin/v1/tenants/${idOrName}`);
      expect(get.status, idOrName).toBe(404);
      expect(get.body).toEqual(errorBody('tenant_not_found', 404));
      const patch = await admin('PATCH', `/admin/v1/tenants/${idOrName}`, { status: 'Blocked' });
      expect(patch.status, idOrName).toBe(404);
      expect(patch.body).toEqual(errorBody('tenant_not_found', 404));
      const client = await admin('POST', `/admin/v1/tenants/${idOrName}/oauth-clients`, { name: 'x' });
      expect(client.status, idOrName).toBe(404);
      expect(client.body).toEqual(errorBody('tenant_not_found', 404));
    }
    // Such strings are valid DNS labels: a tenant of that name is found by it, as is one named like a UUID.
    const hexName = 'b'.repeat(36);
    const uuidName = '0190b0a0-0000-7000-8000-0000000000ff';
    for (const name of [hexName, uuidName]) {
      const created = await admin('POST', '/admin/v1/tenants', { name });
      expect(created.status, name).toBe(201);
      const found = await admin('GET', `/admin/v1/tenants/${name}`);
      expect(found.status, name).toBe(200);
      expect(found.body.id).toBe(created.body.id);
      const client = await admin('POST', `/admin/v1/tenants/${name.toUpperCase()}/oauth-clients`, { name: 'legacy' });
      expect(client.status, name).toBe(201);
      expect(client.body.tenantId).toBe(created.body.id);
    }
  });

  it('admin: PATCH a tenant takes status, statusMessage and channelsLimit only; name, id and dates are refused', async () => {
    const a = (await admin('POST', '/admin/v1/tenants', { name: `taken-${kind}` })).body;
    const b = (await admin('POST', '/admin/v1/tenants', { name: `renamed-${kind}` })).body;
    const hostile: [Record<string, unknown>, string, string][] = [
      [{ name: a.name }, 'name', 'cannot be changed after creation'],
      [{ createDate: '2001-01-01T00:00:00Z' }, 'createDate', 'is not allowed here'],
      [{ id: a.id }, 'id', 'is not allowed here'],
      [{ name: 'Not A DNS label!' }, 'name', 'cannot be changed after creation'],
      [{ lastModificationDate: 'never' }, 'lastModificationDate', 'is not allowed here'],
    ];
    for (const [patch, field, message] of hostile) {
      const res = await admin('PATCH', `/admin/v1/tenants/${b.id}`, patch);
      expect(res.status, JSON.stringify(patch)).toBe(400);
      expect(res.body.errors).toEqual([{ field, message }]);
    }
    // A refused property refuses the whole request: the documented fields that came along are not applied either.
    const mixed = await admin('PATCH', `/admin/v1/tenants/${b.name}`, { name: 'other', id: a.id, status: 'Blocked', channelsLimit: 7 });
    expect(mixed.status).toBe(400);
    expect((await admin('GET', `/admin/v1/tenants/${b.name}`)).body).toMatchObject({ id: b.id, status: 'Active' });
    const applied = await admin('PATCH', `/admin/v1/tenants/${b.name}`, { status: 'Blocked', channelsLimit: 7 });
    expect(applied.status).toBe(200);
    expect(applied.body).toMatchObject({ id: b.id, name: b.name, status: 'Blocked', channelsLimit: 7 });

    // Afterwards both tenants are what they were, each under its own name and id.
    expect((await admin('GET', `/admin/v1/tenants/${b.name}`)).body).toMatchObject({ id: b.id, createDate: b.createDate, status: 'Blocked' });
    expect((await admin('GET', `/admin/v1/tenants/${a.name}`)).body).toMatchObject({ id: a.id, name: a.name, status: 'Active' });
    expect((await admin('GET', '/admin/v1/tenants/not-a-dns-label')).status).toBe(404);
  });

  it('POST /oauth/token: NUL in a form, a JSON body or Basic credentials is a RFC 6749 error, never server_error', async () => {
    const t = await p.createTenant();
    const client = (await admin('POST', `/admin/v1/tenants/${t.id}/oauth-clients`, { name: 'legacy' })).body;
    const token = (body: string, headers: Record<string, string>) => fetch(`${p.baseUrl}/oauth/token`, { method: 'POST', headers, body });
    const oauthError = async (res: Response) => ({ status: res.status, body: await res.json(), challenge: res.headers.get('www-authenticate') });
    const invalidRequest = { status: 400, body: { error: 'invalid_request', error_description: expect.any(String) }, challenge: null };

    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    expect(await oauthError(await token('client_id=%00&client_secret=x&grant_type=client_credentials', form))).toEqual(invalidRequest);
    expect(await oauthError(await token(`client_id=${client.clientId}&client_secret=%00&grant_type=client_credentials`, form))).toEqual(invalidRequest);
    const json = JSON.stringify({ client_id: '\u0000', client_secret: 'x', grant_type: 'client_credentials' });
    expect(await oauthError(await token(json, { 'content-type': 'application/json' }))).toEqual(invalidRequest);

    const invalidClient = {
      status: 401,
      body: { error: 'invalid_client', error_description: 'Client authentication failed' },
      challenge: 'Basic realm="mediaplane"',
    };
    for (const credentials of ['a\0b:c', `${client.clientId}\0:${client.clientSecret}`, 'a%00b:c', `${client.clientId}:\x01`]) {
      const basic = { ...form, authorization: `Basic ${Buffer.from(credentials).toString('base64')}` };
      expect(await oauthError(await token('grant_type=client_credentials', basic)), JSON.stringify(credentials)).toEqual(invalidClient);
    }

    // The client still gets its token, which works.
    const ok = await token(`client_id=${client.clientId}&client_secret=${client.clientSecret}&grant_type=client_credentials`, form);
    expect(ok.status).toBe(200);
    const { access_token } = (await ok.json()) as any;
    const keys = await fetch(`${p.baseUrl}/core/v1/api-key`, { headers: { authorization: `Bearer ${access_token}`, 'x-tenant-id': t.id } });
    expect(keys.status).toBe(200);
  });

  it('/media/vod: a Range past the end is 416 range_not_satisfiable with Content-Range bytes */size, as on /storage', async () => {
    const t: TestTenant = await p.createTenant();
    const fileId = await uploadFile(t, await makeClip(dir, `tiny-${kind}`, { width: 160, height: 90, seconds: 1, audio: [] }));
    const { id } = (await t.json('POST', '/vod/v1/assets', { transcodedSources: [{ fileId }], preset: 'remux-hls-mp4' })).body;
    const asset = (
      await until(
        () => t.json('GET', `/vod/v1/assets/${id}`),
        (r) => ['Available', 'Error'].includes(r.body?.status),
        { timeoutMs: 90_000 },
      )
    ).body;
    expect(asset.status).toBe('Available');
    const endpoint = asset.endpoints.find((e: any) => e.url.endsWith('.mp4')) ?? asset.endpoints[0];
    const whole = await fetch(endpoint.url);
    expect(whole.status).toBe(200);
    const size = Number(whole.headers.get('content-length'));
    expect(size).toBeGreaterThan(0);

    for (const method of ['GET', 'HEAD']) {
      const res = await fetch(endpoint.url, { method, headers: { range: 'bytes=99999999-', origin: 'http://player.example' } });
      expect(res.status, method).toBe(416);
      expect(res.headers.get('content-range')).toBe(`bytes */${size}`);
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
      expect(res.headers.get('cache-control') ?? '').not.toContain('immutable');
      if (method === 'GET') {
        expect(res.headers.get('content-type')).toMatch(/^application\/json/);
        expect(await res.json()).toEqual(errorBody('range_not_satisfiable', 416));
      }
    }

    // A satisfiable range is still served.
    const part = await fetch(endpoint.url, { headers: { range: 'bytes=0-9' } });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe(`bytes 0-9/${size}`);
    expect((await part.arrayBuffer()).byteLength).toBe(10);
  }, 120_000);

  it('an asset read, followed and deleted by its upper-case id: same answers, and its outputs leave the disk', async () => {
    const t: TestTenant = await p.createTenant();
    const fileId = await uploadFile(t, await makeClip(dir, `case-${kind}`, { width: 160, height: 90, seconds: 1, audio: [] }));
    const { id } = (await t.json('POST', '/vod/v1/assets', { transcodedSources: [{ fileId }], preset: 'remux-hls-mp4' })).body;
    const asset = (
      await until(
        () => t.json('GET', `/vod/v1/assets/${id.toUpperCase()}`),
        (r) => ['Available', 'Error'].includes(r.body?.status),
        { timeoutMs: 90_000 },
      )
    ).body;
    expect(asset.status).toBe('Available');
    expect(asset.id).toBe(id);
    const outputs = join(p.config.dataDir, 'objects', 'tenants', t.id, 'vod', id);
    const filesUnder = () => (existsSync(outputs) ? readdirSync(outputs, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).length : 0);
    expect(filesUnder()).toBeGreaterThan(0);

    const outputId: string = asset.outputs[0].id;
    const progress = await t.json('POST', '/vod/v1/assets/outputs/progress', [{ id: id.toUpperCase(), outputs: [{ id: outputId.toUpperCase() }] }]);
    expect(progress.status).toBe(200);
    expect(progress.body).toEqual([{ id: id.toUpperCase(), outputs: [{ id: outputId, progressPercent: 100 }] }]);

    expect((await t.json('DELETE', `/vod/v1/assets/${id.toUpperCase()}`)).status).toBe(200);
    expect((await t.json('GET', `/vod/v1/assets/${id}`)).status).toBe(404);
    expect(filesUnder()).toBe(0);
    expect((await t.json('GET', `/vod/v1/files/${fileId}`)).body.vodAssets).toEqual([]);
  }, 120_000);
});
