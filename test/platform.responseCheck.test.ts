import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerErrorHandling } from '../src/platform/errors.ts';
import { registerOpenApi } from '../src/platform/openapi.ts';
import { registerResponseCheck } from '../src/platform/responseCheck.ts';
import { ErrorBody, withErrors } from '../src/platform/schemas.ts';
import { describeEachDb, startInProcess, type TestPlatform, type TestTenant } from './helpers/platform.ts';

/**
 * Issue 25, item 10: the OpenAPI document says what the server answers. The response check (on in every test
 * platform) refuses an answer whose status, Content-Type or JSON body the document does not describe; and the
 * document's known untruths are fixed.
 */
describe('the response check', () => {
  let app: FastifyInstance;
  const doc = { tags: ['T'], summary: 'S', description: 'D' };
  const Thing = { type: 'object', properties: { kind: { type: 'string', enum: ['A'] } }, required: ['kind'] };

  beforeAll(async () => {
    app = Fastify();
    app.addSchema(ErrorBody);
    registerErrorHandling(app);
    await registerOpenApi(app, 'http://localhost');
    registerResponseCheck(app);
    app.get('/good', { schema: { ...doc, summary: 'good', response: withErrors({ 200: Thing as never }) } }, async () => ({ kind: 'A' }));
    app.get('/bad-value', { schema: { ...doc, summary: 'bad value', response: withErrors({ 200: Thing as never }) } }, async () => ({ kind: 'B' }));
    app.get('/bad-status', { schema: { ...doc, summary: 'bad status', response: withErrors({ 200: Thing as never }) } }, async (_r, reply) =>
      reply.code(410 as 404).send({ status: { code: 'c', status: 410, message: 'm' } }),
    );
    app.get('/bad-type', { schema: { ...doc, summary: 'bad type', response: withErrors({ 200: Thing as never }) } }, async (_r, reply) =>
      reply.type('image/png').send(Buffer.from('png')),
    );
    app.get('/documented-error', { schema: { ...doc, summary: 'documented error', response: withErrors({ 200: Thing as never }) } }, async (_r, reply) =>
      reply.code(404).send({ status: { code: 'c', status: 404, message: 'm' } }),
    );
    await app.ready();
  });
  afterAll(() => app?.close());

  const get = async (url: string) => {
    const res = await app.inject({ method: 'GET', url });
    return { status: res.statusCode, body: res.json() };
  };

  it('lets documented answers through', async () => {
    expect(await get('/good')).toEqual({ status: 200, body: { kind: 'A' } });
    expect((await get('/documented-error')).status).toBe(404);
  });

  it('refuses a status, a Content-Type or a JSON body the document does not describe', async () => {
    for (const [url, words] of [
      ['/bad-value', 'does not match its documented schema'],
      ['/bad-status', 'status 410 is not documented'],
      ['/bad-type', 'documented as application/json, answered image/png'],
    ]) {
      const res = await get(url);
      expect(res.status, url).toBe(500);
      expect(res.body.status.code).toBe('response_contract_violation');
      expect(res.body.status.message).toContain(words);
    }
  });
});

describeEachDb('OpenAPI truths', (kind) => {
  let p: TestPlatform;
  let t: TestTenant;
  let openapi: any;
  beforeAll(async () => {
    p = await startInProcess(kind);
    t = await p.createTenant();
    openapi = await (await p.fetch(`${p.baseUrl}/openapi.json`)).json();
  });
  afterAll(() => p?.stop());

  const bodyOf = (path: string, method = 'post') => openapi.paths[path][method].requestBody.content['application/json'].schema;

  it("the analytics queries' dimension is required, as the server says", async () => {
    expect(bodyOf('/streaming/v1/analytics/queries/count').required).toContain('dimension');
    const res = await t.json('POST', '/streaming/v1/analytics/queries/count', {});
    expect(res.status).toBe(400);
    expect(res.body.errors).toContainEqual({ field: 'dimension', message: 'is required' });
    expect(bodyOf('/streaming/v1/analytics/metrics/max_concurrentviewers').required ?? []).not.toContain('dimension');
  });

  it('the QR code is documented as the image/png it is', async () => {
    expect(Object.keys(openapi.paths['/streaming/v1/qrcode/{id}'].get.responses['200'].content)).toEqual(['image/png']);
  });

  it("an overlay's startTime says its forms, on VOD and on the recorder", () => {
    const vod = bodyOf('/vod/v1/assets').properties.overlays.items.properties.startTime.description;
    const recorder = bodyOf('/cvr/v1/recordings').properties.overlays.items.properties.startTime.description;
    for (const d of [vod, recorder]) for (const form of ['milliseconds', 'HH:MM:SS.mmm', 'HH:MM:SS:FF']) expect(d).toContain(form);
  });

  it('every operation documents a 2xx (or 3xx) and a 4xx answer', () => {
    const lacking: string[] = [];
    for (const [path, item] of Object.entries<any>(openapi.paths)) {
      for (const [method, op] of Object.entries<any>(item)) {
        const codes = Object.keys(op.responses ?? {});
        if (!codes.some((c) => /^[23]/.test(c))) lacking.push(`${method.toUpperCase()} ${path}: no 2xx`);
        if (!codes.some((c) => /^4/.test(c))) lacking.push(`${method.toUpperCase()} ${path}: no 4xx`);
      }
    }
    expect(lacking).toEqual([]);
  });
});
