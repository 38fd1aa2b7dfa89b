import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDb, startInProcess, type TestPlatform } from './helpers/platform.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO_UTC = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const SCOPE_MODULES = ['cvr', 'live', 'transcoder', 'drm', 'vod', 'kms', 'core', 'streaming', 'cap', 'notifications', 'watermarking'];

describeEachDb('Admin API', (kind) => {
  let p: TestPlatform;
  const json = async (res: Response) => ({ status: res.status, body: (await res.json()) as any });
  const admin = async (method: string, path: string, body?: unknown) => json(await p.admin(method, path, body));

  beforeAll(async () => {
    p = await startInProcess(kind);
  });
  afterAll(() => p.stop());

  it('POST /admin/v1/tenants answers 201 with the tenant and its first Admin key, which works', async () => {
    const res = await admin('POST', '/admin/v1/tenants', { name: 'acme' });
    expect(res.status).toBe(201);
    const t = res.body;
    expect(t.id).toMatch(UUID);
    expect(t.name).toBe('acme');
    expect(t.status).toBe('Active');
    expect(t.channelsLimit).toBe(5);
    expect(t.createDate).toMatch(ISO_UTC);
    expect(t.lastModificationDate).toMatch(ISO_UTC);
    expect(t.apiKey.id).toMatch(UUID);
    expect(t.apiKey.name).toBe('initial admin key');
    expect(t.apiKey.roleType).toBe('Admin');
    expect(t.apiKey.key).toMatch(/^mpk_/);
    const tenant = p.client(t.id, t.name, t.apiKey.key);
    const keys = await tenant.json('GET', '/core/v1/api-key');
    expect(keys.status).toBe(200);
    expect(keys.body.items.map((k: any) => k.id)).toEqual([t.apiKey.id]);
  });

  it('tenant names are DNS labels: invalid ones are 400 naming the field', async () => {
    const bad = ['Acme', '-acme', 'acme-', 'ac_me', 'ac.me', 'a'.repeat(64), 'é', ' acme'];
    for (const name of bad) {
      const res = await admin('POST', '/admin/v1/tenants', { name });
      expect(res.status, name).toBe(400);
      expect(res.body.status.code).toBe('validation_failed');
      expect(res.body.errors[0].field).toBe('name');
    }
    for (const name of ['a', '0', 'a-b-c', 'x'.repeat(63)]) {
      expect((await admin('POST', '/admin/v1/tenants', { name })).status, name).toBe(201);
    }
    const missing = await admin('POST', '/admin/v1/tenants', {});
    expect(missing.status).toBe(400);
    expect(missing.body.errors).toEqual([{ field: 'name', message: 'is required' }]);
  });

  it('a duplicate name is 409 tenant_name_taken', async () => {
    await admin('POST', '/admin/v1/tenants', { name: 'dup' });
    const res = await admin('POST', '/admin/v1/tenants', { name: 'dup' });
    expect(res.status).toBe(409);
    expect(res.body.status).toEqual({ code: 'tenant_name_taken', status: 409, message: 'A tenant named "dup" already exists' });
  });

  it('GET /admin/v1/tenants pages, sorts and searches', async () => {
    for (const name of ['page-c', 'page-a', 'page-b']) await admin('POST', '/admin/v1/tenants', { name });
    const first = await admin('GET', '/admin/v1/tenants?query=page-&sort=Name&limit=2');
    expect(first.status).toBe(200);
    expect(first.body.items.map((t: any) => t.name)).toEqual(['page-a', 'page-b']);
    expect(first.body).toMatchObject({ totalCount: 3, pageCount: 2, pageSize: 2, pageNumber: 1, hasMore: true });
    const second = await admin('GET', '/admin/v1/tenants?query=page-&sort=Name&limit=2&page=2');
    expect(second.body.items.map((t: any) => t.name)).toEqual(['page-c']);
    expect(second.body).toMatchObject({ totalCount: 3, pageCount: 2, pageNumber: 2, hasMore: false });
    const item = second.body.items[0];
    expect(Object.keys(item).sort()).toEqual(['channelsLimit', 'createDate', 'id', 'lastModificationDate', 'name', 'status']);
    const bad = await admin('GET', '/admin/v1/tenants?sort=Color');
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].field).toBe('sort');
  });

  it('GET /admin/v1/tenants/{id} by id or by name; unknown is 404 tenant_not_found', async () => {
    const created = (await admin('POST', '/admin/v1/tenants', { name: 'lookup' })).body;
    const byId = await admin('GET', `/admin/v1/tenants/${created.id}`);
    expect(byId.status).toBe(200);
    expect(byId.body).toEqual({
      id: created.id,
      name: 'lookup',
      status: 'Active',
      channelsLimit: 5,
      createDate: created.createDate,
      lastModificationDate: created.lastModificationDate,
    });
    expect((await admin('GET', '/admin/v1/tenants/lookup')).body.id).toBe(created.id);
    const missing = await admin('GET', '/admin/v1/tenants/00000000-0000-0000-0000-000000000000');
    expect(missing.status).toBe(404);
    expect(missing.body.status.code).toBe('tenant_not_found');
    expect((await admin('GET', '/admin/v1/tenants/nobody')).status).toBe(404);
  });

  it('PATCH /admin/v1/tenants/{id} changes status and channelsLimit, validating both', async () => {
    const created = (await admin('POST', '/admin/v1/tenants', { name: 'patchme' })).body;
    const res = await admin('PATCH', `/admin/v1/tenants/${created.id}`, { status: 'Blocked', channelsLimit: 12 });
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('Blocked');
    expect(res.body.channelsLimit).toBe(12);
    expect(Date.parse(res.body.lastModificationDate)).toBeGreaterThan(Date.parse(created.lastModificationDate));
    expect((await admin('GET', `/admin/v1/tenants/${created.id}`)).body.channelsLimit).toBe(12);
    const badStatus = await admin('PATCH', `/admin/v1/tenants/${created.id}`, { status: 'Paused' });
    expect(badStatus.status).toBe(400);
    expect(badStatus.body.errors).toEqual([{ field: 'status', message: 'must be one of Active, Blocked, Deleted, SettingUp, Error' }]);
    const badLimit = await admin('PATCH', `/admin/v1/tenants/${created.id}`, { channelsLimit: -1 });
    expect(badLimit.status).toBe(400);
    expect(badLimit.body.errors[0].field).toBe('channelsLimit');
    expect((await admin('PATCH', '/admin/v1/tenants/00000000-0000-0000-0000-000000000000', { status: 'Active' })).status).toBe(404);
  });

  it('a wrong or missing admin token is 401, and a tenant API key is no admin token', async () => {
    const wrong = await p.fetch(`${p.baseUrl}/admin/v1/tenants`, { headers: { authorization: 'Bearer not-the-token' } });
    expect(wrong.status).toBe(401);
    expect(((await wrong.json()) as any).status).toEqual({ code: 'invalid_admin_token', status: 401, message: 'The admin token is wrong' });
    const missing = await p.fetch(`${p.baseUrl}/admin/v1/tenants`);
    expect(missing.status).toBe(401);
    expect(((await missing.json()) as any).status.code).toBe('missing_credentials');
    const t = await p.createTenant();
    const asTenant = await p.fetch(`${p.baseUrl}/admin/v1/tenants`, { headers: { 'x-api-key': t.key, 'x-tenant-id': t.id } });
    expect(asTenant.status).toBe(401);
    const lowercase = await p.fetch(`${p.baseUrl}/admin/v1/tenants`, { headers: { authorization: `bearer ${p.adminToken}` } });
    expect(lowercase.status).toBe(200);
  });
});

describeEachDb('Legacy OAuth', (kind) => {
  let p: TestPlatform;
  let tenantId: string;
  let client: { clientId: string; clientSecret: string };
  const form = (fields: Record<string, string>, headers: Record<string, string> = {}) =>
    p.fetch(`${p.baseUrl}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: new URLSearchParams(fields).toString(),
    });
  const grant = () => ({ client_id: client.clientId, client_secret: client.clientSecret, grant_type: 'client_credentials' });

  beforeAll(async () => {
    p = await startInProcess(kind);
    tenantId = (await p.createTenant()).id;
    const res = await p.admin('POST', `/admin/v1/tenants/${tenantId}/oauth-clients`, { name: 'legacy app' });
    expect(res.status).toBe(201);
    const body = (await res.json()) as any;
    expect(body).toMatchObject({ name: 'legacy app', roleType: 'Admin', tenantId });
    expect(body.clientId).toMatch(UUID);
    expect(body.clientSecret.length).toBeGreaterThanOrEqual(40);
    client = body;
  });
  afterAll(() => p.stop());

  it('POST /oauth/token (form) answers access_token, scope, expires_in 86400, token_type Bearer', async () => {
    const res = await form(grant());
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const body = (await res.json()) as any;
    expect(Object.keys(body).sort()).toEqual(['access_token', 'expires_in', 'scope', 'token_type']);
    expect(body.access_token.length).toBeGreaterThanOrEqual(40);
    expect(body.expires_in).toBe(86400);
    expect(body.token_type).toBe('Bearer');
    expect(body.scope.split(' ')).toEqual(SCOPE_MODULES.map((m) => `${m}:${tenantId}`));
  });

  it('Authorization: Bearer <token> works in place of X-Api-Key, with the client role', async () => {
    const { access_token } = (await (await form(grant())).json()) as any;
    const res = await p.fetch(`${p.baseUrl}/core/v1/api-key`, { headers: { authorization: `Bearer ${access_token}`, 'x-tenant-id': tenantId } });
    expect(res.status).toBe(200);
    expect(((await res.json()) as any).totalCount).toBe(1);
    const wrongTenant = await p.fetch(`${p.baseUrl}/core/v1/api-key`, {
      headers: { authorization: `Bearer ${access_token}`, 'x-tenant-id': '00000000-0000-0000-0000-000000000000' },
    });
    expect(wrongTenant.status).toBe(403);
    const unknown = await p.fetch(`${p.baseUrl}/core/v1/api-key`, { headers: { authorization: 'Bearer nope', 'x-tenant-id': tenantId } });
    expect(unknown.status).toBe(401);
    expect(((await unknown.json()) as any).status.code).toBe('invalid_token');

    const viewerClient = (await (await p.admin('POST', `/admin/v1/tenants/${tenantId}/oauth-clients`, { name: 'ro', roleType: 'Viewer' })).json()) as any;
    const viewerToken = (await (
      await form({ client_id: viewerClient.clientId, client_secret: viewerClient.clientSecret, grant_type: 'client_credentials' })
    ).json()) as any;
    const headers = { authorization: `Bearer ${viewerToken.access_token}`, 'x-tenant-id': tenantId };
    expect((await p.fetch(`${p.baseUrl}/core/v1/api-key`, { headers })).status).toBe(403);
    expect((await p.fetch(`${p.baseUrl}/transcoder/v1/presets`, { headers })).status).toBe(200);
  });

  it('accepts the client credentials as HTTP Basic (RFC 6749 2.3.1)', async () => {
    const basic = Buffer.from(`${client.clientId}:${client.clientSecret}`).toString('base64');
    const res = await form({ grant_type: 'client_credentials' }, { authorization: `Basic ${basic}` });
    expect(res.status).toBe(200);
    const wrong = await form({ grant_type: 'client_credentials' }, { authorization: `Basic ${Buffer.from(`${client.clientId}:x`).toString('base64')}` });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('www-authenticate')).toBe('Basic realm="mediaplane"');
  });

  it('a wrong secret or unknown client is 401 { error: "invalid_client" }', async () => {
    for (const fields of [
      { ...grant(), client_secret: 'wrong' },
      { ...grant(), client_id: '00000000-0000-0000-0000-000000000000' },
    ]) {
      const res = await form(fields);
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual({ error: 'invalid_client', error_description: 'Client authentication failed' });
    }
  });

  it('missing fields are 400 invalid_request, another grant 400 unsupported_grant_type, never the platform shape', async () => {
    const { client_secret: _, ...noSecret } = grant();
    const missing = await form(noSecret);
    expect(missing.status).toBe(400);
    expect(await missing.json()).toEqual({ error: 'invalid_request', error_description: 'client_id, client_secret and grant_type are required' });
    const password = await form({ ...grant(), grant_type: 'password' });
    expect(password.status).toBe(400);
    expect(await password.json()).toEqual({ error: 'unsupported_grant_type', error_description: 'Only client_credentials is supported' });
    const twice = await p.fetch(`${p.baseUrl}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `client_id=a&client_id=b&client_secret=x&grant_type=client_credentials`,
    });
    expect(twice.status).toBe(400);
    expect(((await twice.json()) as any).error).toBe('invalid_request');
    const text = await p.fetch(`${p.baseUrl}/oauth/token`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'hello' });
    expect(text.status).toBe(400);
    expect(((await text.json()) as any).error).toBe('invalid_request');
    const empty = await p.fetch(`${p.baseUrl}/oauth/token`, { method: 'POST' });
    expect(empty.status).toBe(400);
    expect(((await empty.json()) as any).error).toBe('invalid_request');
  });

  it('OAuth clients: unknown tenant 404, bad roleType 400', async () => {
    const unknown = await p.admin('POST', '/admin/v1/tenants/00000000-0000-0000-0000-000000000000/oauth-clients', { name: 'x' });
    expect(unknown.status).toBe(404);
    const bad = await p.admin('POST', `/admin/v1/tenants/${tenantId}/oauth-clients`, { name: 'x', roleType: 'Root' });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as any).errors[0].field).toBe('roleType');
  });
});
