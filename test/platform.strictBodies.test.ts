import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDb, startInProcess, type TestPlatform, type TestTenant } from './helpers/platform.ts';

/**
 * Issue 25, item 5: an unknown property in a JSON body is a 400 naming it, not a 200 that ignored it, and a property
 * that exists but cannot be changed after creation is a 400 that says so. Query strings stay lenient.
 */
describeEachDb('Strict request bodies', (kind) => {
  let p: TestPlatform;
  let t: TestTenant;
  const missing = '0190b0a0-0000-7000-8000-000000000000';

  const expectRefused = (res: { status: number; body: any }, field: string, message: string) => {
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.status.code).toBe('validation_failed');
    expect(res.body.errors, JSON.stringify(res.body)).toContainEqual({ field, message });
  };

  beforeAll(async () => {
    p = await startInProcess(kind);
    t = await p.createTenant();
  });
  afterAll(() => p?.stop());

  const channel = { name: 'strict', input: { inputLoss: { type: 'COLOR' } } };

  it('a misspelt property on create is refused, naming it, and nothing is created', async () => {
    const res = await t.json('POST', '/live/v1/channels', { ...channel, latencyy: 'ReducedLatency' });
    expectRefused(res, 'latencyy', 'is not allowed here');
    expect((await t.json('GET', '/live/v1/channels')).body.totalCount).toBe(0);
  });

  it('names each unknown property, nested ones by their path', async () => {
    const res = await t.json('POST', '/live/v1/channels', { ...channel, colour: 1, input: { inputLoss: { type: 'COLOR', colr: '#000000' } } });
    expectRefused(res, 'colour', 'is not allowed here');
    expectRefused(res, 'input.inputLoss.colr', 'is not allowed here');
  });

  it('a property fixed at creation is refused on PATCH with a 400 that says so, and the channel is unchanged', async () => {
    const created = await t.json('POST', '/live/v1/channels', channel);
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const res = await t.json('PATCH', `/live/v1/channels/${created.body.id}`, { latency: 'ReducedLatency', name: 'renamed' });
    expectRefused(res, 'latency', 'cannot be changed after creation');
    expect(res.body.errors).toHaveLength(1);
    const after = await t.json('GET', `/live/v1/channels/${created.body.id}`);
    expect(after.body.name).toBe('strict');
    expect((await t.json('PATCH', `/live/v1/channels/${created.body.id}`, { name: 'renamed' })).status).toBe(200);
  });

  it('PATCH of a VOD asset with a misspelt title is refused', async () => {
    expectRefused(await t.json('PATCH', `/vod/v1/assets/${missing}`, { titel: 'x' }), 'titel', 'is not allowed here');
    expectRefused(await t.json('PATCH', `/vod/v1/assets/${missing}`, { preset: 'x' }), 'preset', 'cannot be changed after creation');
  });

  it('admin: a tenant is not renamed, and says so', async () => {
    const res = await p.admin('PATCH', `/admin/v1/tenants/${t.id}`, { name: 'other', id: 'x' });
    const body = await res.json();
    expectRefused({ status: res.status, body }, 'name', 'cannot be changed after creation');
    expectRefused({ status: res.status, body }, 'id', 'is not allowed here');
  });

  it('maps (metadata) still take any key, and query strings stay lenient', async () => {
    const created = await t.json('POST', '/live/v1/channels', { ...channel, metadata: { anything: 'goes' } });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect((await t.json('GET', '/live/v1/channels?utm_source=x&_=123')).status).toBe(200);
  });

  it('the OpenAPI document says so: every object of every request body is closed or a declared map', async () => {
    const doc = await (await p.fetch(`${p.baseUrl}/openapi.json`)).json();
    const open: string[] = [];
    const walk = (s: any, where: string) => {
      if (!s || typeof s !== 'object') return;
      if (Array.isArray(s)) return s.forEach((x, i) => walk(x, `${where}[${i}]`));
      if ((s.type === 'object' || s.properties) && s.additionalProperties === undefined && !s.patternProperties) open.push(where);
      for (const [k, v] of Object.entries(s)) walk(v, `${where}.${k}`);
    };
    let bodies = 0;
    for (const [path, item] of Object.entries<any>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(item)) {
        const schema = op.requestBody?.content?.['application/json']?.schema;
        if (schema) bodies++;
        walk(schema, `${method.toUpperCase()} ${path}`);
      }
    }
    expect(bodies).toBeGreaterThan(40);
    expect(open).toEqual([]);
    const patch = doc.paths['/live/v1/channels/{id}'].patch.requestBody.content['application/json'].schema;
    expect(patch.additionalProperties).toBe(false);
    expect(patch.description).toContain('`latency`');
    expect(JSON.stringify(doc)).not.toContain('fixedProperties');
  });
});
