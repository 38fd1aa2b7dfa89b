import { pino } from 'pino';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDb, startPlatform, type TestPlatform } from './helpers/platform.ts';
import { until } from './helpers/until.ts';
import { WebhookReceiver } from './helpers/webhookReceiver.ts';

/** Every line the platform logs, parsed. */
function captureLogs() {
  const lines: any[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  return { logger, lines };
}

const seen = <T>(what: string, probe: () => T | undefined) => until(probe, (found) => found !== undefined, { timeoutMs: 30_000, what }) as Promise<T>;

describeEachDb('request ids', (kind) => {
  let p: TestPlatform;
  let receiver: WebhookReceiver;
  const { logger, lines } = captureLogs();
  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    // Uploads expire 1.8 s after they start: the start request causes a job, which causes an event and its delivery.
    p = await startPlatform(kind, { MEDIAPLANE_UPLOAD_TTL_HOURS: '0.0005', MEDIAPLANE_WEBHOOK_ALLOW_PRIVATE: 'true' }, undefined, { logger });
  }, 120_000);
  afterAll(async () => {
    await p?.stop();
    await receiver?.close();
  });

  it('answers every request with its id, keeping a plain one the client sent', async () => {
    const t = await p.createTenant();
    const own = await t.call('GET', '/notifications/v1/webhook', undefined, { 'x-request-id': 'client-trace-42' });
    expect(own.headers.get('x-request-id')).toBe('client-trace-42');
    const odd = await t.call('GET', '/notifications/v1/webhook', undefined, { 'x-request-id': 'no spaces {}' });
    expect(odd.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const fresh = await t.call('GET', '/notifications/v1/webhook');
    const id = fresh.headers.get('x-request-id')!;
    expect(lines.some((l) => l.requestId === id && l.res?.statusCode === 200)).toBe(true);
  });

  it("follows a request into the job it enqueues, the event the job records and that event's webhook delivery", async () => {
    const t = await p.createTenant();
    const hook = await t.json('POST', '/notifications/v1/webhook', { name: 'ids', url: receiver.url, eventTypes: ['vod.file.deleted'] });
    expect(hook.status).toBe(200);
    const start = await t.call('POST', '/vod/v1/files/start', { name: 'a.mp4', friendlyName: 'a', fileSize: 1000 });
    expect(start.status).toBe(200);
    const requestId = start.headers.get('x-request-id')!;
    const { fileId } = await start.json();

    // The expiry job runs in a worker, later, outside the request: its log lines carry the request's id.
    const job = await seen('the expiry job finishing', () => lines.find((l) => l.requestId === requestId && l.msg === 'job finished'));
    expect(job).toMatchObject({ job: expect.stringContaining('expire'), jobId: expect.any(String) });
    expect(lines.some((l) => l.requestId === requestId && l.msg === 'job started')).toBe(true);

    // The event the job recorded is delivered; the delivery's log line relates its X_REQUEST_ID to the request.
    const [delivered] = await receiver.waitFor((r) => r.some((x) => x.json?.data?.id === fileId), 30_000);
    const received = receiver.received.find((x) => x.json?.data?.id === fileId)!;
    expect(delivered).toBeDefined();
    const line = await seen('the delivery log line', () => lines.find((l) => l.msg === 'webhook delivery' && l.eventId === received.json.id));
    expect(line).toMatchObject({ requestId, deliveryRequestId: received.headers.x_request_id, responseCode: 200, ok: true });
    expect(line.deliveryRequestId).not.toBe(requestId);
  }, 60_000);
});
