import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDb, startInProcess, type TestPlatform, type TestTenant } from './helpers/platform.ts';

/** API keys are the collection: the tenant's first key plus `extra` named ones. */
describeEachDb('Paging contract', (kind) => {
  let p: TestPlatform;
  let t: TestTenant;
  const names = ['delta', 'alpha', 'echo', 'charlie', 'bravo', 'foxtrot', 'golf'];

  beforeAll(async () => {
    p = await startInProcess(kind);
    t = await p.createTenant();
    // One by one, so that creation order (CreatedAt) is the order of `names`.
    for (const name of names) expect((await t.json('POST', '/core/v1/api-key', { name: `key ${name}`, roleType: 'Viewer' })).status).toBe(200);
  });
  afterAll(() => p.stop());

  const list = async (qs: string) => {
    const res = await t.json('GET', `/core/v1/api-key?${qs}`);
    expect(res.status, qs).toBe(200);
    return res.body;
  };
  const envelopeOf = (b: any) => ({
    totalCount: b.totalCount,
    pageCount: b.pageCount,
    pageSize: b.pageSize,
    pageNumber: b.pageNumber,
    hasMore: b.hasMore,
    n: b.items.length,
  });

  it('an empty result: totalCount 0, pageCount 0, hasMore false', async () => {
    expect(envelopeOf(await list('query=nothing-matches'))).toEqual({ totalCount: 0, pageCount: 0, pageSize: 100, pageNumber: 1, hasMore: false, n: 0 });
  });

  it('one item: one page', async () => {
    expect(envelopeOf(await list('query=alpha'))).toEqual({ totalCount: 1, pageCount: 1, pageSize: 100, pageNumber: 1, hasMore: false, n: 1 });
  });

  it('exactly one full page: pageCount 1, hasMore false', async () => {
    expect(envelopeOf(await list('limit=8'))).toEqual({ totalCount: 8, pageCount: 1, pageSize: 8, pageNumber: 1, hasMore: false, n: 8 });
  });

  it('many pages: hasMore until the last, partial last page, past the end empty', async () => {
    expect(envelopeOf(await list('limit=3'))).toEqual({ totalCount: 8, pageCount: 3, pageSize: 3, pageNumber: 1, hasMore: true, n: 3 });
    expect(envelopeOf(await list('limit=3&page=2'))).toEqual({ totalCount: 8, pageCount: 3, pageSize: 3, pageNumber: 2, hasMore: true, n: 3 });
    expect(envelopeOf(await list('limit=3&page=3'))).toEqual({ totalCount: 8, pageCount: 3, pageSize: 3, pageNumber: 3, hasMore: false, n: 2 });
    expect(envelopeOf(await list('limit=3&page=4'))).toEqual({ totalCount: 8, pageCount: 3, pageSize: 3, pageNumber: 4, hasMore: false, n: 0 });
    // The pages together are the whole collection, each item once.
    const all = [];
    for (let page = 1; page <= 3; page++) all.push(...(await list(`limit=3&page=${page}`)).items.map((k: any) => k.id));
    expect(new Set(all).size).toBe(8);
  });

  it('defaults: limit 100, page 1, sorted by CreatedAt ascending', async () => {
    const body = await list('');
    expect(body.pageSize).toBe(100);
    expect(body.pageNumber).toBe(1);
    expect(body.items.map((k: any) => k.name)).toEqual(['initial admin key', ...names.map((n) => `key ${n}`)]);
  });

  it('sort by Name and CreatedAt, ascending and desc (case-insensitive property names)', async () => {
    const sorted = ['initial admin key', ...names.map((n) => `key ${n}`)].sort();
    expect((await list('sort=Name')).items.map((k: any) => k.name)).toEqual(sorted);
    expect((await list('sort=name&desc=true')).items.map((k: any) => k.name)).toEqual([...sorted].reverse());
    const byCreated = (await list('sort=CreatedAt&desc=true')).items.map((k: any) => k.name);
    expect(byCreated).toEqual(['initial admin key', ...names.map((n) => `key ${n}`)].reverse());
    expect((await list('sort=CreateDate&desc=false')).items[0].name).toBe('initial admin key');
  });

  it('query is a case-insensitive substring search; % and _ are literal', async () => {
    expect((await list('query=KEY%20B')).items.map((k: any) => k.name)).toEqual(['key bravo']);
    expect((await list('query=o')).items.map((k: any) => k.name)).toEqual(['key echo', 'key bravo', 'key foxtrot', 'key golf']);
    expect((await list('query=%25')).totalCount).toBe(0);
    expect((await list('query=_')).totalCount).toBe(0);
    expect((await list('query=')).totalCount).toBe(8);
  });

  it('out-of-range, malformed and unknown paging values are 400 naming the field', async () => {
    const cases: [string, string, string][] = [
      ['limit=0', 'limit', 'must be at least 1'],
      ['limit=1001', 'limit', 'must be at most 1000'],
      ['limit=-5', 'limit', 'must be at least 1'],
      ['limit=abc', 'limit', 'must be an integer'],
      ['limit=1.5', 'limit', 'must be an integer'],
      ['page=0', 'page', 'must be at least 1'],
      ['page=1000001', 'page', 'must be at most 1000000'],
      ['page=x', 'page', 'must be an integer'],
      ['desc=maybe', 'desc', 'must be a boolean (true or false)'],
      [`query=${'q'.repeat(1025)}`, 'query', 'must be at most 1024 characters long'],
      ['sort=Color', 'sort', 'unknown sort property "Color"; allowed: CreatedAt, CreateDate, Name, RoleName'],
      ['sort=', 'sort', 'unknown sort property ""; allowed: CreatedAt, CreateDate, Name, RoleName'],
      ['query=a%00b', 'query', 'must not contain NUL (\\u0000) characters'],
    ];
    for (const [qs, field, message] of cases) {
      const res = await t.json('GET', `/core/v1/api-key?${qs}`);
      expect(res.status, qs).toBe(400);
      expect(res.body.status.code, qs).toBe('validation_failed');
      expect(res.body.errors, qs).toContainEqual({ field, message });
    }
  });

  it('unknown query parameters are ignored', async () => {
    expect((await list('color=blue&limit=2')).items).toHaveLength(2);
  });
});

describeEachDb('Error shape', (kind) => {
  let p: TestPlatform;
  let t: TestTenant;
  const auth = () => ({ 'x-api-key': t.key, 'x-tenant-id': t.id });
  const expectErrorShape = (text: string, status: number, code: string) => {
    const body = JSON.parse(text);
    expect(body.status.code).toBe(code);
    expect(body.status.status).toBe(status);
    expect(typeof body.status.message).toBe('string');
    expect(text).not.toMatch(/\bat .+:\d+:\d+|node_modules|\.ts:\d+/);
    return body;
  };

  beforeAll(async () => {
    p = await startInProcess(kind);
    t = await p.createTenant();
  });
  afterAll(() => p.stop());

  it('a wrong Content-Type on a JSON body is 415 unsupported_media_type', async () => {
    const body = JSON.stringify({ name: 'x', roleType: 'Viewer' });
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml', 'multipart/form-data; boundary=x']) {
      const res = await p.fetch(`${p.baseUrl}/core/v1/api-key`, { method: 'POST', headers: { ...auth(), 'content-type': type }, body });
      expect(res.status, type).toBe(415);
      expectErrorShape(await res.text(), 415, 'unsupported_media_type');
    }
    expect((await t.json('GET', '/core/v1/api-key')).body.totalCount).toBe(1);
    const withCharset = await p.fetch(`${p.baseUrl}/core/v1/api-key`, {
      method: 'POST',
      headers: { ...auth(), 'content-type': 'application/json; charset=utf-8' },
      body,
    });
    expect(withCharset.status).toBe(200);
  });

  it('malformed JSON is 400 malformed_body; a missing body is 400 naming body', async () => {
    for (const raw of ['{"name":', '{name: "x"}', 'nul', '{"__proto__": {"a": 1}}']) {
      const res = await p.fetch(`${p.baseUrl}/core/v1/api-key`, { method: 'POST', headers: { ...auth(), 'content-type': 'application/json' }, body: raw });
      expect(res.status, raw).toBe(400);
      expectErrorShape(await res.text(), 400, 'malformed_body');
    }
    const none = await p.fetch(`${p.baseUrl}/core/v1/api-key`, { method: 'POST', headers: auth() });
    expect(none.status).toBe(400);
    expect(expectErrorShape(await none.text(), 400, 'validation_failed').errors).toEqual([{ field: 'body', message: 'must be an object' }]);
  });

  it('a NUL character in a body is 400 naming the field, not a database error', async () => {
    const res = await t.json('POST', '/core/v1/api-key', { name: 'a\u0000b', roleType: 'Viewer' });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ field: 'name', message: 'must not contain NUL (\\u0000) characters' }]);
  });

  it('an unknown route is 404 route_not_found; a malformed URL escape is 400 malformed_url', async () => {
    const res = await p.fetch(`${p.baseUrl}/core/v1/nothing-here?x=1`, { headers: auth() });
    expect(res.status).toBe(404);
    expect(expectErrorShape(await res.text(), 404, 'route_not_found').status.message).toBe('No operation GET /core/v1/nothing-here');
    const wrongMethod = await p.fetch(`${p.baseUrl}/core/v1/api-key`, { method: 'PATCH', headers: auth() });
    expect(wrongMethod.status).toBe(404);
    const longId = await t.json('GET', `/core/v1/api-key/${'a'.repeat(200)}`);
    expect(longId.status).toBe(400);
    expect(longId.body.errors[0].field).toBe('id');
    const badUrl = await p.fetch(`${p.baseUrl}/core/v1/api-key/%zz`, { headers: auth() });
    expect(badUrl.status).toBe(400);
    expectErrorShape(await badUrl.text(), 400, 'malformed_url');
  });

  it('a body over 1 MiB is 413 payload_too_large', async () => {
    const res = await t.call('POST', '/core/v1/api-key', { name: 'x'.repeat(1_100_000), roleType: 'Viewer' });
    expect(res.status).toBe(413);
    expectErrorShape(await res.text(), 413, 'payload_too_large');
  });

  it('never answers a stack trace, even for hostile input', async () => {
    const hostile: unknown[] = [
      { name: 'x'.repeat(100_000), roleType: 'Viewer' },
      { name: ['a', 'b'], roleType: 'Viewer' },
      { name: null, roleType: null },
      { name: 'x', roleType: 'Viewer', constructor: { prototype: { admin: true } } },
    ];
    for (const body of hostile) {
      const res = await t.call('POST', '/core/v1/api-key', body);
      expect(res.status).toBeLessThan(500);
      const text = await res.text();
      expect(text).not.toMatch(/\bat .+:\d+:\d+|node_modules/);
    }
  });
});
