import { afterAll, beforeAll, expect, it } from 'vitest';
import { makeClip, tempDir } from './helpers/media.ts';
import { describeEachDb, startPlatform, type TestPlatform } from './helpers/platform.ts';
import { uploadFile } from './helpers/upload.ts';
import { until } from './helpers/until.ts';
import { expectedSignatures, WebhookReceiver } from './helpers/webhookReceiver.ts';

/** Issue 5 wired to the VOD modules: a file's and an asset's life cycle reach a subscribed receiver, signed. */
describeEachDb('VOD events to webhooks', (kind) => {
  const { dir, cleanup } = tempDir();
  let p: TestPlatform;
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    [p, receiver] = await Promise.all([startPlatform(kind, { MEDIAPLANE_WEBHOOK_ALLOW_PRIVATE: 'true' }), WebhookReceiver.start()]);
  });
  afterAll(async () => {
    await Promise.all([p?.stop(), receiver?.close()]);
    cleanup();
  });

  it('delivers vod.file.* and vod.asset.* events of a whole life cycle in order, with both signatures', async () => {
    const t = await p.createTenant();
    const secret = (await t.json('GET', '/notifications/v1/webhook/signature-secret')).body.secret as string;
    const hook = await t.json('POST', '/notifications/v1/webhook', {
      name: 'vod',
      url: receiver.url,
      eventTypes: ['vod.file.created', 'vod.file.completed', 'vod.asset.created', 'vod.asset.available', 'VodAssetDeleted', 'vod.output.available'],
      isEnabled: true,
    });
    expect(hook.status).toBe(200);

    const fileId = await uploadFile(t, await makeClip(dir, 'clip', { width: 320, height: 180, seconds: 2 }));
    const { body } = await t.json('POST', '/vod/v1/assets', { transcodedSources: [{ fileId }], preset: 'mp4-h264-download' });
    await until(
      () => t.json('GET', `/vod/v1/assets/${body.id}`),
      (r) => r.body.status === 'Available',
      { timeoutMs: 90_000 },
    );
    expect((await t.json('DELETE', `/vod/v1/assets/${body.id}`)).status).toBe(200);

    const mine = () => receiver.received.filter((r) => r.json?.source === `/tenant/${t.id}`);
    await receiver.waitFor(() => mine().length >= 6, 30_000);
    expect(mine().map((r) => [r.json.type, r.json.data.id])).toEqual([
      ['vod.file.created', fileId],
      ['vod.file.completed', fileId],
      ['vod.asset.created', body.id],
      ['vod.output.available', expect.any(String)],
      ['vod.asset.available', body.id],
      ['vod.asset.deleted', body.id],
    ]);
    for (const got of mine()) {
      const expected = expectedSignatures(secret, got);
      expect(got.headers.x_svc_signature_v1).toBe(expected.svc);
      expect(got.headers['webhook-signature']).toBe(expected.standard);
      expect(got.json.specVersion).toBe('1.0');
    }
    expect(mine()[3].json.data.assetId).toBe(body.id);
  });

  it('sends vod.output.progress while an output is transcoded, on whole 10% steps, before vod.output.available', async () => {
    const t = await p.createTenant();
    const hook = await t.json('POST', '/notifications/v1/webhook', {
      name: 'progress',
      url: receiver.url,
      eventTypes: ['vod.output.progress', 'vod.output.available'],
    });
    expect(hook.status, JSON.stringify(hook.body)).toBe(200);
    const types = (await t.json('GET', '/notifications/v1/webhook-events/types')).body.data as string[];
    expect(types).toContain('vod.output.progress');

    const fileId = await uploadFile(t, await makeClip(dir, 'progress', { width: 320, height: 180, seconds: 2, audio: [] }));
    const { body } = await t.json('POST', '/vod/v1/assets', { transcodedSources: [{ fileId }], preset: 'mp4-h264-download' });
    const mine = () => receiver.received.filter((r) => r.json?.source === `/tenant/${t.id}`);
    await receiver.waitFor(() => mine().some((r) => r.json.type === 'vod.output.available'), 90_000);

    const received = mine().map((r) => r.json);
    const progress = received.filter((e) => e.type === 'vod.output.progress');
    expect(progress.length).toBeGreaterThanOrEqual(1);
    const available = received.findIndex((e) => e.type === 'vod.output.available');
    expect(received.findIndex((e) => e.type === 'vod.output.progress')).toBeLessThan(available);
    const outputId = received[available].data.id;
    for (const e of progress) {
      expect(e.data).toEqual({ id: outputId, assetId: body.id, progressPercent: expect.any(Number) });
      expect(e.data.progressPercent % 10).toBe(0);
      expect(e.data.progressPercent).toBeGreaterThanOrEqual(10);
      expect(e.data.progressPercent).toBeLessThanOrEqual(90);
    }
    // Rising, one event per step at most.
    const percents = progress.map((e) => e.data.progressPercent);
    expect([...percents].sort((a, b) => a - b)).toEqual(percents);
    expect(new Set(percents).size).toBe(percents.length);
  });
});
