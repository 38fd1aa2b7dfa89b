import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { launchBrowser } from './helpers/browser.ts';
import { atPhoneWidth as phoneWidth, reviewScreen, shotsDir, signIn as signInAs } from './helpers/console.ts';
import { makeClip, tempDir } from './helpers/media.ts';
import { describeOnDb, startPlatform, type TestPlatform, type TestTenant } from './helpers/platform.ts';
import { uploadFile } from './helpers/upload.ts';
import { until } from './helpers/until.ts';

const { dir, cleanup } = tempDir('mediaplane-console-');
afterAll(cleanup);
const SHOTS = shotsDir(dir);

/**
 * The tenant console (`/console`) in headless Chromium, driven as a person would: by the labels and names of its
 * controls. It calls the API through the SDK's browser build; uploads and transcodes are real.
 */
describeOnDb('pglite', 'Tenant console', (kind) => {
  let p: TestPlatform;
  let t: TestTenant;
  let browser: Browser;
  let clip: string;
  let viewerKey: string;

  beforeAll(async () => {
    p = await startPlatform(kind);
    t = await p.createTenant();
    clip = await makeClip(dir, 'clip', { seconds: 2 });
    const viewer = await t.json('POST', '/core/v1/api-key', { name: 'console viewer', roleType: 'Viewer' });
    viewerKey = viewer.body.key;
    browser = await launchBrowser();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await p?.stop();
  });

  const signIn = (key: string): Promise<Page> => signInAs(browser, p.baseUrl, t.id, key);

  const atPhoneWidth = (page: Page, shot: string) => phoneWidth(page, join(SHOTS, shot));

  it('serves its page, its modules and the SDK build with security headers, and nothing else from disk', async () => {
    const page = await p.fetch(`${p.baseUrl}/console`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    expect(await page.text()).toContain('/console/app.js');
    const sdk = await p.fetch(`${p.baseUrl}/console/sdk/index.js`);
    expect(sdk.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(await sdk.text()).toContain('createClient');
    for (const path of ['/console/nothing.js', '/console/sdk/index.d.ts', '/console/%2e%2e%2fpackage.json', '/console/sdk/..%2f..%2fpackage.json']) {
      const res = await p.fetch(`${p.baseUrl}${path}`);
      expect(res.status, path).toBe(404);
      expect((await res.json()).status.code, path).toBe('route_not_found');
    }
  });

  it("a wrong key is refused with the API's own message, and nothing is kept", async () => {
    const refused = await p.client(t.id, t.name, 'mpk_wrong').json('GET', `/core/v1/settings/tenant/${t.id}`);
    expect(refused.status).toBe(401);
    const page = await (await browser.newContext({ bypassCSP: true })).newPage();
    await page.goto(`${p.baseUrl}/console`);
    await page.getByLabel('Tenant ID').fill(t.id);
    await page.getByLabel('API key').fill('mpk_wrong');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent(), { timeout: 30_000 }).toBe(refused.body.status.message);
    await reviewScreen(page, SHOTS, 'console-signin-refused');
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    await page.context().close();
  }, 60_000);

  it('signs in by label and shows the tenant: name, id, status, channel limit; the key is in sessionStorage only', async () => {
    const page = await signIn(t.key);
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent(), { timeout: 30_000 }).toBe(t.name);
    const facts = page.locator('dl.facts');
    await expect.poll(() => facts.textContent()).toContain('Channel limit');
    await expect.poll(() => facts.textContent()).toMatch(/Channel limit\d+/);
    expect(await facts.textContent()).toContain(t.id);
    expect(await facts.textContent()).toContain('Active');
    await expect.poll(() => page.getByText('No asset is being processed.').isVisible()).toBe(true);
    await expect.poll(() => page.getByText('No file is being uploaded.').isVisible()).toBe(true);
    expect(await page.evaluate(() => ({ session: sessionStorage.length, local: localStorage.length, cookies: document.cookie }))).toEqual({
      session: 1,
      local: 0,
      cookies: '',
    });
    await reviewScreen(page, SHOTS, 'console-home');
    await atPhoneWidth(page, 'console-home-phone.png');
    // A reload keeps the session of this tab.
    await page.reload();
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent(), { timeout: 30_000 }).toBe(t.name);
    await page.context().close();
  }, 60_000);

  it('uploads a clip, creates an asset with a preset, sees it become Available, plays it, copies its URL and deletes it', async () => {
    const page = await signIn(t.key);
    await page.getByRole('link', { name: 'VOD' }).click();
    await expect.poll(() => page.locator('#preset-help').textContent(), { timeout: 30_000 }).toContain('Copies the H.264/AAC source streams');
    await page.getByLabel('Files').setInputFiles(clip);
    await page.getByRole('button', { name: 'Upload' }).click();
    const bar = page.getByRole('progressbar', { name: 'Upload of clip.mp4' });
    await expect.poll(() => bar.evaluate((e) => (e as HTMLProgressElement).value), { timeout: 60_000 }).toBe(100);
    await reviewScreen(page, SHOTS, 'console-vod');
    await page.getByRole('button', { name: 'Create asset' }).click();
    await page.waitForURL(/#\/assets\/[0-9a-f-]{36}$/, { timeout: 30_000 });
    const assetId = page.url().split('/').at(-1)!;
    expect((await t.json('GET', `/vod/v1/assets/${assetId}`)).body).toMatchObject({ title: 'clip', preset: 'remux-hls-mp4' });

    const details = page.locator('dl.facts');
    await expect.poll(() => details.textContent(), { timeout: 120_000, interval: 1000 }).toContain('Available');
    await page.getByRole('button', { name: 'Play HLS' }).click();
    await page.waitForFunction(() => (document.getElementById('player') as HTMLVideoElement).currentTime > 0.5, null, { timeout: 60_000 });
    await page.screenshot({ path: join(SHOTS, 'console-asset.png'), fullPage: true });
    await atPhoneWidth(page, 'console-asset-phone.png');

    const asset = (await t.json('GET', `/vod/v1/assets/${assetId}`)).body;
    const hls = asset.outputs[0].endpoints.find((e: { format: string }) => e.format === 'HLS');
    await page.getByRole('row').filter({ hasText: hls.url }).getByRole('button', { name: 'Copy URL' }).click();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(hls.url);

    page.on('dialog', (d) => void d.accept());
    await page.getByRole('button', { name: 'Delete asset' }).click();
    await page.waitForURL(/#\/assets$/, { timeout: 30_000 });
    expect((await t.json('GET', `/vod/v1/assets/${assetId}`)).status).toBe(404);
    await page.context().close();
  }, 300_000);

  it('creates a live channel, shows its ingest URL and stream key with copy buttons, starts and stops it', async () => {
    const page = await signIn(t.key);
    await page.getByRole('link', { name: 'Live' }).click();
    await page.getByLabel('Channel name').fill('Studio one');
    await page.getByRole('button', { name: 'Create channel' }).click();
    const card = page.locator('[data-channel]').filter({ hasText: 'Studio one' });
    await expect.poll(() => card.textContent(), { timeout: 30_000 }).toContain('Off');
    const id = (await card.getAttribute('data-channel'))!;
    const config = (await t.json('GET', `/live/v1/channels/${id}/configuration`)).body;
    const url: string = config.input.transportPrimaryIngestUrl;
    expect(url).toMatch(/^rtmp:\/\/.+\/[A-Za-z0-9_-]{32}$/);

    await page.getByRole('button', { name: 'Ingest of Studio one' }).click();
    await page.getByRole('button', { name: 'Copy Ingest URL' }).click();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(url);
    await page.getByRole('button', { name: 'Copy stream key' }).click();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(url.slice(url.lastIndexOf('/') + 1));
    await reviewScreen(page, SHOTS, 'console-channels');

    await page.getByRole('button', { name: 'Start Studio one' }).click();
    await until(
      () => t.json('GET', `/live/v1/channels/${id}/status`),
      (r) => r.body?.status === 'Starting' || r.body?.status === 'On',
      { timeoutMs: 30_000, what: 'the channel to start' },
    );
    await expect.poll(() => page.getByRole('button', { name: 'Stop Studio one' }).isEnabled(), { timeout: 30_000 }).toBe(true);
    await page.getByRole('button', { name: 'Stop Studio one' }).click();
    await expect.poll(() => card.locator('.badge').textContent(), { timeout: 120_000, interval: 1000 }).toBe('Off');
    expect((await t.json('GET', `/live/v1/channels/${id}/status`)).body.status).toBe('Off');
    await page.context().close();
  }, 300_000);

  it('a Viewer key gets the console read-only: write controls disabled, with the reason', async () => {
    const fileId = await uploadFile(t, clip);
    const created = await t.json('POST', '/vod/v1/assets', { transcodedSources: [{ fileId }], preset: 'dash-h264-ladder', title: 'Seen by a viewer' });
    expect(created.status).toBe(200);
    const page = await signIn(viewerKey);
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent(), { timeout: 30_000 }).toBe(t.name);
    expect(await page.locator('dl.facts').textContent()).toContain('Viewer (read only)');
    await page.getByRole('link', { name: 'VOD' }).click();
    const reason = "This API key's role is Viewer: it can read but not change content.";
    await expect.poll(() => page.getByText(reason).isVisible(), { timeout: 30_000 }).toBe(true);
    expect(await page.getByLabel('Files').isDisabled()).toBe(true);
    expect(await page.getByRole('button', { name: 'Upload' }).isDisabled()).toBe(true);
    expect(await page.getByRole('button', { name: 'Upload' }).getAttribute('title')).toBe(reason);
    await page.getByRole('link', { name: 'Seen by a viewer' }).click();
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent(), { timeout: 30_000 }).toBe('Seen by a viewer');
    expect(await page.getByRole('button', { name: 'Delete asset' }).isDisabled()).toBe(true);
    for (const name of ['Add output', 'Save changes']) expect(await page.getByRole('button', { name }).isDisabled(), name).toBe(true);
    expect(await page.getByLabel('Title').isDisabled()).toBe(true);
    await expect.poll(() => page.getByRole('button', { name: 'Remove the dash-h264-ladder output' }).isDisabled(), { timeout: 30_000 }).toBe(true);
    // Reading and playing are the Viewer's: the DASH output plays in the page (dash.js, as the embed player serves it).
    await expect.poll(() => page.locator('dl.facts').textContent(), { timeout: 120_000, interval: 1000 }).toContain('Available');
    await page.getByRole('button', { name: 'Play DASH' }).click();
    await page.waitForFunction(() => (document.getElementById('player') as HTMLVideoElement).currentTime > 0.5, null, { timeout: 60_000 });
    await page.getByRole('link', { name: 'Live' }).click();
    await expect.poll(() => page.getByRole('button', { name: 'Create channel' }).isDisabled(), { timeout: 30_000 }).toBe(true);
    expect(await page.getByLabel('Channel name').isDisabled()).toBe(true);
    await page.context().close();
  }, 300_000);
});
