import { afterAll, beforeAll, expect, it } from 'vitest';
import { makeClip, tempDir } from './helpers/media.ts';
import { describeEachDb, startPlatform, type TestPlatform } from './helpers/platform.ts';
import { uploadFile, waitFor } from './helpers/upload.ts';
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
    await waitFor(() => t.json('GET', `/vod/v1/assets/${body.id}`), (r) => r.body.status === 'Available', 90_000);
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
      expect(got.headers['x_svc_signature_v1']).toBe(expected.svc);
      expect(got.headers['webhook-signature']).toBe(expected.standard);
      expect(got.json.specVersion).toBe('1.0');
    }
    expect(mine()[3].json.data.assetId).toBe(body.id);
  });
});
