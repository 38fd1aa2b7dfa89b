import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDb, startPlatform, tenantClient, type TestPlatform, type TestTenant } from './helpers/platform.ts';
import { until } from './helpers/until.ts';
import { expectedSignatures, WebhookReceiver } from './helpers/webhookReceiver.ts';

const ENV = { MEDIAPLANE_WEBHOOK_ALLOW_PRIVATE: 'true', MEDIAPLANE_WEBHOOK_TIMEOUT_MS: '2000', MEDIAPLANE_WEBHOOK_RETRY_BASE_MS: '60000' };

/** `examples/webhook-receiver.mjs`, the README's receiver, run with one secret: its URL and what it printed. */
async function exampleReceiver(secret: string): Promise<{ url: string; output: () => string; child: ChildProcess }> {
  const child = spawn(process.execPath, ['examples/webhook-receiver.mjs'], {
    env: { ...process.env, MEDIAPLANE_WEBHOOK_SECRET: secret, PORT: '0' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let output = '';
  child.stdout!.on('data', (c) => (output += c));
  const [, port] = (await until(
    () => /listening on (\d+)/.exec(output),
    (m) => m !== null,
    { timeoutMs: 30_000, what: 'the example receiver to listen' },
  ))!;
  return { url: `http://127.0.0.1:${port}/`, output: () => output, child };
}

const seen = <T>(what: string, fn: () => Promise<T>, ok: (v: T) => boolean) => until(fn, ok, { timeoutMs: 15_000, what });

describeEachDb('signing secret rotation', (kind) => {
  let p: TestPlatform;
  const children: ChildProcess[] = [];
  beforeAll(async () => {
    p = await startPlatform(kind, ENV);
  }, 120_000);
  afterAll(async () => {
    for (const c of children) c.kill();
    await p?.stop();
  });

  const subscribe = async (t: TestTenant, url: string) => {
    const { status, body } = await t.json('POST', '/notifications/v1/webhook', { name: 'r', url, eventTypes: ['core.apikey.created'] });
    expect(status).toBe(200);
    return body.id as string;
  };
  const createKey = async (t: TestTenant, name: string) => {
    const { status, body } = await t.json('POST', '/core/v1/api-key', { name, roleType: 'Viewer' });
    expect(status).toBe(200);
    return body.id as string;
  };
  const deliveries = async (t: TestTenant, webhookId: string) =>
    (await t.json('GET', `/notifications/v1/webhook-events?webhookId=${webhookId}`)).body.items as any[];

  it('signs every delivery with the old and the new secret during the overlap, so receivers holding either verify it', async () => {
    const t = await p.createTenant();
    const old: string = (await t.json('GET', '/notifications/v1/webhook/signature-secret')).body.secret;
    const onOld = await exampleReceiver(old);
    children.push(onOld.child);
    const raw = await WebhookReceiver.start();
    const oldHook = await subscribe(t, onOld.url);
    await subscribe(t, raw.url);
    // A delivery before the rotation: the dispatcher now holds the old secret, and must drop it when the rotation commits.
    await createKey(t, 'before-rotation');
    await raw.waitFor((r) => r.length === 1);
    expect(String(raw.received[0].headers['webhook-signature'])).toBe(expectedSignatures(old, raw.received[0]).standard);

    const before = Date.now();
    const rotated = await t.json('POST', '/notifications/v1/webhook/signature-secret/rotate');
    expect(rotated.status).toBe(200);
    const fresh: string = rotated.body.secret;
    expect(fresh).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(fresh).not.toBe(old);
    const until24h = Date.parse(rotated.body.previousSecretExpirationDate) - before;
    expect(until24h).toBeGreaterThan(24 * 3600_000 - 60_000);
    expect(until24h).toBeLessThan(24 * 3600_000 + 60_000);
    expect((await t.json('GET', '/notifications/v1/webhook/signature-secret')).body.secret).toBe(fresh);

    const onNew = await exampleReceiver(fresh);
    children.push(onNew.child);
    const newHook = await subscribe(t, onNew.url);
    const keyId = await createKey(t, 'after-rotation');

    // The README's receiver accepts the delivery with the old secret and with the new one.
    for (const hook of [oldHook, newHook]) {
      const items = await seen(
        `delivery to ${hook}`,
        () => deliveries(t, hook),
        (all) => all.some((i) => i.payload.data.id === keyId && i.status === 'Delivered'),
      );
      const item = items.find((i) => i.payload.data.id === keyId);
      expect(item.sendAttempts.at(-1)).toMatchObject({ responseCode: 200, responseContent: 'ok' });
    }
    expect(onOld.output()).toMatch(/verified core\.apikey\.created/);
    expect(onNew.output()).toMatch(/verified core\.apikey\.created/);

    // Both signatures, the new one first; the spec's one header carries the new secret's.
    await raw.waitFor((r) => r.length === 2);
    const got = raw.received[1];
    expect(String(got.headers['webhook-signature']).split(' ')).toEqual([expectedSignatures(fresh, got).standard, expectedSignatures(old, got).standard]);
    expect(got.headers.x_svc_signature_v1).toBe(expectedSignatures(fresh, got).svc);
    await raw.close();
  }, 60_000);

  it('ends the overlap at once with overlapSeconds 0: a receiver still on the old secret refuses what follows', async () => {
    const t = await p.createTenant();
    const old: string = (await t.json('GET', '/notifications/v1/webhook/signature-secret')).body.secret;
    const onOld = await exampleReceiver(old);
    children.push(onOld.child);
    const hook = await subscribe(t, onOld.url);
    const rotated = await t.json('POST', '/notifications/v1/webhook/signature-secret/rotate', { overlapSeconds: 0 });
    expect(rotated.status).toBe(200);
    expect(rotated.body.previousSecretExpirationDate).toBeNull();
    await createKey(t, 'refused');
    const [item] = await seen(
      'a refused attempt',
      () => deliveries(t, hook),
      (items) => items[0]?.sendAttempts.length > 0,
    );
    expect(item.sendAttempts[0]).toMatchObject({ responseCode: 401, responseContent: 'bad signature' });
  }, 60_000);

  it('is for Admin keys only, and refuses an overlap out of range', async () => {
    const t = await p.createTenant();
    const { body } = await t.json('POST', '/core/v1/api-key', { name: 'ed', roleType: 'Editor' });
    const editor = tenantClient(p.baseUrl, t.id, t.name, body.key);
    expect((await editor.json('POST', '/notifications/v1/webhook/signature-secret/rotate')).status).toBe(403);
    for (const overlapSeconds of [-1, 31 * 24 * 3600, 1.5]) {
      const res = await t.json('POST', '/notifications/v1/webhook/signature-secret/rotate', { overlapSeconds });
      expect(res.status, String(overlapSeconds)).toBe(400);
      expect(res.body.errors[0].field).toBe('overlapSeconds');
    }
  });

  it('takes no body or an empty one (the default overlap), refuses null, [] and "x", and the document says the body is optional (issue 25, item 6)', async () => {
    const t = await p.createTenant();
    const rotate = (body?: string, headers: Record<string, string> = {}) =>
      fetch(`${p.baseUrl}/notifications/v1/webhook/signature-secret/rotate`, {
        method: 'POST',
        headers: { 'x-api-key': t.key, 'x-tenant-id': t.id, ...headers },
        body,
      });
    const json = { 'content-type': 'application/json' };
    for (const [body, headers] of [
      [undefined, {}],
      ['', json],
      [undefined, json],
      ['{}', json],
    ] as const) {
      const res = await rotate(body, headers);
      expect(res.status, JSON.stringify([body, headers])).toBe(200);
      expect((await res.json()).previousSecretExpirationDate).not.toBeNull();
    }
    for (const body of ['null', '[]', '"x"']) {
      const res = await rotate(body, json);
      expect(res.status, body).toBe(400);
      expect((await res.json()).errors, body).toEqual([{ field: 'body', message: 'must be an object' }]);
    }
    const doc = await (await fetch(`${p.baseUrl}/openapi.json`)).json();
    const op = doc.paths['/notifications/v1/webhook/signature-secret/rotate'].post;
    expect(op.requestBody.required).toBe(false);
    expect(op).not.toHaveProperty('x-optionalBody');
    expect(doc.paths['/vod/v1/files/{id}/cancel'].post.requestBody.required).toBe(false);
    expect(doc.paths['/vod/v1/assets'].post.requestBody.required).toBe(true);
  });
});
