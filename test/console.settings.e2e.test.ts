import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { launchBrowser } from './helpers/browser.ts';
import { atPhoneWidth, reviewScreen, shotsDir, signIn } from './helpers/console.ts';
import { tempDir } from './helpers/media.ts';
import { describeOnDb, startPlatform, type TestPlatform, type TestTenant } from './helpers/platform.ts';
import { WebhookReceiver } from './helpers/webhookReceiver.ts';

const { dir, cleanup } = tempDir('mediaplane-console-settings-');
afterAll(cleanup);
const SHOTS = shotsDir(dir);

/**
 * The console's Settings (API keys, webhooks, the signing secret), Streaming (playback tokens, allowed domains) and DRM
 * (license statistics, policies) screens in headless Chromium, against a real webhook receiver; and both read-only for a Viewer key.
 */
describeOnDb('pglite', 'Tenant console: Settings, Streaming and DRM', (kind) => {
  let p: TestPlatform;
  let t: TestTenant;
  let browser: Browser;
  let receiver: WebhookReceiver;
  let viewerKey: string;

  beforeAll(async () => {
    p = await startPlatform(kind, { MEDIAPLANE_WEBHOOK_ALLOW_PRIVATE: 'true' });
    t = await p.createTenant();
    viewerKey = (await t.json('POST', '/core/v1/api-key', { name: 'console viewer', roleType: 'Viewer' })).body.key;
    receiver = await WebhookReceiver.start();
    browser = await launchBrowser();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await receiver?.close();
    await p?.stop();
  });

  it('creates an API key whose secret is shown once and copied, and deletes it after a confirmation', async () => {
    const page = await signIn(browser, p.baseUrl, t.id, t.key);
    page.on('dialog', (d) => void d.accept());
    await page.getByRole('link', { name: 'Settings' }).click();
    await page.getByLabel('Key name').fill('CI deploy');
    await page.getByLabel('Role').selectOption('Editor');
    await page.getByRole('button', { name: 'Create API key' }).click();
    await expect.poll(() => page.locator('code.key-secret').count(), { timeout: 30_000 }).toBe(1);
    const secret = (await page.locator('code.key-secret').textContent())!;
    await page.getByRole('button', { name: 'Copy the new API key' }).click();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secret);
    // The secret works, with the role chosen.
    const made = p.client(t.id, t.name, secret);
    expect((await made.json('GET', '/vod/v1/assets')).status).toBe(200);
    expect((await made.json('POST', '/core/v1/api-key', { name: 'x', roleType: 'Viewer' })).status).toBe(403);
    const row = page.locator('tr').filter({ hasText: 'CI deploy' });
    await expect.poll(() => row.count(), { timeout: 30_000 }).toBe(1);
    expect(await row.textContent()).toContain('Editor');
    // Left and come back: the secret is not shown again (the API never gives it again).
    await page.getByRole('link', { name: 'Home' }).click();
    await page.getByRole('link', { name: 'Settings' }).click();
    await expect.poll(() => row.count(), { timeout: 30_000 }).toBe(1);
    expect(await page.getByText(secret).count()).toBe(0);
    await row.getByRole('button', { name: 'Delete API key CI deploy' }).click();
    await expect.poll(() => row.count(), { timeout: 30_000 }).toBe(0);
    expect((await made.json('GET', '/vod/v1/assets')).status).toBe(401);
    await page.context().close();
  }, 120_000);

  it('creates a webhook, sends it a test the receiver gets, shows its event log, and shows and rotates the signing secret', async () => {
    const page = await signIn(browser, p.baseUrl, t.id, t.key);
    page.on('dialog', (d) => void d.accept());
    await page.goto(`${p.baseUrl}/console#/settings`);
    await page.getByLabel('Webhook name').fill('Receiver');
    await page.getByLabel('URL').fill(receiver.url);
    await page.getByRole('button', { name: 'Create webhook' }).click();
    await expect.poll(() => page.getByText('Choose at least one event type.').isVisible()).toBe(true);
    await page.getByLabel('webhook.test').check();
    await page.getByRole('button', { name: 'Create webhook' }).click();
    const hook = page.locator('[data-webhook]').filter({ hasText: 'Receiver' });
    await expect.poll(() => hook.count(), { timeout: 30_000 }).toBe(1);
    expect((await t.json('GET', '/notifications/v1/webhook')).body.items).toMatchObject([
      { name: 'Receiver', url: receiver.url, eventTypes: ['webhook.test'] },
    ]);

    await hook.getByRole('button', { name: 'Send test to Receiver' }).click();
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'Receiver answered 200: ok' }).count(), { timeout: 30_000 }).toBe(1);
    expect(receiver.received.map((r) => r.json.type)).toContain('webhook.test');
    await hook.getByRole('button', { name: 'Event log of Receiver' }).click();
    await expect.poll(() => hook.locator('.event-log').textContent(), { timeout: 30_000 }).not.toContain('Loading');

    await page.getByRole('button', { name: 'Show signing secret' }).click();
    const secret = (await t.json('GET', '/notifications/v1/webhook/signature-secret')).body.secret;
    await expect.poll(() => page.locator('code.secret').textContent(), { timeout: 30_000 }).toBe(secret);
    await page.getByRole('button', { name: 'Rotate signing secret' }).click();
    await expect.poll(async () => (await t.json('GET', '/notifications/v1/webhook/signature-secret')).body.secret, { timeout: 30_000 }).not.toBe(secret);
    await expect.poll(() => page.locator('code.secret').textContent()).toBe((await t.json('GET', '/notifications/v1/webhook/signature-secret')).body.secret);
    await reviewScreen(page, SHOTS, 'console-settings');
    await atPhoneWidth(page, `${SHOTS}/console-settings-phone.png`);

    await hook.getByRole('button', { name: 'Delete webhook Receiver' }).click();
    await expect.poll(async () => (await t.json('GET', '/notifications/v1/webhook')).body.items.length, { timeout: 30_000 }).toBe(0);
    await page.context().close();
  }, 120_000);

  it('edits a webhook: its name, URL and event types, and enables a disabled one again', async () => {
    const types: string[] = (await t.json('GET', '/notifications/v1/webhook-events/types')).body.data;
    const other = types.find((x) => x !== 'webhook.test')!;
    const made = (
      await t.json('POST', '/notifications/v1/webhook', { name: 'Paused', url: `${receiver.url}/old`, eventTypes: ['webhook.test'], isEnabled: false })
    ).body;
    const page = await signIn(browser, p.baseUrl, t.id, t.key);
    await page.goto(`${p.baseUrl}/console#/settings`);
    const hook = page.locator(`[data-webhook="${made.id}"]`);
    await expect.poll(() => hook.locator('.badge').textContent(), { timeout: 30_000 }).toBe('Disabled');
    await hook.getByRole('button', { name: 'Edit webhook Paused' }).click();
    const form = page.getByRole('form', { name: 'Edit webhook Paused' });
    // The form holds the webhook as it is.
    expect(await form.getByLabel('Name', { exact: true }).inputValue()).toBe('Paused');
    expect(await form.getByLabel('URL', { exact: true }).inputValue()).toBe(`${receiver.url}/old`);
    await expect.poll(() => form.getByLabel('webhook.test', { exact: true }).isChecked(), { timeout: 30_000 }).toBe(true);
    expect(await form.getByLabel('Enabled', { exact: true }).isChecked()).toBe(false);
    // None chosen is refused before sending.
    await form.getByLabel('webhook.test', { exact: true }).uncheck();
    await form.getByRole('button', { name: 'Save webhook' }).click();
    await expect.poll(() => form.getByText('Choose at least one event type.').isVisible()).toBe(true);
    await form.getByLabel('Name', { exact: true }).fill('Renamed');
    await form.getByLabel('URL', { exact: true }).fill(receiver.url);
    await form.getByLabel('webhook.test', { exact: true }).check();
    await form.getByLabel(other, { exact: true }).check();
    await form.getByLabel('Enabled', { exact: true }).check();
    await form.getByRole('button', { name: 'Save webhook' }).click();
    await expect.poll(() => hook.locator('strong').textContent(), { timeout: 30_000 }).toBe('Renamed');
    expect((await t.json('GET', `/notifications/v1/webhook/${made.id}`)).body).toMatchObject({
      name: 'Renamed',
      url: receiver.url,
      eventTypes: expect.arrayContaining(['webhook.test', other]),
      isEnabled: true,
      status: 'Healthy',
    });
    expect(await hook.locator('.badge').textContent()).toBe('Healthy');
    expect(await page.getByRole('form', { name: /^Edit webhook/ }).count()).toBe(0);
    // Enabled at its new URL, it is sent to.
    await hook.getByRole('button', { name: 'Send test to Renamed' }).click();
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'Renamed answered 200' }).count(), { timeout: 30_000 }).toBe(1);
    expect((await t.json('DELETE', `/notifications/v1/webhook/${made.id}`)).status).toBeLessThan(300);
    await page.context().close();
  }, 120_000);

  it('requires playback tokens by default and adds and removes an allowed domain', async () => {
    const page = await signIn(browser, p.baseUrl, t.id, t.key);
    page.on('dialog', (d) => void d.accept());
    await page.getByRole('link', { name: 'Streaming' }).click();
    const required = page.getByLabel('Require a playback token by default');
    await expect.poll(() => page.locator('dd code').first().textContent(), { timeout: 30_000 }).toBeTruthy();
    expect(await required.isChecked()).toBe(false);
    await required.check();
    await expect
      .poll(async () => (await t.json('GET', '/streaming/v1/settings')).body.contentAcquisitionInfo.authorization.tokenRequiredPolicy, {
        timeout: 30_000,
      })
      .toBe(true);
    const { signingKeyId: kid, signingKey } = (await t.json('GET', '/streaming/v1/settings')).body.contentAcquisitionInfo.authorization;
    expect(await page.locator('code.secret').textContent()).not.toContain(signingKey);
    await page.getByRole('button', { name: 'Show signing key' }).click();
    expect(await page.locator('code.secret').textContent()).toBe(signingKey);
    await page.getByRole('button', { name: 'Rotate signing key' }).click();
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'Rotated' }).textContent(), { timeout: 30_000 }).not.toContain(kid);

    await page.getByLabel('Domain to allow').fill('*.example.com');
    await page.getByRole('button', { name: 'Add domain' }).click();
    const domains = page.getByRole('list', { name: 'Allowed domains' });
    await expect.poll(() => domains.textContent(), { timeout: 30_000 }).toContain('example.com');
    const listed = (await t.json('GET', '/streaming/v1/domains')).body;
    expect(listed).toHaveLength(1);
    await reviewScreen(page, SHOTS, 'console-streaming');
    await atPhoneWidth(page, `${SHOTS}/console-streaming-phone.png`);
    await domains.getByRole('button', { name: `Remove ${listed[0].url}` }).click();
    await expect.poll(async () => (await t.json('GET', '/streaming/v1/domains')).body.length, { timeout: 30_000 }).toBe(0);
    await expect.poll(() => page.getByText('No domain: pages of any site may play the media.').isVisible(), { timeout: 30_000 }).toBe(true);
    await page.context().close();
  }, 120_000);

  it('shows the license statistics as figures and charts, and creates a DRM policy from a template and deletes it', async () => {
    const page = await signIn(browser, p.baseUrl, t.id, t.key);
    page.on('dialog', (d) => void d.accept());
    await page.getByRole('link', { name: 'DRM' }).click();
    await expect
      .poll(() => page.locator('figure[data-metric="License requests"] [role="img"]').getAttribute('aria-label'), { timeout: 30_000 })
      .toMatch(/^License requests/);
    expect(await page.locator('dl.facts').textContent()).toContain('Licenses granted0');
    const templates = (await t.json('GET', '/drm/v1/policies/templates')).body.items;
    await expect.poll(() => page.getByLabel('Template').locator('option').count(), { timeout: 30_000 }).toBe(templates.length);
    await page.getByLabel('Template').selectOption(templates[0].id);
    expect(await page.getByText(templates[0].description).isVisible()).toBe(true);
    await page.getByLabel('Policy name').fill('Rentals');
    await page.getByRole('button', { name: 'Create policy' }).click();
    const row = page.getByRole('table', { name: 'DRM policies' }).locator('tr').filter({ hasText: 'Rentals' });
    await expect.poll(() => row.count(), { timeout: 30_000 }).toBe(1);
    expect((await t.json('GET', '/drm/v1/policies')).body.items).toMatchObject([
      { name: 'Rentals', licenseDurationSeconds: templates[0].licenseDurationSeconds, allowedOutputs: templates[0].allowedOutputs },
    ]);
    await reviewScreen(page, SHOTS, 'console-drm');
    await atPhoneWidth(page, `${SHOTS}/console-drm-phone.png`);
    await row.getByRole('button', { name: 'Delete policy Rentals' }).click();
    await expect.poll(async () => (await t.json('GET', '/drm/v1/policies')).body.items.length, { timeout: 30_000 }).toBe(0);
    await page.context().close();
  }, 120_000);

  it("edits a policy's fields, sets the DRM settings and the packager certificate, and shows the license log", async () => {
    const policy = (await t.json('POST', '/drm/v1/policies', { templateId: 'rental-48h', name: 'Rental' })).body;
    // A license granted and one refused (a key of another content), in the log of the last 24 hours.
    const keyId = (await t.json('POST', '/drm/v1/keys', { contentId: 'film-1', count: 1 })).body.keys[0].keyId as string;
    const token = (await t.json('POST', '/drm/v1/tokens', { contentId: 'film-1', userId: 'alice' })).body.token as string;
    const clearKey = (kid: string) =>
      p.fetch(`${p.baseUrl}/drm/v1/licenses/clearkey`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ kids: [kid] }),
      });
    expect((await clearKey(Buffer.from(keyId.replace(/-/g, ''), 'hex').toString('base64url'))).status).toBe(200);
    expect((await clearKey(Buffer.alloc(16, 7).toString('base64url'))).status).toBe(403);

    const page = await signIn(browser, p.baseUrl, t.id, t.key);
    page.on('dialog', (d) => void d.accept());
    await page.getByRole('link', { name: 'DRM' }).click();
    const log = page.getByRole('table', { name: 'License requests' });
    await expect.poll(() => log.locator('tbody tr').count(), { timeout: 30_000 }).toBe(2);
    expect(await log.locator('tbody tr').first().textContent()).toContain('drm_key_not_allowed');
    expect(await log.locator('tbody tr').last().textContent()).toContain('Granted');
    expect(await page.getByRole('table', { name: 'Refusals by error code' }).locator('tbody').textContent()).toBe('drm_key_not_allowed4031');

    const row = page.getByRole('table', { name: 'DRM policies' }).locator(`tr[data-policy="${policy.id}"]`);
    await row.getByRole('button', { name: 'Edit policy Rental' }).click();
    const form = page.getByRole('form', { name: 'Edit policy Rental' });
    expect(await form.getByLabel('License duration (seconds)').inputValue()).toBe(String(policy.licenseDurationSeconds));
    await form.getByLabel('Name', { exact: true }).fill('Weekend rental');
    await form.getByLabel('License duration (seconds)').fill('7200');
    await form.getByLabel('Rental window (seconds)').fill('');
    await form.getByLabel('Concurrent streams').fill('2');
    await form.getByLabel('ClearKey (the DASH ClearKey license)').uncheck();
    await form.getByLabel('Aes128 (the HLS AES-128 key)').check();
    await form.getByRole('button', { name: 'Save policy' }).click();
    await expect.poll(() => row.locator('td').first().textContent(), { timeout: 30_000 }).toBe('Weekend rental');
    expect((await t.json('GET', `/drm/v1/policies/${policy.id}`)).body).toMatchObject({
      name: 'Weekend rental',
      licenseDurationSeconds: 7200,
      rentalWindowSeconds: null,
      concurrentStreams: 2,
      allowedOutputs: ['Aes128'],
    });
    expect(await row.textContent()).toContain('2 h');

    await expect.poll(() => page.getByLabel('Default policy').locator('option').count(), { timeout: 30_000 }).toBe(2);
    await page.getByLabel('Default policy').selectOption({ label: 'Weekend rental' });
    await page.getByLabel('Token lifetime (seconds)').fill('600');
    await page.getByRole('button', { name: 'Save DRM settings' }).click();
    await expect
      .poll(async () => (await t.json('GET', '/drm/v1/settings')).body, { timeout: 30_000 })
      .toMatchObject({ defaultPolicyId: policy.id, tokenTtlSeconds: 600 });

    execFileSync(
      'openssl',
      ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'), '-days', '2', '-subj', '/CN=packager'],
      { stdio: 'ignore' },
    );
    await expect.poll(() => page.getByText('No certificate').count(), { timeout: 30_000 }).toBe(1);
    await page.getByLabel('Certificate (PEM)').fill(readFileSync(join(dir, 'cert.pem'), 'utf8'));
    await page.getByRole('button', { name: 'Set certificate' }).click();
    const certificate = page.locator('dl[aria-label="Packager certificate"]');
    await expect.poll(() => certificate.count(), { timeout: 30_000 }).toBe(1);
    const stored = (await t.json('GET', '/drm/v1/certificate')).body;
    expect(stored.subject).toBe('CN=packager');
    expect(await certificate.textContent()).toContain(stored.fingerprint256);
    expect((await t.json('GET', '/drm/v1/settings')).body.hasCertificate).toBe(true);
    await reviewScreen(page, SHOTS, 'console-drm-settings');
    await page.getByRole('button', { name: 'Remove certificate' }).click();
    await expect.poll(() => page.getByText('No certificate').count(), { timeout: 30_000 }).toBe(1);
    expect((await t.json('GET', '/drm/v1/certificate')).status).toBe(404);
    await page.context().close();
  }, 120_000);

  it('a Viewer key finds every control of Settings, Streaming and DRM disabled, with the reason', async () => {
    await t.json('POST', '/streaming/v1/domains', { url: 'example.org' });
    const page = await signIn(browser, p.baseUrl, t.id, viewerKey);
    await page.getByRole('link', { name: 'Settings' }).click();
    await expect.poll(() => page.getByText('only an Admin key reads and manages API keys and webhooks').isVisible(), { timeout: 30_000 }).toBe(true);
    for (const name of ['Create API key', 'Create webhook', 'Show signing secret', 'Rotate signing secret'])
      expect(await page.getByRole('button', { name }).isDisabled(), name).toBe(true);
    await reviewScreen(page, SHOTS, 'console-settings-viewer');
    await page.getByRole('link', { name: 'Streaming' }).click();
    const domains = page.getByRole('list', { name: 'Allowed domains' });
    await expect.poll(() => domains.textContent(), { timeout: 30_000 }).toContain('example.org');
    expect(await page.getByLabel('Require a playback token by default').isDisabled()).toBe(true);
    for (const name of ['Add domain', 'Rotate signing key', 'Remove example.org'])
      expect(await page.getByRole('button', { name }).isDisabled(), name).toBe(true);
    await reviewScreen(page, SHOTS, 'console-streaming-viewer');
    await page.getByRole('link', { name: 'DRM' }).click();
    await expect.poll(() => page.getByLabel('Template').locator('option').count(), { timeout: 30_000 }).toBeGreaterThan(0);
    expect(await page.getByRole('button', { name: 'Create policy' }).isDisabled()).toBe(true);
    expect(await page.getByLabel('Policy name').isDisabled()).toBe(true);
    const reason = "This API key's role is Viewer: only an Admin key changes this.";
    const edit = page.getByRole('button', { name: 'Edit policy Weekend rental' });
    await expect.poll(() => edit.count(), { timeout: 30_000 }).toBe(1);
    for (const control of [
      edit,
      page.getByRole('button', { name: 'Save DRM settings' }),
      page.getByRole('button', { name: 'Set certificate' }),
      page.getByLabel('Default policy'),
    ]) {
      expect(await control.isDisabled(), String(control)).toBe(true);
      expect(await control.getAttribute('title'), String(control)).toBe(reason);
    }
    expect(await page.getByRole('table', { name: 'License requests' }).locator('tbody tr').count()).toBeGreaterThan(0);
    await reviewScreen(page, SHOTS, 'console-drm-viewer');
    await page.context().close();
  }, 120_000);
});
