import { afterAll, beforeAll, expect, it } from 'vitest';
import { uploadFile } from './helpers/files.ts';
import { describeEachDb, startPlatform, type TestPlatform } from './helpers/platform.ts';
import { WebhookReceiver } from './helpers/webhookReceiver.ts';

const METRICS_TOKEN = 'scrape-only-token';

/** The value of one sample of the exposition (0 when the series is absent). */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of text.split('\n')) {
    if (line.startsWith('#') || !line.startsWith(name)) continue;
    const m = /^([a-z_:]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = (m[2] ?? '').split(',');
    if (wanted.every((w) => have.includes(w))) return Number(m[3]);
  }
  return 0;
}

describeEachDb('metrics', (kind) => {
  let p: TestPlatform;
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    p = await startPlatform(kind, {
      MEDIAPLANE_METRICS_TOKEN: METRICS_TOKEN,
      MEDIAPLANE_WEBHOOK_ALLOW_PRIVATE: 'true',
      MEDIAPLANE_UPLOAD_PART_SIZE: String(256 * 1024),
    });
  }, 120_000);
  afterAll(async () => {
    await p?.stop();
    await receiver?.close();
  });

  const scrape = (token?: string) => fetch(`${p.baseUrl}/metrics`, token ? { headers: { authorization: `Bearer ${token}` } } : {});

  it('are read with the admin token or MEDIAPLANE_METRICS_TOKEN only', async () => {
    const none = await scrape();
    expect(none.status).toBe(401);
    expect((await none.json()).status.code).toBe('missing_credentials');
    const wrong = await scrape('nope');
    expect(wrong.status).toBe(401);
    expect((await wrong.json()).status.code).toBe('invalid_metrics_token');
    const t = await p.createTenant();
    expect((await fetch(`${p.baseUrl}/metrics`, { headers: { 'x-api-key': t.key, 'x-tenant-id': t.id } })).status).toBe(401);
    for (const token of [METRICS_TOKEN, 'test-admin-token']) {
      const ok = await scrape(token);
      expect(ok.status).toBe(200);
      expect(ok.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
      expect(await ok.text()).toContain('# TYPE mediaplane_http_request_duration_seconds histogram');
    }
  });

  it('count HTTP requests by route pattern and status, never by raw URL', async () => {
    const t = await p.createTenant();
    const missing = '0190b0a0-0000-7000-8000-00000000dead';
    expect((await t.call('GET', `/vod/v1/assets/${missing}`)).status).toBe(404);
    expect((await t.call('GET', `/vod/v1/assets/${missing}`)).status).toBe(404);
    expect((await t.call('GET', '/vod/v1/assets')).status).toBe(200);
    expect((await fetch(`${p.baseUrl}/no/such/${missing}`)).status).toBe(404);
    const text = await (await scrape(METRICS_TOKEN)).text();
    const byRoute = (route: string, status: string) =>
      sample(text, 'mediaplane_http_request_duration_seconds_count', { method: 'GET', route, status_code: status });
    expect(byRoute('/vod/v1/assets/:id', '404')).toBe(2);
    expect(byRoute('/vod/v1/assets', '200')).toBe(1);
    expect(byRoute('unmatched', '404')).toBeGreaterThanOrEqual(1);
    expect(text).not.toContain(missing);
    expect(sample(text, 'mediaplane_http_request_duration_seconds_bucket', { route: '/vod/v1/assets', le: '+Inf' })).toBe(1);
  });

  it('report queued jobs by queue, upload bytes, webhook deliveries by outcome and their lag, and the database', async () => {
    const t = await p.createTenant();
    const hook = await t.json('POST', '/notifications/v1/webhook', { name: 'm', url: receiver.url, eventTypes: ['vod.file.completed'] });
    expect(hook.status).toBe(200);
    const data = Buffer.alloc(300 * 1024, 7);
    const { fileId } = await uploadFile(t, 'bytes.mp4', data);
    await receiver.waitFor((r) => r.some((x) => x.json?.data?.id === fileId));
    receiver.behaviour = () => ({ status: 500 });
    expect((await t.json('POST', `/notifications/v1/webhook/${hook.body.id}/test`)).body.responseCode).toBe(500);
    receiver.behaviour = () => ({ status: 200, body: 'ok' });

    const text = await (await scrape(METRICS_TOKEN)).text();
    expect(sample(text, 'mediaplane_upload_bytes_total')).toBe(data.length);
    // The upload's expiry job waits in its queue until the deadline (24 h).
    expect(sample(text, 'mediaplane_jobs', { queue: 'vod-file-expire-upload', state: 'created' })).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'mediaplane_webhook_deliveries_total', { outcome: 'delivered' })).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'mediaplane_webhook_deliveries_total', { outcome: 'failed' })).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'mediaplane_webhook_delivery_lag_seconds_count')).toBeGreaterThanOrEqual(1);
    if (kind === 'postgres') expect(sample(text, 'mediaplane_db_pool_connections', { state: 'total' })).toBeGreaterThanOrEqual(1);
    expect(text).toContain('mediaplane_process_cpu_seconds_total');
  });
});
