import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { launchBrowser, play, servePlayerPage } from './helpers/browser.ts';
import { describeOnDb, freshStorage, tenantClient, type TestStorage, type TestTenant } from './helpers/platform.ts';
import { pushEncoder, type Encoder } from './helpers/live.ts';
import { until } from './helpers/until.ts';
import { WebhookReceiver } from './helpers/webhookReceiver.ts';
import { freePort } from './helpers/process.ts';

/**
 * A real live channel: the platform as a child process (so that it can be killed with -9), ffmpeg pushing RTMP to the
 * channel's `transportPrimaryIngestUrl`, hls.js (and dash.js) in headless Chromium on another origin playing `endpoints[0].url` (and the DASH endpoint).
 */
const root = new URL('..', import.meta.url).pathname;

const startServer = (env: Record<string, string>): ChildProcess =>
  spawn(process.execPath, [join(root, 'bin/mediaplane.js'), 'serve'], { env: { ...process.env, LOG_LEVEL: 'warn', ...env }, stdio: 'ignore' });

describeOnDb('pglite', 'Live channel end to end', (kind) => {
  let storage: TestStorage;
  let server: ChildProcess | undefined;
  let push: Encoder | undefined;
  let browser: Browser;
  let page: { url: string; close(): Promise<void> };
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    storage = await freshStorage(kind);
    [browser, page, receiver] = await Promise.all([launchBrowser(), servePlayerPage(), WebhookReceiver.start()]);
  });
  afterAll(async () => {
    await push?.kill();
    server?.kill('SIGKILL');
    await Promise.all([browser?.close(), page?.close(), receiver?.close()]);
    await storage?.drop();
  });

  it('plays what ffmpeg pushes, refuses a wrong key and an address outside the CIDR, comes back On after kill -9, and stops', async () => {
    const [port, rtmpPort] = [await freePort(), await freePort()];
    const base = `http://localhost:${port}`;
    const env: Record<string, string> = {
      PORT: String(port),
      HOST: '127.0.0.1',
      MEDIAPLANE_PUBLIC_URL: base,
      MEDIAPLANE_DATA_DIR: storage.dataDir,
      MEDIAPLANE_ADMIN_TOKEN: 'live-token',
      MEDIAPLANE_RTMP_HOST: '127.0.0.1',
      MEDIAPLANE_RTMP_PORT: String(rtmpPort),
      MEDIAPLANE_LIVE_SEGMENT_SECONDS: '1',
      MEDIAPLANE_LIVE_POLL_MS: '200',
      MEDIAPLANE_LIVE_LEASE_SECONDS: '5',
      MEDIAPLANE_WEBHOOK_ALLOW_PRIVATE: 'true',
      MEDIAPLANE_WEBHOOK_RETRY_BASE_MS: '200',
      ...(storage.databaseUrl ? { DATABASE_URL: storage.databaseUrl } : {}),
    };
    const ready = () =>
      until(
        () =>
          fetch(`${base}/readyz`)
            .then((r) => r.status)
            .catch(() => 0),
        (s) => s === 200,
        { timeoutMs: 60_000 },
      );
    server = startServer(env);
    await ready();
    const created = (await (
      await fetch(`${base}/admin/v1/tenants`, {
        method: 'POST',
        headers: { authorization: 'Bearer live-token', 'content-type': 'application/json' },
        body: JSON.stringify({ name: `live-${kind}` }),
      })
    ).json()) as any;
    const t: TestTenant = tenantClient(base, created.id, created.name, created.apiKey.key);
    expect(
      (
        await t.json('POST', '/notifications/v1/webhook', {
          name: 'live',
          url: receiver.url,
          eventTypes: ['live.channel.on', 'live.channel.off', 'live.channel.input.connected', 'live.channel.input.lost'],
          isEnabled: true,
        })
      ).status,
    ).toBe(200);

    const id = (
      await t.json('POST', '/live/v1/channels', {
        name: 'e2e',
        input: { inputLoss: { type: 'COLOR', color: '#1060C0' } },
        qualities: [{ resolution: '180p', frameRate: 25 }],
      })
    ).body.id as string;
    const status = async () => (await t.json('GET', `/live/v1/channels/${id}/status`)).body.status as string;
    expect((await t.call('POST', `/live/v1/channels/${id}/start`)).status).toBe(200);
    // The input-loss colour is output until an encoder connects: the channel is On without one.
    await until(status, (s) => s === 'On', { timeoutMs: 60_000 });
    const conf = (await t.json('GET', `/live/v1/channels/${id}/configuration`)).body;
    const ingest = conf.input.transportPrimaryIngestUrl as string;
    expect(ingest).toMatch(new RegExp(`^rtmp://localhost:${rtmpPort}/live/[A-Za-z0-9_-]{32}$`));
    const pushUrl = ingest.replace('localhost', '127.0.0.1');

    // A wrong key is refused at connect: ffmpeg gives up with an error.
    const wrong = pushEncoder(pushUrl.replace(/[^/]+$/, 'not-the-key'));
    expect(await wrong.exited).not.toBe(0);
    // So is an address outside the channel's whitelistCidr, from the moment the PATCH answers.
    await t.json('PATCH', `/live/v1/channels/${id}`, { input: { whitelistCidr: '10.0.0.0/8' } });
    const outside = pushEncoder(pushUrl);
    expect(await outside.exited).not.toBe(0);
    await t.json('PATCH', `/live/v1/channels/${id}`, { input: { whitelistCidr: '127.0.0.0/8' } });

    push = pushEncoder(pushUrl);
    await receiver.waitFor((r) => r.some((x) => x.json?.type === 'live.channel.input.connected' && x.json.data.id === id), 30_000);
    const ch = (await t.json('GET', `/live/v1/channels/${id}`)).body;
    const hls = ch.endpoints.find((e: any) => e.format === 'HLS').url as string;
    const first = await play(browser, page.url, hls, { seconds: 4 });
    expect(first.error).toBeUndefined();
    expect(first.videoHeight).toBe(180);
    expect(first.times.at(-1)!).toBeGreaterThan(first.times[0]);
    // A thumbnail of the channel on air: its latest picture, at its own size (docs/decisions/streaming.md).
    const thumb = await fetch(`${base}/media/thumbnails/${t.id}/${id}/thumbnail.jpg?width=160`);
    expect(thumb.status).toBe(200);
    expect(thumb.headers.get('content-type')).toBe('image/jpeg');
    expect(thumb.headers.get('cache-control')).toBe('public, max-age=2');
    const jpeg = Buffer.from(await thumb.arrayBuffer());
    // A JPEG (SOI marker) whose frame header (SOF0) says 90 lines of 160.
    expect(jpeg.subarray(0, 2).toString('hex')).toBe('ffd8');
    const sof = jpeg.indexOf(Buffer.from([0xff, 0xc0]));
    expect([jpeg.readUInt16BE(sof + 5), jpeg.readUInt16BE(sof + 7)]).toEqual([90, 160]);
    expect((await fetch(`${base}/media/thumbnails/${t.id}/${id}/thumbnail.jpg?time=3`)).status).toBe(400);
    const dash = await play(browser, page.url, ch.endpoints.find((e: any) => e.format === 'DASH').url, { player: 'dash', seconds: 4 });
    expect(dash.error).toBeUndefined();
    expect(dash.videoHeight).toBe(180);
    expect(dash.times.at(-1)!).toBeGreaterThan(dash.times[0]);
    // The owner's statistics (written every 10 s): what the encoder sent, and the player that fetched segments.
    const metrics = async () => (await t.json('GET', `/live/v1/channels/${id}/stats?periodSeconds=3600`)).body.metrics;
    const sum = (m: any) => m.data.reduce((a: number, d: any) => a + d.value, 0);
    const stats = await until(metrics, (m) => sum(m.inputBitrate) > 0 && sum(m.ingestConnectedSeconds) > 0, { timeoutMs: 30_000, everyMs: 500 });
    expect(sum(stats.segmentsWritten)).toBeGreaterThan(0);
    expect(sum(stats.inputFrameRate)).toBeGreaterThan(0);
    // The operator sees the channel on air in /metrics.
    const scrape = async () => (await fetch(`${base}/metrics`, { headers: { authorization: 'Bearer live-token' } })).text();
    expect(await scrape()).toMatch(/^mediaplane_live_channels\{input="connected"\} 1$/m);

    // kill -9 of the process that runs the channel; the encoder loses its connection, as it would in production.
    server.kill('SIGKILL');
    await new Promise((r) => server!.once('exit', r));
    await push.exited;
    server = startServer(env);
    await ready();
    expect(await status()).toBe('On');
    // The encoder reconnects (OBS does so by itself) to the same URL with the same key, and the same endpoint plays.
    push = pushEncoder(pushUrl);
    await receiver.waitFor((r) => r.filter((x) => x.json?.type === 'live.channel.input.connected' && x.json.data.id === id).length >= 2, 60_000);
    const second = await play(browser, page.url, hls, { seconds: 4 });
    expect(second.error).toBeUndefined();
    expect(second.videoHeight).toBe(180);
    expect(second.times.at(-1)!).toBeGreaterThan(second.times[0]);

    expect((await t.call('POST', `/live/v1/channels/${id}/stop`)).status).toBe(200);
    await until(status, (s) => s === 'Off', { timeoutMs: 30_000 });
    // Stopping disconnects the encoder.
    expect(await push.exited).not.toBe(0);
    await receiver.waitFor((r) => r.some((x) => x.json?.type === 'live.channel.off' && x.json.data.id === id), 30_000);
    expect(receiver.ofType('live.channel.on', id)).toHaveLength(1);

    // Deleting an Off channel removes it and its files.
    expect((await t.json('DELETE', `/live/v1/channels/${id}`)).status).toBe(200);
    expect((await fetch(hls)).status).toBe(404);
  }, 300_000);
});
