import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeEachDb, freshStorage, startPlatform, tenantClient, type TestPlatform, type TestStorage, type TestTenant } from './helpers/platform.ts';

/**
 * Lists answered from rendered pages (src/platform/listCache.ts) must never show a change late, whichever way it was
 * made: through the API, by hand-written SQL, or by another process on the same database.
 */
describeEachDb('Cached lists', (kind) => {
  let p: TestPlatform;
  let t: TestTenant;
  const names = async (query = '') => {
    const res = await t.json('GET', `/core/v1/api-key?sort=Name${query}`);
    expect(res.status).toBe(200);
    return { names: (res.body.items as { name: string }[]).map((k) => k.name), totalCount: res.body.totalCount as number };
  };

  beforeAll(async () => {
    p = await startPlatform(kind);
    t = await p.createTenant();
    for (const name of ['b', 'c']) expect((await t.json('POST', '/core/v1/api-key', { name, roleType: 'Viewer' })).status).toBe(200);
  });
  afterAll(() => p.stop());

  it('shows a key created, renamed or deleted through the API on the very next list', async () => {
    const start = await names();
    expect(await names()).toEqual(start);
    const created = await t.json('POST', '/core/v1/api-key', { name: 'a', roleType: 'Viewer' });
    expect(await names()).toEqual({ names: ['a', ...start.names], totalCount: start.totalCount + 1 });
    await t.json('PUT', `/core/v1/api-key/${created.body.id}`, { name: 'z', roleType: 'Viewer' });
    expect(await names()).toEqual({ names: [...start.names, 'z'], totalCount: start.totalCount + 1 });
    expect((await t.call('DELETE', `/core/v1/api-key/${created.body.id}`)).status).toBe(204);
    expect(await names()).toEqual(start);
  });

  it('shows changes made by hand-written SQL (the trigger bumps the version, not the code path)', async () => {
    const before = await names();
    await p.database.executeSql(`update api_keys set name = 'sql-renamed' where tenant_id = $1 and name = 'b'`, [t.id]);
    const after = await names();
    expect(after.names).toContain('sql-renamed');
    expect(after.names).not.toContain('b');
    await p.database.executeSql(`update api_keys set name = 'b' where tenant_id = $1 and name = 'sql-renamed'`, [t.id]);
    expect(await names()).toEqual(before);
  });

  it('keeps pages of different queries and of different tenants apart', async () => {
    const all = await names();
    const [one, two] = [await names('&limit=1'), await names('&limit=1&page=2')];
    expect(one.names).toEqual(all.names.slice(0, 1));
    expect(two.names).toEqual(all.names.slice(1, 2));
    expect((await names('&limit=1&desc=true')).names).toEqual(all.names.slice(-1));
    const other = await p.createTenant();
    const theirs = await other.json('GET', '/core/v1/api-key?sort=Name');
    expect(theirs.body.totalCount).toBe(1);
    expect(theirs.body.items.map((k: { name: string }) => k.name)).not.toContain('b');
  });

  it('serves the cached page with the same bytes and headers as a rendered one', async () => {
    const off = await startPlatform(kind, { MEDIAPLANE_LIST_CACHE_MB: '0' });
    try {
      const u = await off.createTenant();
      const fresh = await u.call('GET', '/core/v1/api-key');
      const again = [await u.call('GET', '/core/v1/api-key'), await (await p.createTenant()).call('GET', '/transcoder/v1/presets')];
      expect(fresh.headers.get('content-type')).toBe('application/json; charset=utf-8');
      for (const res of again) expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
      const presetsOff = await (await u.call('GET', '/transcoder/v1/presets?limit=3')).text();
      const presetsOn = await (await t.call('GET', '/transcoder/v1/presets?limit=3')).text();
      expect(presetsOn).toBe(presetsOff);
      expect(await (await t.call('GET', '/transcoder/v1/presets?limit=3')).text()).toBe(presetsOff);
    } finally {
      await off.stop();
    }
  });
});

describeEachDb('Cached lists with a bearer token', (kind) => {
  let p: TestPlatform;
  beforeAll(async () => (p = await startPlatform(kind)));
  afterAll(() => p.stop());

  it('reads the collection version with the token as with an API key', async () => {
    const t = await p.createTenant();
    const client = (await (await p.admin('POST', `/admin/v1/tenants/${t.id}/oauth-clients`, { name: 'legacy' })).json()) as any;
    const token = (await (
      await fetch(`${p.baseUrl}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ client_id: client.clientId, client_secret: client.clientSecret, grant_type: 'client_credentials' }).toString(),
      })
    ).json()) as any;
    const list = async () =>
      ((await (await fetch(`${p.baseUrl}/core/v1/api-key`, { headers: { authorization: `Bearer ${token.access_token}`, 'x-tenant-id': t.id } })).json()) as any)
        .totalCount;
    expect(await list()).toBe(1);
    await t.json('POST', '/core/v1/api-key', { name: 'second', roleType: 'Editor' });
    expect(await list()).toBe(2);
  });
});

describe.runIf(process.env.TEST_DATABASE_URL)('Cached lists across processes [postgres]', () => {
  let storage: TestStorage;
  let a: TestPlatform;
  let b: TestPlatform;
  beforeAll(async () => {
    storage = await freshStorage('postgres');
    a = await startPlatform('postgres', {}, storage);
    b = await startPlatform('postgres', {}, storage);
  });
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await storage?.drop();
  });

  it("a key created or deleted through one platform process shows in the other one's next list", async () => {
    const viaA = await a.createTenant();
    const viaB = tenantClient(b.baseUrl, viaA.id, viaA.name, viaA.key);
    const count = async () => (await viaA.json('GET', '/core/v1/api-key')).body.totalCount;
    expect(await count()).toBe(1);
    expect(await count()).toBe(1);
    const created = await viaB.json('POST', '/core/v1/api-key', { name: 'made in b', roleType: 'Viewer' });
    expect(await count()).toBe(2);
    await viaB.call('DELETE', `/core/v1/api-key/${created.body.id}`);
    expect(await count()).toBe(1);
  });
});
