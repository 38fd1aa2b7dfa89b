import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { uploadFile } from './helpers/files.ts';
import { makeClip, tempDir } from './helpers/media.ts';
import { describeEachDb, startPlatform, type TestPlatform, type TestTenant } from './helpers/platform.ts';
import { WebhookReceiver } from './helpers/webhookReceiver.ts';

/**
 * Hostile input the platform layer refuses for every module: each answer is a 4xx in the one error shape, never a
 * 500, a hang or another shape, and the server keeps answering.
 */

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Sends raw bytes on a fresh connection (parts as separate TCP segments) and reads the answer until the server closes it. */
function rawExchange(baseUrl: string, request: string | string[]): Promise<RawAnswer> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname === 'localhost' ? '127.0.0.1' : hostname);
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => (socket.destroy(), reject(new Error('no answer within 10 s'))), 10_000);
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', () => {}); // A reset after the answer is the server closing, as it must.
    socket.on('close', () => {
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString('utf8');
      const split = text.indexOf('\r\n\r\n');
      if (split < 0) return reject(new Error(`no HTTP answer: ${JSON.stringify(text.slice(0, 200))}`));
      const [statusLine, ...lines] = text.slice(0, split).split('\r\n');
      const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body: text.slice(split + 4) });
    });
    void (async () => {
      for (const part of [request].flat()) {
        socket.write(part);
        await new Promise((r) => setTimeout(r, 50)); // on purpose: each part its own TCP segment
      }
    })();
  });
}

/** Asserts the one error shape and returns the body. */
function expectError(body: any, status: number, code: string) {
  expect(body?.status, JSON.stringify(body)).toEqual({ code, status, message: expect.any(String) });
  return body;
}

/** A 400 validation failure naming `field`. */
function expectInvalid(res: { status: number; body: any }, field: string, what = '') {
  expect(res.status, `${what} ${JSON.stringify(res.body)}`).toBe(400);
  expectError(res.body, 400, 'validation_failed');
  expect(
    res.body.errors.map((e: { field: string }) => e.field),
    what,
  ).toContain(field);
}

const LISTS = [
  '/core/v1/api-key',
  '/transcoder/v1/presets',
  '/vod/v1/files',
  '/vod/v1/assets',
  '/notifications/v1/webhook',
  '/notifications/v1/webhook-events',
];

describeEachDb('Hostile input, platform-wide', (kind) => {
  const media = tempDir();
  let p: TestPlatform;
  let t: TestTenant;
  let receiver: WebhookReceiver;
  let assetId: string;
  let fileId: string;
  let webhookId: string;

  /** The server still answers a plain request. */
  const stillAnswers = async () => expect((await t.json('GET', '/core/v1/api-key')).status).toBe(200);
  const post = (path: string, raw: string) =>
    fetch(p.baseUrl + path, { method: 'POST', headers: { 'x-api-key': t.key, 'x-tenant-id': t.id, 'content-type': 'application/json' }, body: raw }).then(
      async (res) => ({ status: res.status, body: await res.json() }),
    );
  const authHeaders = () => `Host: ${new URL(p.baseUrl).host}\r\nX-Api-Key: ${t.key}\r\nX-Tenant-Id: ${t.id}\r\nConnection: close\r\n`;

  beforeAll(async () => {
    [p, receiver] = await Promise.all([startPlatform(kind, { MEDIAPLANE_WEBHOOK_ALLOW_PRIVATE: 'true' }), WebhookReceiver.start()]);
    t = await p.createTenant();
    // A source that is not media is refused when an asset is made from it: a tiny real clip.
    fileId = (await uploadFile(t, 'tiny.mp4', readFileSync(await makeClip(media.dir, 'tiny', { width: 64, height: 36, seconds: 1, audio: [] })))).fileId;
    const asset = await t.json('POST', '/vod/v1/assets', { transcodedSources: [{ fileId }], preset: 'remux-hls-mp4' });
    expect(asset.status, JSON.stringify(asset.body)).toBe(200);
    assetId = asset.body.id;
    const hook = await t.json('POST', '/notifications/v1/webhook', { name: 'hostile', url: receiver.url, eventTypes: ['webhook.test'] });
    expect(hook.status, JSON.stringify(hook.body)).toBe(200);
    webhookId = hook.body.id;
  });
  afterAll(async () => {
    await receiver?.close();
    await p?.stop();
    media.cleanup();
  });

  it('1. a leap second (23:59:60), which JavaScript cannot read, is 400 naming the field', async () => {
    const leap = '2020-01-01T23:59:60Z';
    expectInvalid(await t.json('GET', `/vod/v1/files?createDateStart=${leap}`), 'createDateStart');
    expectInvalid(await t.json('GET', `/vod/v1/assets?lastModificationDateEnd=${leap}`), 'lastModificationDateEnd');
    expectInvalid(await t.json('GET', `/notifications/v1/webhook-events?start=${leap}`), 'start');
    const output = await t.json('POST', `/vod/v1/assets/${assetId}/outputs`, { preset: 'remux-hls-mp4', expirationDate: '2099-12-31T23:59:60Z' });
    expectInvalid(output, 'expirationDate');
    // The second before is a date like any other.
    expect((await t.json('GET', `/vod/v1/files?createDateStart=2020-01-01T23:59:59Z`)).status).toBe(200);
    await stillAnswers();
  });

  it('2. dates outside years 0001-9999 once in UTC (PostgreSQL has no year 0) are 400 naming the field', async () => {
    for (const date of ['0000-01-01T00:00:00Z', '0001-01-01T00:00:00+14:00', '9999-12-31T23:59:59-14:00']) {
      const q = encodeURIComponent(date);
      expectInvalid(await t.json('GET', `/vod/v1/files?createDateEnd=${q}`), 'createDateEnd', date);
      expectInvalid(await t.json('GET', `/vod/v1/assets?createDateStart=${q}`), 'createDateStart', date);
      expectInvalid(await t.json('GET', `/notifications/v1/webhook-events?start=${q}`), 'start', date);
      expectInvalid(await t.json('GET', `/notifications/v1/webhook-events?end=${q}`), 'end', date);
    }
    expectInvalid(
      await t.json('POST', `/vod/v1/assets/${assetId}/outputs`, { preset: 'remux-hls-mp4', expirationDate: '9999-12-31T23:59:59-14:00' }),
      'expirationDate',
    );
    // The first and last instants of the range are accepted.
    for (const date of ['0001-01-01T00:00:00Z', '9999-12-31T23:59:59.999Z', '0001-01-01T00:00:00-01:00']) {
      const q = encodeURIComponent(date);
      expect((await t.json('GET', `/vod/v1/assets?createDateStart=${q}&createDateEnd=${q}`)).status, date).toBe(200);
      expect((await t.json('GET', `/notifications/v1/webhook-events?start=${q}`)).status, date).toBe(200);
    }
    await stillAnswers();
  });

  it('3. Infinity, 1e309 and integers beyond the column are 400 naming the parameter, on every list', async () => {
    for (const value of ['Infinity', '-Infinity', '1e309', '-1e309']) {
      for (const path of LISTS) expectInvalid(await t.json('GET', `${path}?limit=${value}`), 'limit', `${path} ${value}`);
      expectInvalid(await t.json('GET', `/core/v1/api-key?page=${value}`), 'page', value);
      const admin = await p.admin('GET', `/admin/v1/tenants?limit=${value}`);
      expectInvalid({ status: admin.status, body: await admin.json() }, 'limit', `admin ${value}`);
      expectInvalid(await t.json('GET', `/vod/v1/assets?durationFrom=${value}`), 'durationFrom', value);
      expectInvalid(await t.json('GET', `/vod/v1/assets?durationTo=${value}`), 'durationTo', value);
      expectInvalid(await t.json('GET', `/vod/v1/files/${fileId}/part/${value}`), 'partNumber', value);
    }
    expectInvalid(await t.json('GET', '/vod/v1/assets?durationFrom=9223372036854775808'), 'durationFrom');
    expectInvalid(await t.json('GET', '/vod/v1/assets?durationTo=9223372036854775808'), 'durationTo');
    expect((await t.json('GET', `/vod/v1/assets?durationFrom=0&durationTo=${Number.MAX_SAFE_INTEGER}`)).status).toBe(200);
    await stillAnswers();
  });

  it('4. urn:uuid:<uuid> is a malformed id like any other, answered as `abc` is (400 naming the field)', async () => {
    const urn = 'urn:uuid:0190b0a0-0000-7000-8000-000000000000';
    const ops: [string, string, unknown?][] = [
      ['GET', '/core/v1/api-key/{id}'],
      ['PUT', '/core/v1/api-key/{id}', { name: 'x', roleType: 'Viewer' }],
      ['DELETE', '/core/v1/api-key/{id}'],
      ['GET', '/notifications/v1/webhook/{id}'],
      ['PATCH', '/notifications/v1/webhook/{id}', { name: 'y' }],
      ['DELETE', '/notifications/v1/webhook/{id}'],
      ['POST', '/notifications/v1/webhook/{id}/test'],
      ['GET', '/vod/v1/files/{id}'],
      ['GET', '/vod/v1/assets/{id}'],
    ];
    for (const [method, path, body] of ops) {
      const [withUrn, withAbc] = [await t.json(method, path.replace('{id}', urn), body), await t.json(method, path.replace('{id}', 'abc'), body)];
      expectInvalid(withUrn, 'id', `${method} ${path}`);
      expect(withUrn.body.errors, `${method} ${path}`).toEqual(withAbc.body.errors);
    }
    expectInvalid(await t.json('GET', `/notifications/v1/webhook-events?webhookId=${urn}`), 'webhookId');
    const source = { transcodedSources: [{ fileId }], preset: 'remux-hls-mp4' };
    expectInvalid(await t.json('POST', '/vod/v1/assets', { ...source, distributionInfo: { accessPolicyId: urn } }), 'distributionInfo.accessPolicyId');
    expectInvalid(await t.json('PATCH', `/vod/v1/assets/${assetId}`, { accessPolicyId: urn }), 'accessPolicyId');
    // The plain form, upper case included, is still a uuid.
    expect((await t.json('GET', `/notifications/v1/webhook/${webhookId.toUpperCase()}`)).status).toBe(200);
    await stillAnswers();
  });

  it('5. JSON nested far deeper than any schema is a 400 (or ignored), never a stack overflow', async () => {
    for (const depth of [8_000, 200_000]) {
      const deep = '['.repeat(depth) + ']'.repeat(depth);
      expectInvalid(await post('/core/v1/api-key', `{"name":${deep},"roleType":"Viewer"}`), 'name', `depth ${depth}`);
      expectInvalid(await post('/vod/v1/assets', `{"transcodedSources":${deep},"preset":"remux-hls-mp4"}`), 'transcodedSources[0]', `depth ${depth}`);
      expectInvalid(await post('/notifications/v1/webhook', `{"name":"n","url":"${receiver.url}","eventTypes":${deep}}`), 'eventTypes[0]', `depth ${depth}`);
    }
    // An unknown property is refused however deep its value nests (issue 25, item 5), naming the property.
    const deep = `${'{"a":'.repeat(8_000)}"x"${'}'.repeat(8_000)}`;
    expectInvalid(await post('/core/v1/api-key', `{"name":"deep","roleType":"Viewer","extra":${deep}}`), 'extra', 'deep extra');
    const nul = await post('/core/v1/api-key', `{"name":"deep","roleType":"Viewer","extra":${deep.replace('"x"', '"\\u0000"')}}`);
    expectInvalid(nul, `extra${'.a'.repeat(8_000)}`);
    await stillAnswers();
  });

  it('6. a lone UTF-16 surrogate in any string or key is 400 naming the field, before it reaches jsonb', async () => {
    const cases: [string, string, string][] = [
      ['/core/v1/api-key', '{"name":"\\ud800","roleType":"Viewer"}', 'name'],
      ['/vod/v1/files/start', '{"name":"\\ud800.mp4","friendlyName":"f","fileSize":10}', 'name'],
      ['/vod/v1/files/start', '{"name":"a.mp4","friendlyName":"f","fileSize":10,"metadata":{"a":"\\udc00x"}}', 'metadata.a'],
      ['/vod/v1/files/start', '{"name":"a.mp4","friendlyName":"f","fileSize":10,"tags":["ok","\\ud83d"]}', 'tags[1]'],
      ['/notifications/v1/webhook', `{"name":"a\\udfffb","url":"${receiver.url}","eventTypes":["webhook.test"]}`, 'name'],
    ];
    for (const [path, raw, field] of cases) {
      const res = await post(path, raw);
      expectInvalid(res, field, raw);
      expect(res.body.errors).toContainEqual({ field, message: expect.stringContaining('well-formed Unicode') });
    }
    const key = await post('/vod/v1/files/start', '{"name":"a.mp4","friendlyName":"f","fileSize":10,"metadata":{"\\ud800":"v"}}');
    expect(key.status).toBe(400);
    expect(key.body.errors[0].message).toContain('well-formed Unicode');
    // A surrogate pair is one character (an emoji), and welcome.
    expect((await post('/core/v1/api-key', '{"name":"key \\ud83d\\ude00","roleType":"Viewer"}')).status).toBe(200);
    await stillAnswers();
  });

  it('7. requests the HTTP layer refuses are answered in the one shape, HEAD without a body, then closed', async () => {
    const badHeader = await rawExchange(p.baseUrl, `GET /healthz HTTP/1.1\r\n${authHeaders()}Bad Header: y\r\n\r\n`);
    expect(badHeader.status).toBe(400);
    expectError(JSON.parse(badHeader.body), 400, 'bad_request');
    expect(badHeader.headers.connection).toBe('close');

    const big = `X-Big: ${'a'.repeat(17_000)}\r\n`;
    const bigHeader = await rawExchange(p.baseUrl, `GET /core/v1/api-key HTTP/1.1\r\n${authHeaders()}${big}\r\n`);
    expect(bigHeader.status).toBe(431);
    expect(bigHeader.headers['content-type']).toMatch(/^application\/json/);
    expectError(JSON.parse(bigHeader.body), 431, 'request_header_fields_too_large');

    const bigUrl = await rawExchange(p.baseUrl, `GET /core/v1/api-key?q=${'a'.repeat(17_000)} HTTP/1.1\r\n${authHeaders()}\r\n`);
    expect(bigUrl.status).toBe(431);
    expectError(JSON.parse(bigUrl.body), 431, 'request_header_fields_too_large');

    // HEAD: no body, whether the request line comes in the refused segment, an earlier one, or after another request.
    const heads = [
      `HEAD /core/v1/api-key HTTP/1.1\r\n${authHeaders()}${big}\r\n`,
      [`HEAD /core/v1/api-key HTTP/1.1\r\n${authHeaders()}`, `${big}\r\n`],
      `GET /healthz HTTP/1.1\r\nHost: x\r\n\r\nHEAD /core/v1/api-key HTTP/1.1\r\n${authHeaders()}${big}\r\n`,
    ];
    for (const request of heads) {
      const head = await rawExchange(p.baseUrl, request);
      expect(head.status).toBe(431);
      expect(head.headers['content-length']).toBe('0');
      expect(head.body).toBe('');
    }

    const noHost = await rawExchange(p.baseUrl, 'GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n');
    expect(noHost.status).toBe(400);
    expectError(JSON.parse(noHost.body), 400, 'bad_request');
    const headNoHost = await rawExchange(p.baseUrl, 'HEAD /healthz HTTP/1.1\r\nConnection: close\r\n\r\n');
    expect(headNoHost.status).toBe(400);
    expect(headNoHost.body).toBe('');
    // HTTP/1.0 needs no Host.
    expect((await rawExchange(p.baseUrl, 'GET /healthz HTTP/1.0\r\n\r\n')).status).toBe(200);
    await stillAnswers();
  });

  it('8. an empty chunked body without Content-Type is no body: a body-less operation runs', async () => {
    const chunked = (path: string, headers: string, body: string) =>
      rawExchange(p.baseUrl, `POST ${path} HTTP/1.1\r\n${authHeaders()}${headers}Transfer-Encoding: chunked\r\n\r\n${body}`);
    const tested = await chunked(`/notifications/v1/webhook/${webhookId}/test`, '', '0\r\n\r\n');
    expect(tested.status, tested.body).toBe(200);
    expect(JSON.parse(tested.body).responseCode).toBe(200);
    expect(receiver.ofType('webhook.test')).toHaveLength(1);
    // An operation that needs a body says so; a body that is not JSON is still 415.
    const noBody = await chunked('/core/v1/api-key', '', '0\r\n\r\n');
    expect(noBody.status).toBe(400);
    expect(expectError(JSON.parse(noBody.body), 400, 'validation_failed').errors).toEqual([{ field: 'body', message: 'must be an object' }]);
    const untyped = await chunked('/core/v1/api-key', '', '2\r\n{}\r\n0\r\n\r\n');
    expect(untyped.status).toBe(415);
    expectError(JSON.parse(untyped.body), 415, 'unsupported_media_type');
    const text = await chunked(`/notifications/v1/webhook/${webhookId}/test`, 'Content-Type: text/plain\r\n', '1\r\nx\r\n0\r\n\r\n');
    expect(text.status).toBe(415);
    expectError(JSON.parse(text.body), 415, 'unsupported_media_type');
    // No operation, no judgement of the body: 404.
    for (const type of ['', 'Content-Type: text/plain\r\n']) {
      const nowhere = await chunked('/core/v1/nothing-here', type, '1\r\nx\r\n0\r\n\r\n');
      expect(nowhere.status, type).toBe(404);
      expectError(JSON.parse(nowhere.body), 404, 'route_not_found');
    }
    await stillAnswers();
  });
});
