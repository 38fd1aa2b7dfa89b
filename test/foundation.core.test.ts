import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDb, startInProcess, type TestPlatform, type TestTenant } from './helpers/platform.ts';

const ROLE_IDS = {
  Admin: '0190b0a0-0000-7000-8000-00000000a001',
  Editor: '0190b0a0-0000-7000-8000-00000000a002',
  Viewer: '0190b0a0-0000-7000-8000-00000000a003',
};
const ISO_UTC = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describeEachDb('Core', (kind) => {
  let p: TestPlatform;
  let t: TestTenant;
  const as = (key: string) => p.client(t.id, t.name, key);
  const createKey = async (name: string, roleType: string) => {
    const res = await t.json('POST', '/core/v1/api-key', { name, roleType });
    expect(res.status).toBe(200);
    return res.body as { id: string; name: string; roleType: string; key: string };
  };

  beforeAll(async () => {
    p = await startInProcess(kind);
    t = await p.createTenant();
  });
  afterAll(() => p.stop());

  it('GET /core/v1/settings/tenant/{id}/status answers status and message for the own tenant', async () => {
    const res = await t.json('GET', `/core/v1/settings/tenant/${t.id}/status`);
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('Active');
    expect(res.body.message).toBe('The tenant is Active');
    const upper = await t.json('GET', `/core/v1/settings/tenant/${t.id.toUpperCase()}/status`);
    expect(upper.body.status).toBe('Active');
  });

  it('GET tenant status of another or unknown tenant is 404 tenant_not_found', async () => {
    const other = await p.createTenant();
    for (const id of [other.id, '00000000-0000-0000-0000-000000000000', 'not-a-tenant']) {
      const res = await t.json('GET', `/core/v1/settings/tenant/${id}/status`);
      expect(res.status).toBe(404);
      expect(res.body.status).toEqual({ code: 'tenant_not_found', status: 404, message: `Tenant ${id} was not found` });
    }
  });

  it("GET /core/v1/settings/tenant/{id} (not in the spec) answers the own tenant and the calling key's role; another tenant is 404", async () => {
    const own = await t.json('GET', `/core/v1/settings/tenant/${t.id}`);
    expect(own.status).toBe(200);
    expect(own.body).toEqual({
      id: t.id,
      name: t.name,
      status: 'Active',
      message: 'The tenant is Active',
      roleType: 'Admin',
      grants: ['read', 'write', 'manage'],
    });
    const viewer = as((await createKey('console viewer', 'Viewer')).key);
    expect((await viewer.json('GET', `/core/v1/settings/tenant/${t.id}`)).body).toMatchObject({ name: t.name, roleType: 'Viewer', grants: ['read'] });
    const other = await p.createTenant();
    expect((await t.json('GET', `/core/v1/settings/tenant/${other.id}`)).status).toBe(404);
  });

  it('POST /core/v1/api-key creates a key (id, name, roleType, key shown once) that works at once', async () => {
    const created = await createKey('ci deploy', 'Editor');
    expect(created.id).toMatch(UUID);
    expect(created.name).toBe('ci deploy');
    expect(created.roleType).toBe('Editor');
    expect(created.key).toMatch(/^mpk_[A-Za-z0-9_-]{43}$/);
    const presets = await as(created.key).call('GET', '/transcoder/v1/presets');
    expect(presets.status).toBe(200);
    // The secret is never shown again: neither the single key nor the list carries it.
    const single = await t.json('GET', `/core/v1/api-key/${created.id}`);
    expect(single.body).not.toHaveProperty('key');
    expect(JSON.stringify((await t.json('GET', '/core/v1/api-key')).body)).not.toContain(created.key);
  });

  it('GET /core/v1/api-key lists keys with id, name, roleName, roleId, createdAt', async () => {
    const created = await createKey('list me', 'Viewer');
    const res = await t.json('GET', '/core/v1/api-key?query=list%20me');
    expect(res.status).toBe(200);
    expect(res.body.totalCount).toBe(1);
    const [item] = res.body.items;
    expect(item.id).toBe(created.id);
    expect(item.name).toBe('list me');
    expect(item.roleName).toBe('Viewer');
    expect(item.roleId).toBe(ROLE_IDS.Viewer);
    expect(item.createdAt).toMatch(ISO_UTC);
    expect(Math.abs(Date.parse(item.createdAt) - Date.now())).toBeLessThan(60_000);
  });

  it('GET /core/v1/api-key/{id} answers id, name, roleId', async () => {
    const created = await createKey('single', 'Admin');
    const res = await t.json('GET', `/core/v1/api-key/${created.id}`);
    expect(res.status).toBe(200);
    expect(res.body.id).toBe(created.id);
    expect(res.body.name).toBe('single');
    expect(res.body.roleId).toBe(ROLE_IDS.Admin);
    const upper = await t.json('GET', `/core/v1/api-key/${created.id.toUpperCase()}`);
    expect(upper.body.id).toBe(created.id);
  });

  it('PUT /core/v1/api-key/{id} renames and changes the role (id, name, roleType), and the new role applies at once', async () => {
    const created = await createKey('before', 'Admin');
    const res = await t.json('PUT', `/core/v1/api-key/${created.id}`, { name: 'after', roleType: 'Viewer' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: created.id, name: 'after', roleType: 'Viewer' });
    const single = await t.json('GET', `/core/v1/api-key/${created.id}`);
    expect(single.body.name).toBe('after');
    expect(single.body.roleId).toBe(ROLE_IDS.Viewer);
    const demoted = await as(created.key).json('GET', '/core/v1/api-key');
    expect(demoted.status).toBe(403);
    expect(demoted.body.status.code).toBe('forbidden');
  });

  it('DELETE /core/v1/api-key/{id} answers 204 with no body, and the deleted key stops working at once', async () => {
    const created = await createKey('doomed', 'Admin');
    const self = as(created.key);
    expect((await self.call('GET', '/core/v1/api-key')).status).toBe(200);
    const res = await self.call('DELETE', `/core/v1/api-key/${created.id}`);
    expect(res.status).toBe(204);
    expect(await res.text()).toBe('');
    const after = await self.json('GET', '/transcoder/v1/presets');
    expect(after.status).toBe(401);
    expect(after.body.status.code).toBe('invalid_api_key');
    expect((await t.json('GET', `/core/v1/api-key/${created.id}`)).status).toBe(404);
    const again = await t.json('DELETE', `/core/v1/api-key/${created.id}`);
    expect(again.status).toBe(404);
    expect(again.body.status.code).toBe('api_key_not_found');
  });

  it('accepts DELETE with a JSON Content-Type and an empty body', async () => {
    const created = await createKey('empty body', 'Viewer');
    const res = await t.call('DELETE', `/core/v1/api-key/${created.id}`, undefined, { 'content-type': 'application/json' });
    expect(res.status).toBe(204);
  });

  it('refuses to delete or demote the last Admin key (409 last_admin_key), allows it once another exists', async () => {
    const solo = await p.createTenant();
    const [first] = (await solo.json('GET', '/core/v1/api-key')).body.items;
    expect(first.roleName).toBe('Admin');
    const del = await solo.json('DELETE', `/core/v1/api-key/${first.id}`);
    expect(del.status).toBe(409);
    expect(del.body.status.code).toBe('last_admin_key');
    const demote = await solo.json('PUT', `/core/v1/api-key/${first.id}`, { name: 'x', roleType: 'Editor' });
    expect(demote.status).toBe(409);
    expect(demote.body.status.code).toBe('last_admin_key');
    const rename = await solo.json('PUT', `/core/v1/api-key/${first.id}`, { name: 'renamed', roleType: 'Admin' });
    expect(rename.status).toBe(200);
    const second = await solo.json('POST', '/core/v1/api-key', { name: 'second', roleType: 'Admin' });
    expect((await solo.call('DELETE', `/core/v1/api-key/${first.id}`)).status).toBe(204);
    const viaSecond = p.client(solo.id, solo.name, second.body.key);
    expect((await viaSecond.json('GET', '/core/v1/api-key')).body.totalCount).toBe(1);
  });

  it('validates bodies: bad roleType, missing or empty name, wrong types, with the field named', async () => {
    const cases: [unknown, string, string][] = [
      [{ name: 'x', roleType: 'Owner' }, 'roleType', 'must be one of Admin, Editor, Viewer'],
      [{ name: 'x', roleType: 'admin' }, 'roleType', 'must be one of Admin, Editor, Viewer'],
      [{ roleType: 'Admin' }, 'name', 'is required'],
      [{ name: 'x' }, 'roleType', 'is required'],
      [{ name: '', roleType: 'Admin' }, 'name', 'must not be empty'],
      [{ name: 'x'.repeat(257), roleType: 'Admin' }, 'name', 'must be at most 256 characters long'],
      [{ name: { a: 1 }, roleType: 'Admin' }, 'name', 'must be a string'],
      [[], 'body', 'must be an object'],
    ];
    for (const [body, field, message] of cases) {
      for (const [method, path] of [
        ['POST', '/core/v1/api-key'],
        ['PUT', `/core/v1/api-key/00000000-0000-0000-0000-000000000000`],
      ]) {
        const res = await t.json(method, path, body);
        expect(res.status, `${method} ${JSON.stringify(body)}`).toBe(400);
        expect(res.body.status.code).toBe('validation_failed');
        expect(res.body.status.status).toBe(400);
        expect(res.body.errors).toContainEqual({ field, message });
      }
    }
  });

  it('answers 404 api_key_not_found for unknown ids and 400 naming id for non-uuid ids', async () => {
    const unknown = '00000000-0000-0000-0000-000000000000';
    for (const [method, body] of [['GET'], ['PUT', { name: 'x', roleType: 'Admin' }], ['DELETE']] as const) {
      const res = await t.json(method, `/core/v1/api-key/${unknown}`, body);
      expect(res.status).toBe(404);
      expect(res.body.status).toEqual({ code: 'api_key_not_found', status: 404, message: `API key ${unknown} was not found` });
      const bad = await t.json(method, '/core/v1/api-key/not-a-uuid', body);
      expect(bad.status).toBe(400);
      expect(bad.body.errors).toEqual([{ field: 'id', message: 'must be a uuid' }]);
    }
  });

  it('refuses unknown body properties, naming each, and creates nothing (issue 25, item 5)', async () => {
    const res = await t.json('POST', '/core/v1/api-key', { name: 'extra', roleType: 'Viewer', color: 'blue', nested: { a: 1 } });
    expect(res.status).toBe(400);
    expect(res.body.status.code).toBe('validation_failed');
    expect(res.body.errors).toEqual([
      { field: 'color', message: 'is not allowed here' },
      { field: 'nested', message: 'is not allowed here' },
    ]);
    const keys = await t.json('GET', '/core/v1/api-key?limit=1000');
    expect(keys.body.items.map((k: { name: string }) => k.name)).not.toContain('extra');
  });

  it('keys are stored hashed: the secret appears nowhere in the database', async () => {
    const created = await createKey('hashed', 'Viewer');
    const { rows } = await p.database.executeSql('select key_hash from api_keys where id = $1', [created.id]);
    expect(rows[0].key_hash).toMatch(/^[0-9a-f]{64}$/);
    const { rows: found } = await p.database.executeSql('select count(*)::int as n from api_keys where key_hash = $1 or name = $1', [created.key]);
    expect(found[0].n).toBe(0);
  });
});

describeEachDb('Roles', (kind) => {
  let p: TestPlatform;
  let t: TestTenant;
  const keys: Record<string, TestTenant> = {};

  beforeAll(async () => {
    p = await startInProcess(kind);
    t = await p.createTenant();
    for (const role of ['Admin', 'Editor', 'Viewer']) {
      const res = await t.json('POST', '/core/v1/api-key', { name: role, roleType: role });
      keys[role] = p.client(t.id, t.name, res.body.key);
    }
  });
  afterAll(() => p.stop());

  it('Admin manages keys, reads presets and the tenant status', async () => {
    const admin = keys.Admin;
    expect((await admin.call('GET', '/core/v1/api-key')).status).toBe(200);
    const created = await admin.json('POST', '/core/v1/api-key', { name: 'by admin', roleType: 'Viewer' });
    expect(created.status).toBe(200);
    expect((await admin.call('GET', `/core/v1/api-key/${created.body.id}`)).status).toBe(200);
    expect((await admin.call('PUT', `/core/v1/api-key/${created.body.id}`, { name: 'y', roleType: 'Viewer' })).status).toBe(200);
    expect((await admin.call('DELETE', `/core/v1/api-key/${created.body.id}`)).status).toBe(204);
    expect((await admin.call('GET', '/transcoder/v1/presets')).status).toBe(200);
    expect((await admin.call('GET', `/core/v1/settings/tenant/${t.id}/status`)).status).toBe(200);
  });

  for (const role of ['Editor', 'Viewer']) {
    it(`${role} gets 403 forbidden on every key operation, and reads presets and the tenant status`, async () => {
      const client = keys[role];
      const [any] = (await t.json('GET', '/core/v1/api-key')).body.items;
      const ops: [string, string, unknown?][] = [
        ['GET', '/core/v1/api-key'],
        ['POST', '/core/v1/api-key', { name: 'x', roleType: 'Admin' }],
        ['GET', `/core/v1/api-key/${any.id}`],
        ['PUT', `/core/v1/api-key/${any.id}`, { name: 'x', roleType: 'Admin' }],
        ['DELETE', `/core/v1/api-key/${any.id}`],
      ];
      for (const [method, path, body] of ops) {
        const res = await client.json(method, path, body);
        expect(res.status, `${role} ${method} ${path}`).toBe(403);
        expect(res.body.status).toEqual({
          code: 'forbidden',
          status: 403,
          message: `The ${role} role does not allow this operation (needs manage)`,
        });
      }
      expect((await client.call('GET', '/transcoder/v1/presets')).status).toBe(200);
      const status = await client.json('GET', `/core/v1/settings/tenant/${t.id}/status`);
      expect(status.body.status).toBe('Active');
      // Nothing was changed by the refused calls.
      expect((await t.json('GET', `/core/v1/api-key/${any.id}`)).body.name).toBe(any.name);
    });
  }
});
