import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDb, startPlatform, tenantClient, type TestPlatform, type TestTenant } from './helpers/platform.ts';
import { until } from './helpers/until.ts';
import { WebhookReceiver } from './helpers/webhookReceiver.ts';

// The platform's defaults: deliveries to private addresses are refused (no MEDIAPLANE_WEBHOOK_ALLOW_PRIVATE).
const ENV = { MEDIAPLANE_WEBHOOK_TIMEOUT_MS: '1000', MEDIAPLANE_WEBHOOK_RETRY_BASE_MS: '200' };
const MISSING = '0190b0a0-0000-7000-8000-000000000000';

describeEachDb('webhook management', (kind) => {
  let p: TestPlatform;
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    [p, receiver] = await Promise.all([startPlatform(kind, ENV), WebhookReceiver.start()]);
  });
  afterAll(async () => {
    await receiver.close();
    await p.stop();
  });

  const create = (t: TestTenant, body: Record<string, unknown>) => t.json('POST', '/notifications/v1/webhook', body);
  const valid = { name: 'orders', url: 'https://hooks.example.com/mediaplane', eventTypes: ['vod.asset.created', 'vod.asset.deleted'] };

  async function keyOf(t: TestTenant, roleType: string): Promise<TestTenant> {
    const { body } = await t.json('POST', '/core/v1/api-key', { name: roleType, roleType });
    return tenantClient(p.baseUrl, t.id, t.name, body.key);
  }

  it('creates, reads, lists, updates and deletes a webhook', async () => {
    const t = await p.createTenant();
    const before = Date.now();
    const created = await create(t, valid);
    expect(created.status).toBe(200);
    const id = created.body.id;
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(created.body).toMatchObject({ ...valid, isEnabled: true, status: 'Healthy' });
    expect(Date.parse(created.body.createDate)).toBeGreaterThanOrEqual(before - 1000);

    const got = await t.json('GET', `/notifications/v1/webhook/${id}`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(created.body);

    const second = await create(t, { ...valid, name: 'archive', isEnabled: false });
    expect(second.body.isEnabled).toBe(false);
    const list = await t.json('GET', '/notifications/v1/webhook?sort=Name');
    expect(list.status).toBe(200);
    expect(list.body).toMatchObject({ totalCount: 2, pageCount: 1, pageSize: 100, pageNumber: 1, hasMore: false });
    expect(list.body.items.map((w: any) => w.name)).toEqual(['archive', 'orders']);
    expect(Object.keys(list.body.items[0]).sort()).toEqual(
      ['createDate', 'eventTypes', 'id', 'isEnabled', 'lastModificationDate', 'name', 'status', 'url'].sort(),
    );
    const paged = await t.json('GET', '/notifications/v1/webhook?limit=1&page=2&sort=Name&desc=true');
    expect(paged.body).toMatchObject({ totalCount: 2, pageCount: 2, pageSize: 1, pageNumber: 2, hasMore: false });
    expect(paged.body.items.map((w: any) => w.name)).toEqual(['archive']);

    const patched = await t.json('PATCH', `/notifications/v1/webhook/${id}`, {
      name: 'orders v2',
      url: 'http://hooks.example.com/v2',
      eventTypes: ['vod.file.completed'],
      isEnabled: false,
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ id, name: 'orders v2', url: 'http://hooks.example.com/v2', eventTypes: ['vod.file.completed'], isEnabled: false });
    expect(Date.parse(patched.body.lastModificationDate)).toBeGreaterThanOrEqual(Date.parse(created.body.lastModificationDate));
    const partly = await t.json('PATCH', `/notifications/v1/webhook/${id}`, { isEnabled: true });
    expect(partly.body).toMatchObject({ name: 'orders v2', eventTypes: ['vod.file.completed'], isEnabled: true, status: 'Healthy' });

    const deleted = await t.call('DELETE', `/notifications/v1/webhook/${id}`);
    expect(deleted.status).toBe(204);
    expect(await deleted.text()).toBe('');
    const gone = await t.json('GET', `/notifications/v1/webhook/${id}`);
    expect(gone.status).toBe(404);
    expect(gone.body.status).toEqual({ code: 'webhook_not_found', status: 404, message: `Webhook ${id} was not found` });
    expect((await t.json('DELETE', `/notifications/v1/webhook/${id}`)).status).toBe(404);
    expect((await t.json('PATCH', `/notifications/v1/webhook/${id}`, { name: 'x' })).status).toBe(404);
  });

  it('refuses invalid webhooks with the field named', async () => {
    const t = await p.createTenant();
    const cases: [Record<string, unknown>, string][] = [
      [{ ...valid, name: undefined }, 'name'],
      [{ ...valid, url: undefined }, 'url'],
      [{ ...valid, eventTypes: undefined }, 'eventTypes'],
      [{ ...valid, url: 'ftp://hooks.example.com/x' }, 'url'],
      [{ ...valid, url: 'hooks.example.com/x' }, 'url'],
      [{ ...valid, eventTypes: [] }, 'eventTypes'],
      [{ ...valid, eventTypes: ['vod.asset.created', 'vod.asset.exploded'] }, 'eventTypes'],
      [{ ...valid, isEnabled: 'sometimes' }, 'isEnabled'],
    ];
    for (const [body, field] of cases) {
      const res = await create(t, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.status.code).toBe('validation_failed');
      expect(res.body.errors.map((e: any) => e.field)).toContain(field);
    }
    const unknown = await create(t, { ...valid, eventTypes: ['vod.asset.created', 'vod.asset.exploded'] });
    expect(unknown.body.errors[0].message).toContain('"vod.asset.exploded"');

    const ok = await create(t, valid);
    const patch = await t.json('PATCH', `/notifications/v1/webhook/${ok.body.id}`, { eventTypes: ['nope'] });
    expect(patch.status).toBe(400);
    expect(patch.body.errors[0].field).toBe('eventTypes');
    expect((await t.json('GET', '/notifications/v1/webhook/not-a-uuid')).status).toBe(400);
    expect((await t.json('GET', `/notifications/v1/webhook/${MISSING}`)).status).toBe(404);
    expect((await t.json('GET', '/notifications/v1/webhook?sort=Color')).status).toBe(400);
    expect((await t.json('GET', '/notifications/v1/webhook')).body.totalCount).toBe(1);
  });

  it('accepts the spec sample names as aliases, and keeps them as written', async () => {
    const t = await p.createTenant();
    const res = await create(t, { ...valid, eventTypes: ['VodAssetCreated', 'VodAssetDeleted', 'VodAssetCreated'] });
    expect(res.status).toBe(200);
    expect(res.body.eventTypes).toEqual(['VodAssetCreated', 'VodAssetDeleted']);
  });

  it('lists every event type the platform emits', async () => {
    const t = await p.createTenant();
    const viewer = await keyOf(t, 'Viewer');
    const { status, body } = await viewer.json('GET', '/notifications/v1/webhook-events/types');
    expect(status).toBe(200);
    expect(Object.keys(body)).toEqual(['data']);
    for (const type of [
      'webhook.test',
      'core.apikey.created',
      'core.apikey.deleted',
      'vod.file.created',
      'vod.file.progress',
      'vod.file.completed',
      'vod.file.failed',
      'vod.file.updated',
      'vod.file.deleted',
      'vod.asset.created',
      'vod.asset.updated',
      'vod.asset.available',
      'vod.asset.failed',
      'vod.asset.deleted',
      'vod.output.created',
      'vod.output.progress',
      'vod.output.playable',
      'vod.output.available',
      'vod.output.failed',
      'vod.output.deleted',
    ]) {
      expect(body.data).toContain(type);
    }
    expect(new Set(body.data).size).toBe(body.data.length);
  });

  it('gives each tenant its own signing secret, the same on every read', async () => {
    const a = await p.createTenant();
    const b = await p.createTenant();
    const first = await a.json('GET', '/notifications/v1/webhook/signature-secret');
    expect(first.status).toBe(200);
    expect(Object.keys(first.body)).toEqual(['secret']);
    expect(first.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const [again, other] = await Promise.all([
      a.json('GET', '/notifications/v1/webhook/signature-secret'),
      b.json('GET', '/notifications/v1/webhook/signature-secret'),
    ]);
    expect(again.body.secret).toBe(first.body.secret);
    expect(other.body.secret).not.toBe(first.body.secret);
  });

  it('lets only the Admin role manage webhooks and read the event log', async () => {
    const t = await p.createTenant();
    const { body: hook } = await create(t, valid);
    for (const role of ['Editor', 'Viewer']) {
      const c = await keyOf(t, role);
      for (const [method, path, body] of [
        ['GET', '/notifications/v1/webhook'],
        ['POST', '/notifications/v1/webhook', valid],
        ['GET', `/notifications/v1/webhook/${hook.id}`],
        ['PATCH', `/notifications/v1/webhook/${hook.id}`, { name: 'x' }],
        ['DELETE', `/notifications/v1/webhook/${hook.id}`],
        ['POST', `/notifications/v1/webhook/${hook.id}/test`],
        ['GET', '/notifications/v1/webhook/signature-secret'],
        ['GET', '/notifications/v1/webhook-events'],
      ] as [string, string, unknown?][]) {
        const res = await c.json(method, path, body);
        expect(res.status, `${role} ${method} ${path}`).toBe(403);
        expect(res.body.status.code).toBe('forbidden');
      }
    }
    expect((await t.json('GET', `/notifications/v1/webhook/${hook.id}`)).body.name).toBe('orders');
  });

  it("answers another tenant's webhook like a missing one and keeps event logs apart", async () => {
    const a = await p.createTenant();
    const b = await p.createTenant();
    const { body: hook } = await create(a, { ...valid, url: 'https://hooks.mediaplane.invalid/a', eventTypes: ['core.apikey.created'] });
    await a.json('POST', '/core/v1/api-key', { name: 'k', roleType: 'Viewer' });

    for (const [method, path, body] of [
      ['GET', `/notifications/v1/webhook/${hook.id}`],
      ['PATCH', `/notifications/v1/webhook/${hook.id}`, { name: 'stolen' }],
      ['POST', `/notifications/v1/webhook/${hook.id}/test`],
      ['DELETE', `/notifications/v1/webhook/${hook.id}`],
    ] as [string, string, unknown?][]) {
      const theirs = await b.json(method, path, body);
      const missing = await b.json(method, path.replace(hook.id, MISSING), body);
      expect(theirs.status, `${method} ${path}`).toBe(404);
      expect(theirs.body.status.code).toBe(missing.body.status.code);
    }
    expect((await b.json('GET', '/notifications/v1/webhook')).body.totalCount).toBe(0);
    expect((await a.json('GET', `/notifications/v1/webhook/${hook.id}`)).body.name).toBe('orders');

    // A's event is attempted (the host does not resolve) and logged for A only.
    const items: any[] = await until(
      async () => (await a.json('GET', '/notifications/v1/webhook-events')).body.items,
      (items) => items[0]?.sendAttempts.length > 0,
    );
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({ type: 'core.apikey.created', status: 'Retrying', webhookId: hook.id });
    expect(items[0].sendAttempts[0].responseCode).toBe(0);
    expect(items[0].sendAttempts[0].responseContent).toContain('hooks.mediaplane.invalid');
    expect((await b.json('GET', '/notifications/v1/webhook-events')).body).toMatchObject({ items: [], totalCount: 0 });
  });

  it('refuses private, loopback and link-local targets unless allowed', async () => {
    const t = await p.createTenant();
    for (const url of [
      `http://127.0.0.1:${receiver.port}/hook`,
      'http://10.1.2.3/hook',
      'http://192.168.1.20/hook',
      'http://169.254.169.254/latest/meta-data',
      'http://[::1]/hook',
      'http://[fe80::1]/hook',
      'http://[::ffff:172.16.0.1]/hook',
      'http://0.0.0.0/hook',
    ]) {
      const res = await create(t, { ...valid, url });
      expect(res.status, url).toBe(400);
      expect(res.body.errors[0].field).toBe('url');
      expect(res.body.errors[0].message).toContain('MEDIAPLANE_WEBHOOK_ALLOW_PRIVATE=true');
    }

    // A name is judged by the addresses it resolves to, at creation as at delivery; `*.localhost` is loopback too.
    for (const host of ['localhost', 'acme.localhost', 'LOCALHOST.']) {
      const byName = await create(t, { ...valid, url: `http://${host}:${receiver.port}/hook` });
      expect(byName.status, host).toBe(400);
      expect(byName.body.errors[0]).toMatchObject({
        field: 'url',
        message: expect.stringMatching(/resolves to (127\.0\.0\.1|::1) is a loopback address; set MEDIAPLANE_WEBHOOK_ALLOW_PRIVATE=true/),
      });
    }
    const patched = await create(t, valid);
    expect(patched.status).toBe(200);
    const moved = await t.json('PATCH', `/notifications/v1/webhook/${patched.body.id}`, { url: `http://localhost:${receiver.port}/hook` });
    expect(moved.status).toBe(400);
    expect(receiver.received).toHaveLength(0);
  });

  it('refuses a URL with credentials in it rather than storing and showing them in clear', async () => {
    const t = await p.createTenant();
    for (const url of ['https://user:secret@hooks.mediaplane.invalid/x', 'https://user@hooks.mediaplane.invalid/x']) {
      const res = await create(t, { ...valid, url });
      expect(res.status, url).toBe(400);
      expect(res.body.status.code).toBe('validation_failed');
      expect(res.body.errors[0]).toMatchObject({ field: 'url', message: expect.stringContaining('credentials') });
    }
    expect((await t.json('GET', '/notifications/v1/webhook')).body.totalCount).toBe(0);
  });
});
