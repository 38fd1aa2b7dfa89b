import { execFile } from 'node:child_process';
import { statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createClient, MediaplaneError, verifyWebhook, type Client, type UploadProgress, type UploadState } from '@mediaplane/sdk';
import { nodeFetch } from '@mediaplane/sdk/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, serveDirectory } from './helpers/browser.ts';
import { makeClip, tempDir } from './helpers/media.ts';
import { describeOnDb, type TestPlatform, type TestTenant, startPlatform } from './helpers/platform.ts';
import { WebhookReceiver } from './helpers/webhookReceiver.ts';

// The SDK against a real server on a real port. Its database work is the API's, which the API tests cover on both
// databases: this file runs on one.
describeOnDb('postgres', 'SDK: @mediaplane/sdk against a running platform', (kind) => {
  const { dir, cleanup } = tempDir('mediaplane-sdk-');
  let p: TestPlatform;
  let t: TestTenant;
  let client: Client;
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    // Small parts, so that a clip of a few hundred KiB goes up in several parts in parallel.
    [p, receiver] = await Promise.all([
      startPlatform(kind, { MEDIAPLANE_WEBHOOK_ALLOW_PRIVATE: 'true', MEDIAPLANE_UPLOAD_PART_SIZE: String(64 * 1024) }),
      WebhookReceiver.start(),
    ]);
    t = await p.createTenant();
    client = createClient({ baseUrl: p.baseUrl, tenantId: t.id, apiKey: t.key });
  }, 120_000);
  afterAll(async () => {
    await receiver?.close();
    await p?.stop();
    cleanup();
  });

  let assetId: string;

  it('uploads a generated clip in parallel parts with progress, keeps the ETags, makes an asset and waits until it is Available', async () => {
    const clip = await makeClip(dir, 'clip', { seconds: 2, width: 320, height: 180, audio: [{ language: 'eng', frequency: 440 }] });
    const size = statSync(clip).size;
    // The SDK's own requests, seen on their way out (not changed).
    const sent: { method: string; url: string; body?: string; eTag?: string | null }[] = [];
    const watched = createClient({
      baseUrl: p.baseUrl,
      tenantId: t.id,
      apiKey: t.key,
      fetch: async (input, init) => {
        const res = await fetch(input, init);
        sent.push({
          method: init?.method ?? 'GET',
          url: String(input),
          body: typeof init?.body === 'string' ? init.body : undefined,
          eTag: res.headers.get('etag'),
        });
        return res;
      },
    });
    const progress: UploadProgress[] = [];
    const { fileId, fileKey } = await watched.uploadFile(clip, { concurrency: 3, onProgress: (e) => progress.push(e) });
    expect(fileKey).toContain(fileId);

    const parts = sent.filter((r) => r.method === 'PUT');
    expect(parts.length).toBe(Math.ceil(size / (64 * 1024)));
    expect(progress.at(-1)).toEqual({ loaded: size, total: size, partsDone: parts.length, partsCount: parts.length });
    // Byte by byte, not part by part: more reports than parts, never going past the size.
    expect(progress.length).toBeGreaterThan(parts.length);
    expect(progress.every((e) => e.loaded <= size && e.total === size)).toBe(true);
    const complete = JSON.parse(sent.find((r) => r.url.endsWith('/vod/v1/files/complete'))!.body!);
    expect(complete.parts).toEqual(parts.map((_, i) => ({ partNumber: i + 1, eTag: expect.stringMatching(/^"[0-9a-f]{32}"$/) })));
    expect(new Set(complete.parts.map((x: { eTag: string }) => x.eTag))).toEqual(new Set(parts.map((r) => r.eTag)));

    const file = await client.request('GET', '/vod/v1/files/{id}', undefined, { params: { id: fileId } });
    expect(file).toMatchObject({ id: fileId, status: 'Completed', fileSize: size, name: 'clip.mp4' });

    const created = await client.request('POST', '/vod/v1/assets', {
      preset: 'hls-h264-ladder',
      title: 'SDK clip',
      transcodedSources: [{ fileId, transcodingTracks: [{ trackSelector: { trackId: '1' }, type: 'Audio' }] }],
    });
    assetId = created.id;
    const statuses: string[] = [];
    const asset = await client.waitForAsset(assetId, { intervalMs: 200, onUpdate: (a) => statuses.push(a.status) });
    expect(asset.status).toBe('Available');
    expect(statuses.at(-1)).toBe('Available');
    const hls = asset.endpoints.find((e) => e.format === 'HLS');
    expect(hls?.url).toMatch(/\.m3u8$/);
    const playlist = await fetch(hls!.url);
    expect(playlist.status).toBe(200);
    expect(await playlist.text()).toContain('#EXTM3U');
  }, 240_000);

  it('sends a failed part again, and aborting an upload rejects and cancels it on the platform', async () => {
    const bytes = Buffer.alloc(300 * 1024, 'mediaplane ');
    let failures = 0;
    const flaky = createClient({
      baseUrl: p.baseUrl,
      tenantId: t.id,
      apiKey: t.key,
      // The store answers the first attempt of part 2 with a 503, as a busy store would.
      fetch: async (input, init) => {
        if (init?.method === 'PUT' && String(input).includes('partNumber=2') && failures++ === 0) return new Response('busy', { status: 503 });
        return fetch(input, init);
      },
    });
    const up = await flaky.uploadFile(new Blob([bytes]), { name: 'retried.mp4' });
    expect(failures).toBeGreaterThan(1);
    const file = await client.request('GET', '/vod/v1/files/{id}', undefined, { params: { id: up.fileId } });
    // Not media: completed, then probed as no known type; either way no longer an upload in progress.
    expect(file.fileSize).toBe(bytes.length);
    expect(file.status).not.toBe('Uploading');

    // Aborted after its first part: rejected with the signal's reason, and the upload deleted on the platform.
    const controller = new AbortController();
    let fileId = '';
    const watching = createClient({
      baseUrl: p.baseUrl,
      tenantId: t.id,
      apiKey: t.key,
      fetch: async (input, init) => {
        const res = await fetch(input, init);
        if (String(input).endsWith('/vod/v1/files/start')) fileId = (await res.clone().json()).fileId;
        return res;
      },
    });
    const aborted = watching.uploadFile(new Blob([bytes]), {
      name: 'aborted.mp4',
      concurrency: 1,
      signal: controller.signal,
      onProgress: (e) => {
        if (e.partsDone === 1) controller.abort(new Error('stopped by the user'));
      },
    });
    await expect(aborted).rejects.toThrow('stopped by the user');
    expect(fileId).toMatch(/^[0-9a-f-]{36}$/);
    const gone = await client.request('GET', '/vod/v1/files/{id}', undefined, { params: { id: fileId } }).catch((e) => e);
    expect(gone).toMatchObject({ status: 404, code: 'file_not_found' });
  });

  it('an upload kept after an abort resumes from its state: only the missing parts are sent, and the file is whole', async () => {
    const bytes = Buffer.from(Array.from({ length: 300 * 1024 }, (_, i) => (i * 7919) % 251));
    const puts: string[] = [];
    const counting = createClient({
      baseUrl: p.baseUrl,
      tenantId: t.id,
      apiKey: t.key,
      fetch: async (input, init) => {
        if (init?.method === 'PUT') puts.push(String(input));
        return fetch(input, init);
      },
    });
    const controller = new AbortController();
    const states: UploadState[] = [];
    const first = counting.uploadFile(new Blob([bytes]), {
      name: 'resumed.mp4',
      concurrency: 1,
      keep: true,
      signal: controller.signal,
      onState: (s) => {
        states.push(s);
        if (s.parts.length === 2) controller.abort(new Error('the page was closed'));
      },
    });
    await expect(first).rejects.toThrow('the page was closed');
    const saved = states.at(-1)!;
    expect(saved).toMatchObject({ fileSize: bytes.length, partSize: 64 * 1024, partsCount: 5 });
    expect(saved.parts.map((x) => x.partNumber)).toEqual([1, 2]);
    // Kept: still an upload in progress on the platform.
    expect((await client.request('GET', '/vod/v1/files/{id}', undefined, { params: { id: saved.fileId } })).status).toBe('Uploading');

    puts.length = 0;
    const progress: UploadProgress[] = [];
    const done = await counting.uploadFile(new Blob([bytes]), { resume: JSON.parse(JSON.stringify(saved)), onProgress: (e) => progress.push(e) });
    expect(done.fileId).toBe(saved.fileId);
    expect(puts).toHaveLength(3);
    expect(progress[0]).toMatchObject({ loaded: 2 * 64 * 1024, partsDone: 2, partsCount: 5 });
    expect(progress.at(-1)).toMatchObject({ loaded: bytes.length, partsDone: 5 });
    const { link } = await client.request('GET', '/vod/v1/files/{id}/preview', undefined, { params: { id: done.fileId } });
    expect(Buffer.from(await (await fetch(link)).arrayBuffer()).equals(bytes)).toBe(true);

    // Another file than the one started is refused before anything is sent.
    await expect(counting.uploadFile(new Blob([bytes.subarray(1)]), { resume: saved })).rejects.toMatchObject({ code: 'upload_resume_mismatch' });
  });

  it('nodeFetch (node:http) carries requests, errors and streamed parts as fetch does', async () => {
    const viaHttp = createClient({ baseUrl: p.baseUrl, tenantId: t.id, apiKey: t.key, fetch: nodeFetch });
    const bytes = Buffer.alloc(200 * 1024, 'node http ');
    const progress: UploadProgress[] = [];
    const up = await viaHttp.uploadFile(new Blob([bytes]), { name: 'node-http.mp4', onProgress: (e) => progress.push(e) });
    expect(progress.at(-1)).toEqual({ loaded: bytes.length, total: bytes.length, partsDone: 4, partsCount: 4 });
    const file = await viaHttp.request('GET', `/vod/v1/files/${up.fileId}`);
    expect(file).toMatchObject({ name: 'node-http.mp4', fileSize: bytes.length });
    const missing = await viaHttp.request('DELETE', '/core/v1/api-key/{id}', undefined, { params: { id: assetId } }).catch((e) => e);
    expect(missing).toMatchObject({ status: 404, code: 'api_key_not_found' });
    const unreachable = createClient({ baseUrl: 'http://127.0.0.1:9', tenantId: t.id, apiKey: t.key, fetch: nodeFetch, retries: 0 });
    expect(await unreachable.request('GET', '/vod/v1/assets').catch((e) => e)).toMatchObject({ status: 0, code: 'network_error' });
  });

  it('pages through 250 items, and throws the API error shape as a MediaplaneError', async () => {
    const other = await p.createTenant();
    const sdk = createClient({ baseUrl: p.baseUrl, tenantId: other.id, apiKey: other.key });
    const created = new Set<string>();
    for (let i = 0; i < 250; i += 25) {
      const batch = await Promise.all(
        Array.from({ length: 25 }, (_, k) => sdk.request('POST', '/vod/v1/files/start', { name: `f${i + k}.mp4`, friendlyName: `f${i + k}`, fileSize: 10 })),
      );
      for (const b of batch) created.add(b.fileId);
    }
    const listed: string[] = [];
    const pages: string[] = [];
    const counting = createClient({
      baseUrl: p.baseUrl,
      tenantId: other.id,
      apiKey: other.key,
      fetch: (input, init) => (pages.push(String(input)), fetch(input, init)),
    });
    for await (const f of counting.paginate('/vod/v1/files', { limit: 100 })) listed.push(f.id);
    expect(listed.length).toBe(250);
    expect(new Set(listed)).toEqual(created);
    expect(pages.map((u) => new URL(u).searchParams.get('page'))).toEqual(['1', '2', '3']);

    const error = await sdk.request('GET', '/vod/v1/assets/{id}', undefined, { params: { id: assetId } }).catch((e) => e);
    // Another tenant's asset is answered as a missing one.
    expect(error).toBeInstanceOf(MediaplaneError);
    expect(error).toMatchObject({ status: 404, code: 'asset_not_found' });
    expect(error.message).toMatch(/\S/);
    const invalid = await sdk.request('POST', '/vod/v1/files/start', { name: 'x', friendlyName: 'x', fileSize: 0 }).catch((e) => e);
    expect(invalid).toMatchObject({ status: 400, code: 'validation_failed' });
    expect(invalid.errors.map((e: { field: string }) => e.field)).toContain('fileSize');
  }, 240_000);

  it('accepts a real delivery with either scheme and every secret of a rotation, and refuses a tampered one', async () => {
    await client.request('POST', '/notifications/v1/webhook', { name: 'sdk', url: receiver.url, eventTypes: ['vod.asset.updated'] });
    const { secret } = await client.request('GET', '/notifications/v1/webhook/signature-secret');
    const rename = async (title: string) => {
      const before = receiver.ofType('vod.asset.updated').length;
      await client.request('PATCH', '/vod/v1/assets/{id}', { title }, { params: { id: assetId } });
      await receiver.waitFor(() => receiver.ofType('vod.asset.updated').length > before, 30_000);
      return receiver.ofType('vod.asset.updated')[before];
    };
    const delivery = await rename('first name');
    expect(await verifyWebhook(delivery.body, delivery.headers, secret)).toBe(true);
    // The same bytes as fetch's Headers, and as bytes.
    const asHeaders = new Headers(Object.entries(delivery.headers).map(([k, v]) => [k, String(v)] as [string, string]));
    expect(await verifyWebhook(new TextEncoder().encode(delivery.body), asHeaders, secret)).toBe(true);

    const tampered = delivery.body.replace('"vod.asset.updated"', '"vod.asset.deleted"');
    expect(tampered).not.toBe(delivery.body);
    expect(await verifyWebhook(tampered, delivery.headers, secret)).toBe(false);
    expect(await verifyWebhook(delivery.body, delivery.headers, 'whsec_' + Buffer.alloc(32, 1).toString('base64'))).toBe(false);
    // A replay: the same delivery, past the tolerance.
    const later = Number(delivery.headers['webhook-timestamp']) * 1000 + 301_000;
    expect(await verifyWebhook(delivery.body, delivery.headers, secret, { now: later })).toBe(false);
    expect(await verifyWebhook(delivery.body, delivery.headers, secret, { now: later, toleranceSeconds: 600 })).toBe(true);

    // The spec's scheme alone (a receiver that drops the Standard Webhooks headers, or a sender without them).
    const { 'webhook-signature': _s, 'webhook-id': _i, 'webhook-timestamp': _t, ...specOnly } = delivery.headers;
    expect(await verifyWebhook(delivery.body, specOnly, secret)).toBe(true);
    expect(await verifyWebhook(tampered, specOnly, secret)).toBe(false);
    expect(await verifyWebhook(delivery.body, specOnly, secret, { requireTimestamp: true })).toBe(false);

    // During a rotation both secrets verify the Standard Webhooks signature; the spec's is the new secret's.
    const rotated = await client.request('POST', '/notifications/v1/webhook/signature-secret/rotate', {});
    const during = await rename('second name');
    expect(await verifyWebhook(during.body, during.headers, secret)).toBe(true);
    expect(await verifyWebhook(during.body, during.headers, rotated.secret)).toBe(true);
    expect(await verifyWebhook(during.body, during.headers, ['whsec_' + Buffer.alloc(32, 2).toString('base64'), secret])).toBe(true);
    const { 'webhook-signature': _s2, 'webhook-id': _i2, 'webhook-timestamp': _t2, ...specDuring } = during.headers;
    expect(await verifyWebhook(during.body, specDuring, [secret, rotated.secret])).toBe(true);
    expect(await verifyWebhook(during.body, specDuring, secret)).toBe(false);
  });

  it('the browser build, loaded in Chromium on a page of the platform, lists the assets and uploads a Blob', async () => {
    // The SDK compiled as it is published (sdk/tsconfig.json: no Node types), served as ES modules from another origin.
    const out = join(dir, 'sdk-dist');
    const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
    await promisify(execFile)(process.execPath, [tsc, '-p', new URL('../sdk/tsconfig.json', import.meta.url).pathname, '--outDir', out]);
    const served = await serveDirectory(out);
    const browser = await launchBrowser();
    try {
      const page = await browser.newPage();
      await page.goto(`${p.baseUrl}/healthz`);
      // As a page loads it: an ES module script importing the build.
      await page.addScriptTag({ type: 'module', content: `import * as sdk from '${served.url}/index.js'; window.mediaplaneSdk = sdk;` });
      await page.waitForFunction(() => (window as any).mediaplaneSdk !== undefined);
      const result = await page.evaluate(
        async ({ tenantId, apiKey }) => {
          const c = (window as any).mediaplaneSdk.createClient({ baseUrl: location.origin, tenantId, apiKey });
          const ids: string[] = [];
          for await (const a of c.paginate('/vod/v1/assets')) ids.push(a.id);
          const progress: number[] = [];
          const up = await c.uploadFile(new Blob(['from a browser '.repeat(20_000)]), { name: 'browser.mp4', onProgress: (e: any) => progress.push(e.loaded) });
          return { ids, up, progress, size: 'from a browser '.length * 20_000 };
        },
        { tenantId: t.id, apiKey: t.key },
      );
      expect(result.ids).toEqual([assetId]);
      expect(result.progress.at(-1)).toBe(result.size);
      const file = await client.request('GET', '/vod/v1/files/{id}', undefined, { params: { id: result.up.fileId } });
      expect(file).toMatchObject({ name: 'browser.mp4', fileSize: result.size });
      expect(served.requests).toContain('/index.js');
    } finally {
      await browser.close();
      await served.close();
    }
  }, 240_000);

  it('retries a 429 after its Retry-After', async () => {
    let calls = 0;
    const limited = createClient({
      baseUrl: p.baseUrl,
      tenantId: t.id,
      apiKey: t.key,
      fetch: async (input, init) =>
        calls++ === 0
          ? new Response('{"status":{"code":"rate_limited","status":429,"message":"slow down"}}', { status: 429, headers: { 'retry-after': '0' } })
          : fetch(input, init),
    });
    const presets = await limited.request('GET', '/transcoder/v1/presets');
    expect(calls).toBe(2);
    expect(presets.items.map((x) => x.id)).toContain('hls-h264-ladder');
  });
});

// A unit test of the waiting loop: the answers an asset that fails gives, in order (an asset that fails for real
// takes a broken encoder; the loop's reading of `status` and `errorMessage` is what is tested here).
describe('SDK: waitForAsset on an asset that fails', () => {
  it('throws a ProcessingFailedError with its errorMessage', async () => {
    const answers = [{ status: 'Pending' }, { status: 'Processing' }, { status: 'Error', errorMessage: 'ffmpeg: no video stream' }];
    const sdk = createClient({
      baseUrl: 'http://mediaplane.invalid',
      tenantId: 't',
      apiKey: 'k',
      fetch: async () => Response.json({ id: 'a', ...answers.shift() }),
    });
    const error = await sdk.waitForAsset('a', { intervalMs: 1 }).catch((e) => e);
    expect(error.name).toBe('ProcessingFailedError');
    expect(error.message).toBe('ffmpeg: no video stream');
    expect(answers).toEqual([]);
  });
});
