import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeEachDb, freshStorage, startPlatform, type TestPlatform, type TestStorage } from './helpers/platform.ts';
import { until } from './helpers/until.ts';

const LIMIT = 5;
// The refusal of a body that never comes waits out the drain of its rest (platform/bodyDrain.ts): 1 s, not 10.
const LIMITS = { MEDIAPLANE_RATE_LIMIT_PER_MINUTE: String(LIMIT), MEDIAPLANE_BODY_LIMIT_KB: '1', MEDIAPLANE_BODY_DRAIN_SECONDS: '1', MEDIAPLANE_ROLE: 'api' };

/** Counts are per minute: a test that spends a tenant's minute starts early in one, never across two. */
async function earlyInAMinute(): Promise<void> {
  while (Date.now() % 60_000 > 40_000) await new Promise((r) => setTimeout(r, 60_000 - (Date.now() % 60_000) + 10));
}

/** Sends request headers announcing a body, and not the body: the answer must come before the body does. */
function answerWithoutBody(baseUrl: string, path: string, headers: Record<string, string>, contentLength: number): Promise<string> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname);
    let answer = '';
    socket.setEncoding('utf8');
    socket.on('data', (c) => {
      answer += c;
      if (answer.includes('\r\n\r\n') && /\}$/.test(answer)) {
        socket.destroy();
        resolve(answer);
      }
    });
    socket.on('error', reject);
    socket.on('close', () => resolve(answer));
    const lines = [`POST ${path} HTTP/1.1`, `Host: ${url.host}`, 'Content-Type: application/json', `Content-Length: ${contentLength}`];
    for (const [k, v] of Object.entries(headers)) lines.push(`${k}: ${v}`);
    socket.write(`${lines.join('\r\n')}\r\n\r\n`);
  });
}

describeEachDb('rate limits and body size', (kind) => {
  let p: TestPlatform;
  beforeAll(async () => {
    p = await startPlatform(kind, LIMITS);
  }, 120_000);
  afterAll(() => p?.stop());

  it('answers 429 in the one error shape with Retry-After once a tenant has spent its minute, and only that tenant', async () => {
    const [a, b] = [await p.createTenant(), await p.createTenant()];
    await earlyInAMinute();
    const statuses: number[] = [];
    let last: Response | undefined;
    for (let i = 0; i < LIMIT + 2; i++) {
      last = await a.call('GET', '/notifications/v1/webhook');
      statuses.push(last.status);
      if (i < LIMIT) {
        expect(last.headers.get('x-ratelimit-limit')).toBe(String(LIMIT));
        expect(last.headers.get('x-ratelimit-remaining')).toBe(String(LIMIT - i - 1));
        await last.text();
      }
    }
    expect(statuses).toEqual([...Array(LIMIT).fill(200), 429, 429]);
    const retryAfter = Number(last!.headers.get('retry-after'));
    expect(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60).toBe(true);
    const body = await last!.json();
    expect(body.status).toMatchObject({ code: 'rate_limited', status: 429 });
    expect(body.status.message).toMatch(/retry in/);
    // Another tenant has its own minute; operator routes are not counted.
    expect((await b.call('GET', '/notifications/v1/webhook')).status).toBe(200);
    expect((await p.admin('GET', '/admin/v1/tenants')).status).toBe(200);
  });

  it('refuses a JSON body over MEDIAPLANE_BODY_LIMIT_KB with 413 before reading it', async () => {
    const t = await p.createTenant();
    const answer = await answerWithoutBody(p.baseUrl, '/notifications/v1/webhook', { 'X-Api-Key': t.key, 'X-Tenant-Id': t.id }, 10 * 1024 * 1024);
    expect(answer).toMatch(/^HTTP\/1\.1 413 /);
    expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)).status).toMatchObject({ code: 'payload_too_large', status: 413 });
    // Under the limit, the same body is read and judged on its content.
    const res = await t.call('POST', '/notifications/v1/webhook', {
      name: 'x'.repeat(100),
      url: 'https://example.com/hook',
      eventTypes: ['vod.asset.created'],
    });
    expect(res.status).toBe(200);
  });
});

describe.runIf(process.env.TEST_DATABASE_URL)('rate limits shared through PostgreSQL', () => {
  let storage: TestStorage;
  let one: TestPlatform;
  let two: TestPlatform;
  beforeAll(async () => {
    storage = await freshStorage('postgres');
    one = await startPlatform('postgres', LIMITS, storage);
    two = await startPlatform('postgres', { ...LIMITS, MEDIAPLANE_DATA_DIR: `${storage.dataDir}-two` }, storage);
  }, 120_000);
  afterAll(async () => {
    await two?.stop();
    await one?.stop();
    await storage?.drop();
  });

  it("counts a tenant's requests to every API process against one limit", async () => {
    const t = await one.createTenant();
    await earlyInAMinute();
    for (let i = 0; i < LIMIT; i++) expect((await t.call('GET', '/notifications/v1/webhook')).status).toBe(200);
    const onTwo = { ...t, call: (m: string, path: string) => fetch(two.baseUrl + path, { method: m, headers: { 'x-api-key': t.key, 'x-tenant-id': t.id } }) };
    // Process two has served none of them itself: it refuses once it has read the shared count, which each process
    // adds to and reads once a second (docs/decisions/rate-limits.md), so within a few seconds.
    const refused = await until(
      () => onTwo.call('GET', '/notifications/v1/webhook'),
      (r) => r.status === 429,
      { timeoutMs: 10_000, everyMs: 200, what: 'process two refusing the tenant spent on process one' },
    );
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
  }, 60_000);
});
