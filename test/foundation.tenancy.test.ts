import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDb, startInProcess, type TestPlatform, type TestTenant } from './helpers/platform.ts';

describeEachDb('Tenant isolation', (kind) => {
  let p: TestPlatform;
  let a: TestTenant;
  let b: TestTenant;
  let aKeyId: string;

  beforeAll(async () => {
    p = await startInProcess(kind);
    a = await p.createTenant();
    b = await p.createTenant();
    aKeyId = (await a.json('POST', '/core/v1/api-key', { name: 'a-owned', roleType: 'Viewer' })).body.id;
  });
  afterAll(() => p.stop());

  /** fetch() forbids setting Host; the tenant-host checks need it, and app.inject() takes it. */
  const getWithHost = async (url: string, host: string, headers: Record<string, string>) => {
    const res = await p.fetch(url, { headers: { ...headers, host } });
    return { status: res.status, body: (await res.json()) as any };
  };

  it("a second tenant's key cannot read, change or delete the first tenant's keys: 404 as if missing", async () => {
    for (const [method, body] of [['GET'], ['PUT', { name: 'stolen', roleType: 'Admin' }], ['DELETE']] as const) {
      const res = await b.json(method, `/core/v1/api-key/${aKeyId}`, body);
      expect(res.status, method).toBe(404);
      expect(res.body.status).toEqual({ code: 'api_key_not_found', status: 404, message: `API key ${aKeyId} was not found` });
    }
    const still = await a.json('GET', `/core/v1/api-key/${aKeyId}`);
    expect(still.body.name).toBe('a-owned');
    expect(still.body.roleId).toBe('0190b0a0-0000-7000-8000-00000000a003');
  });

  it("lists show only the caller's own keys", async () => {
    const listA = await a.json('GET', '/core/v1/api-key');
    const listB = await b.json('GET', '/core/v1/api-key');
    expect(listA.body.totalCount).toBe(2);
    expect(listB.body.totalCount).toBe(1);
    const idsB = listB.body.items.map((k: any) => k.id);
    expect(idsB).not.toContain(aKeyId);
  });

  it("one tenant's key with the other tenant's X-Tenant-Id is 403 tenant_mismatch", async () => {
    const res = await b.json('GET', '/core/v1/api-key', undefined);
    expect(res.status).toBe(200);
    const mixed = p.client(a.id, a.name, b.key);
    const refused = await mixed.json('GET', '/core/v1/api-key');
    expect(refused.status).toBe(403);
    expect(refused.body.status).toEqual({ code: 'tenant_mismatch', status: 403, message: 'X-Tenant-Id does not match the tenant of the credentials' });
    const garbage = await p.client('not-a-uuid', a.name, a.key).json('GET', '/core/v1/api-key');
    expect(garbage.status).toBe(403);
    expect(garbage.body.status.code).toBe('tenant_mismatch');
  });

  it('a missing X-Tenant-Id is 400 naming the header; missing or unknown credentials are 401', async () => {
    const noTenant = await p.fetch(`${p.baseUrl}/core/v1/api-key`, { headers: { 'x-api-key': a.key } });
    expect(noTenant.status).toBe(400);
    expect(await noTenant.json()).toEqual({
      status: { code: 'validation_failed', status: 400, message: 'X-Tenant-Id: the header is required' },
      errors: [{ field: 'X-Tenant-Id', message: 'is required' }],
    });
    const noKey = await p.fetch(`${p.baseUrl}/core/v1/api-key`, { headers: { 'x-tenant-id': a.id } });
    expect(noKey.status).toBe(401);
    expect(((await noKey.json()) as any).status.code).toBe('missing_credentials');
    const badKey = await p.client(a.id, a.name, 'mpk_nope').json('GET', '/core/v1/api-key');
    expect(badKey.status).toBe(401);
    expect(badKey.body.status.code).toBe('invalid_api_key');
  });

  it("accepts calls on the tenant's own host {name}.localhost:<port>, refuses another tenant's host", async () => {
    const port = new URL(p.baseUrl).port;
    const headers = { 'x-api-key': a.key, 'x-tenant-id': a.id };
    const url = `${p.baseUrl}/core/v1/api-key`;
    const own = await getWithHost(url, `${a.name}.localhost:${port}`, headers);
    expect(own.status).toBe(200);
    expect(own.body.totalCount).toBe(2);
    const ownUpper = await getWithHost(url, `${a.name.toUpperCase()}.LOCALHOST:${port}`, headers);
    expect(ownUpper.status).toBe(200);
    const bare = await getWithHost(url, `localhost:${port}`, headers);
    expect(bare.status).toBe(200);
    const other = await getWithHost(url, `${b.name}.localhost:${port}`, headers);
    expect(other.status).toBe(403);
    expect(other.body.status).toEqual({
      code: 'tenant_mismatch',
      status: 403,
      message: `The host belongs to tenant "${b.name}", not to the tenant of the credentials`,
    });
    const nested = await getWithHost(url, `x.${a.name}.localhost:${port}`, headers);
    expect(nested.status).toBe(403);
  });

  it('a Blocked tenant is refused with tenant_blocked on every operation but its status; unblocked it works again', async () => {
    const c = await p.createTenant();
    const block = await p.admin('PATCH', `/admin/v1/tenants/${c.id}`, { status: 'Blocked', statusMessage: 'Unpaid invoice' });
    expect(block.status).toBe(200);
    expect(((await block.json()) as any).status).toBe('Blocked');
    for (const path of ['/core/v1/api-key', '/transcoder/v1/presets']) {
      const res = await c.json('GET', path);
      expect(res.status, path).toBe(403);
      expect(res.body.status).toEqual({ code: 'tenant_blocked', status: 403, message: 'The tenant is Blocked; API calls are refused' });
    }
    const create = await c.json('POST', '/core/v1/api-key', { name: 'x', roleType: 'Admin' });
    expect(create.status).toBe(403);
    expect(create.body.status.code).toBe('tenant_blocked');
    const status = await c.json('GET', `/core/v1/settings/tenant/${c.id}/status`);
    expect(status.status).toBe(200);
    expect(status.body).toEqual({ status: 'Blocked', message: 'Unpaid invoice' });
    // Other tenants are not affected.
    expect((await a.call('GET', '/core/v1/api-key')).status).toBe(200);

    await p.admin('PATCH', `/admin/v1/tenants/${c.id}`, { status: 'Active', statusMessage: '' });
    expect((await c.call('GET', '/core/v1/api-key')).status).toBe(200);
    expect((await c.json('GET', `/core/v1/settings/tenant/${c.id}/status`)).body).toEqual({ status: 'Active', message: 'The tenant is Active' });
  });
});
