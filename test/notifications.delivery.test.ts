import { spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { recordEvent } from '../src/platform/events.ts';
import { describeEachDb, startPlatform, type TestPlatform, type TestTenant } from './helpers/platform.ts';
import { sleep, until } from './helpers/until.ts';
import { expectedSignatures, WebhookReceiver } from './helpers/webhookReceiver.ts';

const TIMEOUT_MS = 800;
const ENV = {
  MEDIAPLANE_WEBHOOK_ALLOW_PRIVATE: 'true',
  MEDIAPLANE_WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
  MEDIAPLANE_WEBHOOK_RETRY_BASE_MS: '150',
  MEDIAPLANE_WEBHOOK_RETRY_MAX_DELAY_MS: '400',
  MEDIAPLANE_WEBHOOK_RETRY_PERIOD_SECONDS: '2',
};
const KEY_EVENTS = ['core.apikey.created', 'core.apikey.deleted'];
/** Lets time pass on purpose: that nothing more arrives cannot be awaited, only given the time to happen. */
const quiet = (ms: number) => sleep(ms);

describeEachDb('webhook delivery', (kind) => {
  let p: TestPlatform;
  const receivers: WebhookReceiver[] = [];
  beforeAll(async () => {
    p = await startPlatform(kind, ENV);
  });
  afterAll(async () => {
    await Promise.all(receivers.map((r) => r.close()));
    await p.stop();
  });

  async function receiver(): Promise<WebhookReceiver> {
    const r = await WebhookReceiver.start();
    receivers.push(r);
    return r;
  }

  async function subscribe(t: TestTenant, url: string, eventTypes = KEY_EVENTS): Promise<string> {
    const { status, body } = await t.json('POST', '/notifications/v1/webhook', { name: 'hook', url, eventTypes });
    expect(status).toBe(200);
    return body.id;
  }

  async function createKey(t: TestTenant, name = 'k'): Promise<string> {
    const { status, body } = await t.json('POST', '/core/v1/api-key', { name, roleType: 'Viewer' });
    expect(status).toBe(200);
    return body.id;
  }

  async function eventLog(t: TestTenant, query = ''): Promise<any[]> {
    const { status, body } = await t.json('GET', `/notifications/v1/webhook-events${query}`);
    expect(status).toBe(200);
    return body.items;
  }

  it('delivers the spec body with both signatures for an API key created and deleted', async () => {
    const t = await p.createTenant();
    const r = await receiver();
    const { body: secretBody } = await t.json('GET', '/notifications/v1/webhook/signature-secret');
    const secret: string = secretBody.secret;
    await subscribe(t, r.url);

    const before = Date.now();
    const keyId = await createKey(t, 'ci key');
    expect((await t.call('DELETE', `/core/v1/api-key/${keyId}`)).status).toBe(204);
    // Delivery is at least once: under load a receiver's late answer counts as a timeout and the event comes again.
    await r.waitFor(() => r.ofType('core.apikey.deleted').length >= 1);
    const [created, deleted] = [r.ofType('core.apikey.created')[0], r.ofType('core.apikey.deleted')[0]];
    expect(r.received.indexOf(created)).toBeLessThan(r.received.indexOf(deleted));
    for (const got of [created, deleted]) {
      expect(Object.keys(got.json).sort()).toEqual(['data', 'dataContentType', 'id', 'source', 'specVersion', 'time', 'type']);
      expect(got.json.id).toMatch(/^[0-9a-f-]{36}$/);
      expect(got.json.dataContentType).toBe('application/json');
      expect(got.json.source).toBe(`/tenant/${t.id}`);
      expect(got.json.specVersion).toBe('1.0');
      expect(new Date(got.json.time).getTime()).toBeGreaterThanOrEqual(before - 1000);
      expect(got.json.data).toEqual({ id: keyId, name: 'ci key', roleType: 'Viewer' });
      expect(got.headers['content-type']).toBe('application/json');
      expect(got.headers.x_request_id).toMatch(/^[0-9a-f-]{36}$/);
      expect(got.headers['webhook-id']).toBe(got.json.id);
      expect(Math.abs(Number(got.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(30);
      const expected = expectedSignatures(secret, got);
      expect(got.headers.x_svc_signature_v1).toBe(expected.svc);
      expect(got.headers['webhook-signature']).toBe(expected.standard);
    }
    expect(created.headers.x_request_id).not.toBe(deleted.headers.x_request_id);
    await quiet(300);
    expect(r.received).toHaveLength(2); // not the tenant's first key: it was created before the webhook

    const log = await until(
      () => eventLog(t, '?sort=OccuredAt'),
      (items) => items.every((i) => i.status === 'Delivered') && items.length === 2,
    );
    expect(log.map((i) => [i.id, i.type])).toEqual([
      [created.json.id, 'core.apikey.created'],
      [deleted.json.id, 'core.apikey.deleted'],
    ]);
    for (const [i, item] of log.entries()) {
      expect(item.payload).toEqual(r.received[i].json);
      expect(item.occuredAt).toBe(r.received[i].json.time);
      expect(item.sendAttempts).toHaveLength(1);
      expect(item.sendAttempts[0]).toEqual({ time: item.lastSendAttempt, responseCode: 200, responseContent: 'ok' });
    }
  });

  it('retries a receiver that answers 500, then delivers, recording every attempt', async () => {
    const t = await p.createTenant();
    const r = await receiver();
    r.behaviour = (_req, n) => (n === 0 ? { status: 500, body: 'boom' } : { status: 200, body: 'fine' });
    await subscribe(t, r.url, ['core.apikey.created']);
    const keyId = await createKey(t);

    await r.waitFor((all) => all.length >= 2);
    expect(r.received[0].json.id).toBe(r.received[1].json.id);
    expect(r.received[0].body).toBe(r.received[1].body);
    expect(r.received[1].json.data.id).toBe(keyId);

    const [item] = await until(
      () => eventLog(t),
      (items) => items[0]?.status === 'Delivered',
    );
    expect(item.sendAttempts.map((a: any) => [a.responseCode, a.responseContent])).toEqual([
      [500, 'boom'],
      [200, 'fine'],
    ]);
    expect(item.lastSendAttempt).toBe(item.sendAttempts[1].time);
    const gap = Date.parse(item.sendAttempts[1].time) - Date.parse(item.sendAttempts[0].time);
    expect(gap).toBeGreaterThanOrEqual(70); // half the first backoff, at least
    await quiet(500);
    expect(r.received).toHaveLength(2);
  });

  it('counts a receiver that does not answer within the timeout as a failed attempt', async () => {
    const t = await p.createTenant();
    const r = await receiver();
    r.behaviour = (_req, n) => (n === 0 ? 'hang' : { status: 200, body: 'late but fine' });
    await subscribe(t, r.url, ['core.apikey.created']);
    await createKey(t);

    const [item] = await until(
      () => eventLog(t),
      (items) => items[0]?.status === 'Delivered',
    );
    expect(item.sendAttempts).toHaveLength(2);
    expect(item.sendAttempts[0].responseCode).toBe(0);
    expect(item.sendAttempts[0].responseContent).toBe(`no answer within ${TIMEOUT_MS} ms`);
    expect(item.sendAttempts[1]).toMatchObject({ responseCode: 200, responseContent: 'late but fine' });
    const gap = Date.parse(item.sendAttempts[1].time) - Date.parse(item.sendAttempts[0].time);
    expect(gap).toBeGreaterThanOrEqual(TIMEOUT_MS);
  });

  it('turns a webhook Unhealthy when its receiver is down for the whole retry period, and resumes when enabled', async () => {
    const t = await p.createTenant();
    const r = await receiver();
    r.behaviour = () => ({ status: 503, body: 'down' });
    const id = await subscribe(t, r.url, ['core.apikey.created']);
    const firstKey = await createKey(t, 'first');

    const hook = await until(
      () => t.json('GET', `/notifications/v1/webhook/${id}`),
      (res) => res.body.status === 'Unhealthy',
    );
    expect(hook.body.isEnabled).toBe(false);
    const attempts = r.received.length;
    expect(attempts).toBeGreaterThanOrEqual(3);
    expect(r.ofType('core.apikey.created', firstKey)).toHaveLength(attempts);
    const [failed] = await eventLog(t, '?statuses=Failed');
    expect(failed.payload.data.id).toBe(firstKey);
    expect(failed.sendAttempts).toHaveLength(attempts);
    expect(failed.sendAttempts.every((a: any) => a.responseCode === 503 && a.responseContent === 'down')).toBe(true);
    const span = Date.parse(failed.sendAttempts.at(-1).time) - Date.parse(failed.sendAttempts[0].time);
    expect(span).toBeGreaterThanOrEqual(2000);

    // Nothing more is sent: not the failed event, not a new one.
    await createKey(t, 'while unhealthy');
    await quiet(1500);
    expect(r.received).toHaveLength(attempts);

    r.behaviour = () => ({ status: 200, body: 'back' });
    const enabled = await t.json('PATCH', `/notifications/v1/webhook/${id}`, { isEnabled: true });
    expect(enabled.status).toBe(200);
    expect(enabled.body).toMatchObject({ id, isEnabled: true, status: 'Healthy' });
    await r.waitFor((all) => all.length > attempts, 5000);
    expect(r.received.at(-1)!.json.data.id).toBe(firstKey);
    const [delivered] = await until(
      () => eventLog(t),
      (items) => items[0]?.status === 'Delivered',
    );
    expect(delivered.sendAttempts.at(-1)).toMatchObject({ responseCode: 200, responseContent: 'back' });
    expect(delivered.sendAttempts).toHaveLength(attempts + 1);
    await quiet(300);
    // The key created while the webhook was off was never queued for it.
    expect(r.received.filter((x) => x.json.data.name === 'while unhealthy')).toHaveLength(0);
  });

  it('keeps order per webhook', async () => {
    const t = await p.createTenant();
    const r = await receiver();
    await subscribe(t, r.url, ['core.apikey.created']);
    const ids: string[] = [];
    for (let i = 0; i < 8; i++) ids.push(await createKey(t, `key ${i}`));
    const arrived = () => [...new Set(r.received.map((x) => x.json.data.id))]; // at least once: a retry may repeat one
    await r.waitFor(() => arrived().length >= 8);
    expect(arrived()).toEqual(ids);
  });

  it('delivers to a subscription by the spec sample names under the emitted type', async () => {
    const t = await p.createTenant();
    const r = await receiver();
    await subscribe(t, r.url, ['VodAssetCreated']);
    // What the VOD module does inside the transaction of its state change.
    for (const type of ['vod.asset.created', 'vod.asset.updated', 'vod.asset.deleted'] as const) {
      await p.ctx.db.transaction((tx) => recordEvent(tx, t.id, type, { id: 'asset-1', name: type }));
    }
    await r.waitFor((all) => all.length >= 1);
    await quiet(500);
    expect(r.received.map((x) => [x.json.type, x.json.data])).toEqual([['vod.asset.created', { id: 'asset-1', name: 'vod.asset.created' }]]);
  });

  it('sends a webhook.test event on demand and answers what the receiver said', async () => {
    const t = await p.createTenant();
    const r = await receiver();
    r.behaviour = (_req, n) => (n === 0 ? { status: 200, body: 'hello from receiver' } : { status: 418, body: 'x'.repeat(5000) });
    const id = await subscribe(t, r.url, ['core.apikey.deleted']);
    const { body: secretBody } = await t.json('GET', '/notifications/v1/webhook/signature-secret');

    const first = await t.json('POST', `/notifications/v1/webhook/${id}/test`);
    expect(first).toEqual({ status: 200, body: { responseCode: 200, responseContent: 'hello from receiver' } });
    const [got] = r.received;
    expect(got.json).toMatchObject({ type: 'webhook.test', source: `/tenant/${t.id}`, specVersion: '1.0', data: { id, name: 'hook' } });
    expect(got.headers.x_svc_signature_v1).toBe(expectedSignatures(secretBody.secret, got).svc);
    expect(got.headers['webhook-signature']).toBe(expectedSignatures(secretBody.secret, got).standard);

    const second = await t.json('POST', `/notifications/v1/webhook/${id}/test`);
    expect(second.body.responseCode).toBe(418);
    expect(second.body.responseContent).toBe('x'.repeat(1024));

    const log = await eventLog(t, '?sort=OccuredAt');
    expect(log.map((i) => [i.type, i.status, i.sendAttempts[0].responseCode])).toEqual([
      ['webhook.test', 'Delivered', 200],
      ['webhook.test', 'Failed', 418],
    ]);
    expect(log[0].webhookId).toBe(id);
    await quiet(600);
    expect(r.received).toHaveLength(2); // a failed test is answered, not retried

    const missing = await t.json('POST', '/notifications/v1/webhook/0190b0a0-0000-7000-8000-000000000000/test');
    expect(missing.status).toBe(404);
    expect(missing.body.status.code).toBe('webhook_not_found');
  });

  it('filters, sorts and pages the event log', async () => {
    const t = await p.createTenant();
    const r = await receiver();
    r.behaviour = (req) => (req.json.data.name === 'refused' ? { status: 400, body: 'no' } : { status: 200 });
    const id = await subscribe(t, r.url, ['core.apikey.created']);
    await createKey(t, 'a');
    await createKey(t, 'b');
    await until(
      () => eventLog(t),
      (items) => items.length === 2 && items.every((i) => i.status === 'Delivered'),
    );
    await t.json('PATCH', `/notifications/v1/webhook/${id}`, { name: 'renamed' });
    await createKey(t, 'refused');
    await until(
      () => eventLog(t, '?statuses=Retrying,Failed'),
      (items) => items.length === 1,
    );

    const all = await t.json('GET', '/notifications/v1/webhook-events?limit=2&sort=OccuredAt&desc=true');
    expect(all.body).toMatchObject({ totalCount: 3, pageSize: 2, pageNumber: 1, pageCount: 2, hasMore: true });
    expect(all.body.items.map((i: any) => i.payload.data.name)).toEqual(['refused', 'b']);
    const page2 = await t.json('GET', '/notifications/v1/webhook-events?limit=2&page=2&sort=OccuredAt&desc=true');
    expect(page2.body.items.map((i: any) => i.payload.data.name)).toEqual(['a']);
    expect(page2.body.hasMore).toBe(false);

    const delivered = await eventLog(t, '?statuses=Delivered&statuses=Pending');
    expect(delivered.map((i) => i.payload.data.name).sort()).toEqual(['a', 'b']);
    const future = new Date(Date.now() + 60_000).toISOString();
    expect(await eventLog(t, `?start=${encodeURIComponent(future)}`)).toEqual([]);
    expect(await eventLog(t, `?end=${encodeURIComponent(future)}&start=2020-01-01`)).toHaveLength(3);
    expect(await eventLog(t, `?webhookId=${id}`)).toHaveLength(3);

    const badStatus = await t.json('GET', '/notifications/v1/webhook-events?statuses=Lost');
    expect(badStatus.status).toBe(400);
    expect(badStatus.body.errors[0].field).toBe('statuses');
    const badDate = await t.json('GET', '/notifications/v1/webhook-events?start=yesterday');
    expect(badDate.status).toBe(400);
    expect(badDate.body.errors[0].field).toBe('start');
    const badSort = await t.json('GET', '/notifications/v1/webhook-events?sort=Nope');
    expect(badSort.status).toBe(400);
  });

  it('the README receiver verifies real deliveries and refuses forged and stale requests', async () => {
    const example = readFileSync(new URL('../examples/webhook-receiver.mjs', import.meta.url), 'utf8');
    expect(readFileSync(new URL('../README.md', import.meta.url), 'utf8')).toContain(`\`\`\`js\n${example}\`\`\``);

    const t = await p.createTenant();
    const { body: secretBody } = await t.json('GET', '/notifications/v1/webhook/signature-secret');
    const secret: string = secretBody.secret;
    const child = spawn(process.execPath, ['examples/webhook-receiver.mjs'], {
      env: { ...process.env, MEDIAPLANE_WEBHOOK_SECRET: secret, PORT: '0' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let output = '';
    child.stdout!.on('data', (c) => (output += c));
    try {
      const waitOutput = (re: RegExp) =>
        until(
          () => re.exec(output),
          (m) => m !== null,
          { timeoutMs: 30_000, what: `${re} in the receiver's output` },
        );
      const port = (await waitOutput(/listening on (\d+)/))![1];
      const url = `http://127.0.0.1:${port}/`;
      await subscribe(t, url, ['core.apikey.created']);
      await createKey(t, 'verified');
      const [item] = await until(
        () => eventLog(t),
        (items) => items[0]?.status === 'Delivered',
      );
      expect(item.sendAttempts).toEqual([{ time: item.lastSendAttempt, responseCode: 200, responseContent: 'ok' }]);
      expect(await waitOutput(new RegExp(`verified core.apikey.created ${item.id}`))).not.toBeNull();

      // Requests signed here, the way the platform signs them, with one thing changed each time.
      const body = JSON.stringify(item.payload);
      const send = (b: string, ts: number, key = secret) => {
        const standardKey = Buffer.from(key.slice('whsec_'.length), 'base64');
        return fetch(url, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            X_SVC_SIGNATURE_V1: createHmac('sha256', key).update(b).digest('hex'),
            'webhook-id': item.id,
            'webhook-timestamp': String(ts),
            'webhook-signature': `v1,${createHmac('sha256', standardKey).update(`${item.id}.${ts}.${b}`).digest('base64')}`,
          },
          body,
        }).then((res) => res.status);
      };
      const now = Math.floor(Date.now() / 1000);
      expect(await send(body, now)).toBe(200);
      expect(await send(body.replace('verified', 'forged'), now)).toBe(401);
      expect(await send(body, now - 600)).toBe(401);
      expect(await send(body, now, `whsec_${Buffer.alloc(32, 7).toString('base64')}`)).toBe(401);
    } finally {
      child.kill();
    }
  });
});

// A platform whose webhook timeout is far longer than the test: a receiver that never answers keeps its request open
// for the whole test, so that the other tenant's deliveries arriving proves they did not wait behind it, without
// measuring how long anything took.
describeEachDb('webhook delivery beside a receiver that never answers', (kind) => {
  let p: TestPlatform;
  const receivers: WebhookReceiver[] = [];
  beforeAll(async () => {
    p = await startPlatform(kind, { ...ENV, MEDIAPLANE_WEBHOOK_TIMEOUT_MS: '600000' });
  });
  afterAll(async () => {
    await Promise.all(receivers.map((r) => r.close()));
    await p.stop();
  });

  it('delivers every event of another tenant while the hanging request is still open', async () => {
    const [slow, fast] = await Promise.all([WebhookReceiver.start(), WebhookReceiver.start()]);
    receivers.push(slow, fast);
    slow.behaviour = () => 'hang';
    const slowTenant = await p.createTenant();
    const t = await p.createTenant();
    for (const [tenant, r] of [
      [slowTenant, slow],
      [t, fast],
    ] as const) {
      const { status } = await tenant.json('POST', '/notifications/v1/webhook', { name: 'hook', url: r.url, eventTypes: ['core.apikey.created'] });
      expect(status).toBe(200);
    }
    await slowTenant.json('POST', '/core/v1/api-key', { name: 'k', roleType: 'Viewer' });
    await slow.waitFor((all) => all.length === 1);

    for (let i = 0; i < 8; i++) expect((await t.json('POST', '/core/v1/api-key', { name: `key ${i}`, roleType: 'Viewer' })).status).toBe(200);
    await fast.waitFor((all) => all.length === 8, 60_000);
    expect(slow.received).toHaveLength(1);
    expect(slow.openRequests).toBe(1);
  });
});
