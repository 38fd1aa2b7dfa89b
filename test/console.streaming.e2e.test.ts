import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { launchBrowser } from './helpers/browser.ts';
import { readQrCode } from './helpers/qr.ts';
import { vodAssets } from './helpers/commands.ts';
import { atPhoneWidth, chartInk, reviewScreen, shotsDir, signIn } from './helpers/console.ts';
import { makeClip, makeImage, tempDir } from './helpers/media.ts';
import { describeOnDb, startPlatform, type TestPlatform, type TestTenant } from './helpers/platform.ts';
import { until } from './helpers/until.ts';
import { uploadFile } from './helpers/upload.ts';

const { dir, cleanup } = tempDir('mediaplane-console-streaming-');

/** The page's QR code as downloaded through its link, read by zbarimg. */
async function scanQr(page: Page): Promise<string> {
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Download QR code' }).click()]);
  const file = join(dir, `qr-${randomUUID()}.png`);
  await download.saveAs(file);
  return readQrCode(file);
}
afterAll(cleanup);
const SHOTS = shotsDir(dir);

/**
 * The console's Streaming screen beyond its settings (test/console.settings.e2e.test.ts): the catalogue and an
 * asset's page (chapters, tags, images, frames), its embed and QR codes, and the analytics charts, over a real
 * platform and a real VOD asset; and the same page read-only for a Viewer key.
 */
describeOnDb('pglite', 'Tenant console: streaming catalogue, embed and analytics', (kind) => {
  let p: TestPlatform;
  let t: TestTenant;
  let browser: Browser;
  let viewerKey: string;
  let assetId: string;
  /** A second asset, whose own settings the tests change (a token required): the first plays as the tenant says. */
  let privateId: string;
  let image: string;
  /** The embed page of the asset, as the platform names it. */
  let player: string;

  beforeAll(async () => {
    p = await startPlatform(kind);
    t = await p.createTenant();
    viewerKey = (await t.json('POST', '/core/v1/api-key', { name: 'console viewer', roleType: 'Viewer' })).body.key;
    const [clip] = await Promise.all([
      makeClip(dir, 'clip', { seconds: 2, width: 160, height: 90, fps: 10, audio: [{ language: 'eng', frequency: 440 }] }),
      makeImage(dir, 'cover', { width: 32, height: 18, color: 'orange' }).then((path) => (image = path)),
    ]);
    const assets = vodAssets(t);
    [assetId, privateId] = await Promise.all(
      ['Harbour', 'Private'].map(
        async (title) => (await assets.create({ transcodedSources: [{ fileId: await uploadFile(t, clip) }], preset: 'remux-hls-mp4', title })).id,
      ),
    );
    for (const id of [assetId, privateId]) expect((await assets.settled(id)).status).toBe('Available');
    player = `${p.baseUrl}/player/v1/${t.id}/${assetId}`;
    // Two viewers of the asset in one request, so in one minute: one played 10 s after a 400 ms start and a stall,
    // the other 5 s after 600 ms.
    const [a, b] = [randomUUID(), randomUUID()];
    const of = { assetId, assetType: 'Vod', playerTech: 'hls.js' };
    const beacons = await p.fetch(`${p.baseUrl}/player/v1/${t.id}/beacons`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        beacons: [
          { impressionId: a, kind: 'start', startupTimeMs: 400, ...of },
          { impressionId: b, kind: 'start', startupTimeMs: 600, ...of },
          { impressionId: a, kind: 'buffering', bufferingMs: 500, ...of },
          { impressionId: a, kind: 'heartbeat', playedSeconds: 10, videoBitrate: 800_000, ...of },
          { impressionId: b, kind: 'heartbeat', playedSeconds: 5, videoBitrate: 800_000, ...of },
          { impressionId: a, kind: 'end', videoStarted: true, ...of },
          { impressionId: b, kind: 'end', videoStarted: true, ...of },
        ],
      }),
    });
    expect(beacons.status, await beacons.clone().text()).toBe(204);
    browser = await launchBrowser();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await p?.stop();
  });

  const asset = async () => (await t.json('GET', `/streaming/v1/assets/${assetId}`)).body;
  const openAsset = async (key: string): Promise<Page> => {
    const page = await signIn(browser, p.baseUrl, t.id, key);
    await page.goto(`${p.baseUrl}/console#/streaming/${assetId}`);
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent(), { timeout: 30_000 }).toBe('Harbour');
    return page;
  };
  const chart = (page: Page, name: string) => page.locator(`figure[data-metric="${name}"]`);
  const summary = (page: Page, name: string) => chart(page, name).locator('[role="img"]').getAttribute('aria-label');

  it('serves the chart library from its npm package under the console headers, and no other file of it', async () => {
    const lib = await p.fetch(`${p.baseUrl}/console/lib/uPlot.esm.js`);
    expect(lib.status).toBe(200);
    expect(lib.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(lib.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(await lib.text()).toContain('export { uPlot as default }');
    expect((await p.fetch(`${p.baseUrl}/console/lib/uPlot.min.css`)).headers.get('content-type')).toBe('text/css; charset=utf-8');
    for (const path of ['/console/lib/uPlot.cjs.js', '/console/lib/..%2fpackage.json', '/console/lib/%2e%2e%2f%2e%2e%2fpackage.json'])
      expect((await p.fetch(`${p.baseUrl}${path}`)).status, path).toBe(404);
  });

  it('lists the asset in the catalogue, with the tenant analytics drawn from the beacons, and opens its page', async () => {
    const page = await signIn(browser, p.baseUrl, t.id, t.key);
    await page.getByRole('link', { name: 'Streaming', exact: true }).click();
    const row = page.getByRole('table', { name: 'Streaming assets' }).locator(`tr[data-asset="${assetId}"]`);
    await expect.poll(() => row.textContent(), { timeout: 30_000 }).toMatch(/^HarbourVOD assetAvailable0:02/);
    await expect.poll(() => summary(page, 'Plays'), { timeout: 30_000 }).toMatch(/^Plays in plays: \d+ values .* highest 2\b/);
    await expect.poll(() => chartInk(chart(page, 'Plays')), { timeout: 30_000 }).toBeGreaterThan(20);
    await reviewScreen(page, SHOTS, 'console-streaming');
    await row.getByRole('link', { name: 'Harbour' }).click();
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent(), { timeout: 30_000 }).toBe('Harbour');
    expect(page.url()).toBe(`${p.baseUrl}/console#/streaming/${assetId}`);
    await page.context().close();
  }, 60_000);

  it('adds, edits and deletes a chapter, refusing an end before the start; edits the tags and the title', async () => {
    const page = await openAsset(t.key);
    page.on('dialog', (d) => void d.accept());
    const chapters = page.getByRole('table', { name: 'Chapters' });
    await page.getByLabel('Chapter title').fill('Opening');
    await page.getByLabel('Starts at').fill('0:01');
    await page.getByLabel('Ends at').fill('1');
    await page.getByRole('button', { name: 'Add chapter' }).click();
    await expect.poll(() => page.getByText('The end must be after the start.').isVisible()).toBe(true);
    await page.getByLabel('Starts at').fill('0');
    await page.getByRole('button', { name: 'Add chapter' }).click();
    await expect.poll(() => chapters.locator('tbody tr').first().textContent(), { timeout: 30_000 }).toMatch(/^Opening0:000:01/);
    expect((await asset()).chapters).toMatchObject([{ title: 'Opening', startSecond: 0, endSecond: 1 }]);

    await chapters.getByRole('button', { name: 'Edit chapter Opening' }).click();
    expect(await page.getByLabel('Chapter title').inputValue()).toBe('Opening');
    await page.getByLabel('Chapter title').fill('Intro');
    await page.getByLabel('Ends at').fill('0:02');
    await page.getByRole('button', { name: 'Save chapter' }).click();
    await expect.poll(async () => (await asset()).chapters, { timeout: 30_000 }).toMatchObject([{ title: 'Intro', startSecond: 0, endSecond: 2 }]);
    await expect.poll(() => chapters.locator('tbody tr').first().textContent(), { timeout: 30_000 }).toMatch(/^Intro0:000:02/);
    expect(await page.getByRole('button', { name: 'Add chapter' }).isVisible()).toBe(true);

    await page.getByLabel('Tags to add').fill('news, Sport');
    await page.getByRole('button', { name: 'Add tags' }).click();
    await expect.poll(async () => (await asset()).tags.map((x: { name: string }) => x.name).sort(), { timeout: 30_000 }).toEqual(['Sport', 'news']);
    await page.getByRole('button', { name: 'Remove tag Sport' }).click();
    await expect.poll(async () => (await asset()).tags.map((x: { name: string }) => x.name), { timeout: 30_000 }).toEqual(['news']);
    await expect.poll(() => page.getByRole('list', { name: 'Tags' }).textContent(), { timeout: 30_000 }).toBe('newsRemove');

    await page.getByLabel('Title', { exact: true }).fill('Harbour at dawn');
    await page.getByLabel('Description').fill('The boats come in.');
    await page.getByRole('button', { name: 'Save title and description' }).click();
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent(), { timeout: 30_000 }).toBe('Harbour at dawn');
    expect(await asset()).toMatchObject({ title: 'Harbour at dawn', description: 'The boats come in.' });
    await reviewScreen(page, SHOTS, 'console-streaming-asset');

    await chapters.getByRole('button', { name: 'Delete chapter Intro' }).click();
    await expect.poll(async () => (await asset()).chapters, { timeout: 30_000 }).toEqual([]);
    await expect.poll(() => chapters.textContent(), { timeout: 30_000 }).toContain('No chapters yet.');
    // Back to the title the other tests open the page by.
    await page.getByLabel('Title', { exact: true }).fill('Harbour');
    await page.getByRole('button', { name: 'Save title and description' }).click();
    await expect.poll(async () => (await asset()).title, { timeout: 30_000 }).toBe('Harbour');
    await page.context().close();
  }, 60_000);

  it('uploads an image and deletes it, and shows the frames taken from the video', async () => {
    const page = await openAsset(t.key);
    page.on('dialog', (d) => void d.accept());
    await page.getByLabel('Image file').setInputFiles(image);
    await page.getByRole('button', { name: 'Upload image' }).click();
    await expect.poll(async () => Object.keys((await asset()).images), { timeout: 30_000 }).toEqual(['cover.png']);
    const shown = page.getByRole('list', { name: 'Images' }).locator('li[data-image="cover.png"] img');
    // The image loaded from its URL (naturalWidth is 0 for a broken or refused one).
    await expect.poll(() => shown.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth), { timeout: 30_000 }).toBe(32);
    const frame = page.getByRole('list', { name: 'Frames' }).locator('li[data-frame="poster"] img');
    await expect.poll(() => frame.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth), { timeout: 60_000 }).toBeGreaterThan(0);
    expect(await page.getByRole('list', { name: 'Frames' }).locator('li[data-frame="frame_00001"]').textContent()).toBe('At 0:00');
    await reviewScreen(page, SHOTS, 'console-streaming-images');

    await page.getByRole('button', { name: 'Delete image cover.png' }).click();
    await expect.poll(async () => (await asset()).images, { timeout: 30_000 }).toEqual({});
    expect((await t.json('GET', `/streaming/v1/assets/${assetId}/images/uploaded`)).body.items).toEqual([]);
    await expect.poll(() => page.getByRole('list', { name: 'Images' }).textContent(), { timeout: 30_000 }).toBe('No images yet.');
    await page.context().close();
  }, 90_000);

  it("copies the embed code of the asset's player, and its QR code scans to the same page", async () => {
    const page = await openAsset(t.key);
    await expect.poll(() => page.getByLabel('Embed code').inputValue(), { timeout: 30_000 }).toContain('<iframe');
    await page.getByRole('button', { name: 'Copy embed code' }).click();
    const snippet = await page.evaluate(() => navigator.clipboard.readText());
    expect(/ src="([^"]+)"/.exec(snippet)?.[1]).toBe(player);
    expect(snippet).toMatch(/^<iframe src="[^"]+" title="Harbour" .*><\/iframe>$/);

    const qr = page.locator('img.qrcode');
    await expect.poll(() => qr.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth), { timeout: 30_000 }).toBeGreaterThan(100);
    expect(await qr.getAttribute('alt')).toBe(`QR code of ${player}`);
    const scan = () => scanQr(page);
    expect(await scan()).toBe(player);
    // An option changes both.
    await page.getByLabel('Start muted').check();
    await expect.poll(() => page.getByLabel('Embed code').inputValue()).toContain(`src="${player}?Muted=true"`);
    await expect.poll(() => qr.getAttribute('alt'), { timeout: 30_000 }).toBe(`QR code of ${player}?Muted=true`);
    expect(await scan()).toBe(`${player}?Muted=true`);
    await page.context().close();
  }, 60_000);

  it("draws the asset's plays, played seconds, concurrent viewers and quality of experience from the beacons", async () => {
    const page = await openAsset(t.key);
    await expect.poll(() => summary(page, 'Played seconds'), { timeout: 30_000 }).toMatch(/^Played seconds in s: .* highest 15\b/);
    expect(await summary(page, 'Plays')).toMatch(/highest 2\b/);
    expect(await summary(page, 'Concurrent viewers')).toMatch(/highest 2\b/);
    // One minute has the averages: a lone value, drawn as a dot.
    expect(await summary(page, 'Startup time')).toMatch(/: 1 value .* lowest 500, highest 500, latest 500$/);
    for (const name of ['Plays', 'Played seconds', 'Concurrent viewers', 'Startup time']) {
      await expect.poll(() => chartInk(chart(page, name)), { timeout: 30_000, message: name }).toBeGreaterThan(10);
    }
    const facts = page.getByRole('region', { name: 'Analytics of this asset' }).locator('dl.facts');
    expect(await facts.textContent()).toContain('Startup time (median)500 ms');
    expect(await facts.textContent()).toContain('Watch time15 s');
    expect(await facts.textContent()).toContain('Stalls1');
    expect(await facts.textContent()).toContain('Average bitrate800 kb/s');
    await chart(page, 'Played seconds').getByText('Values of Played seconds').click();
    expect(await chart(page, 'Played seconds').locator('tbody').textContent()).toContain('15');
    await atPhoneWidth(page, join(SHOTS, 'console-streaming-asset-phone.png'));
    await page.context().close();
  }, 60_000);

  it('a Viewer key finds the write controls of the asset page disabled with the reason, and still the embed and QR codes', async () => {
    await t.json('POST', `/streaming/v1/assets/${assetId}/chapters`, { chapters: [{ title: 'Whole', startSecond: 0, endSecond: 2 }] });
    await t.json('POST', `/streaming/v1/assets/${assetId}/tags`, { tags: [{ name: 'archive' }] });
    const page = await openAsset(viewerKey);
    const reason = "This API key's role is Viewer: it can read but not change content.";
    await expect.poll(() => page.getByRole('button', { name: 'Delete chapter Whole' }).count(), { timeout: 30_000 }).toBe(1);
    await expect.poll(() => page.getByRole('button', { name: 'Remove tag archive' }).count(), { timeout: 30_000 }).toBe(1);
    for (const name of [
      'Add chapter',
      'Edit chapter Whole',
      'Delete chapter Whole',
      'Add tags',
      'Remove tag archive',
      'Add image',
      'Upload image',
      'Save title and description',
    ]) {
      const button = page.getByRole('button', { name, exact: true });
      expect(await button.isDisabled(), name).toBe(true);
      expect(await button.getAttribute('title'), name).toBe(reason);
    }
    for (const label of ['Chapter title', 'Tags to add', 'Image URL', 'Image file']) expect(await page.getByLabel(label).isDisabled(), label).toBe(true);
    expect(await page.locator('.note').first().textContent()).toBe(reason);
    const qr = page.locator('img.qrcode');
    await expect.poll(() => qr.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth), { timeout: 30_000 }).toBeGreaterThan(100);
    await reviewScreen(page, SHOTS, 'console-streaming-asset-viewer');
    await page.context().close();
  }, 60_000);
  it("sets the asset's own playback settings over the tenant's; its embed code then carries a playback token, and plays", async () => {
    const page = await signIn(browser, p.baseUrl, t.id, t.key);
    await page.goto(`${p.baseUrl}/console#/streaming/${privateId}`);
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent(), { timeout: 30_000 }).toBe('Private');
    const settings = async () => (await t.json('GET', `/streaming/v1/assets/${privateId}`)).body.settings;
    const chosen = (label: string) => page.getByLabel(label, { exact: true }).locator('option:checked').textContent();
    // At first the asset follows the tenant, whose defaults are said.
    await expect.poll(() => chosen('Playback token required'), { timeout: 30_000 }).toBe('As the tenant: Disabled');
    expect(await chosen('Analytics')).toBe('As the tenant: Enabled');
    const code = page.getByLabel('Embed code');
    await expect.poll(() => code.inputValue(), { timeout: 30_000 }).toContain('<iframe');
    expect(await code.inputValue()).not.toContain('token=');

    await page.getByLabel('Playback token required', { exact: true }).selectOption('Enabled');
    await page.getByLabel('Concurrent access protection (cap)', { exact: true }).selectOption('Disabled');
    await page.getByLabel('Analytics', { exact: true }).selectOption('Disabled');
    await page.getByRole('button', { name: 'Save playback settings' }).click();
    await expect.poll(settings, { timeout: 30_000 }).toMatchObject({
      tokenRequired: { asset: 'Enabled', tenant: 'Disabled' },
      cap: { asset: 'Disabled', tenant: 'Disabled' },
      analytics: { asset: 'Disabled', tenant: 'Enabled' },
    });
    // Its media now refuses a request without a token.
    const [hls] = (await t.json('GET', `/streaming/v1/assets/${privateId}`)).body.outputs[0].endpoints;
    expect((await fetch(hls.url)).status).toBe(401);

    // The codes carry a token of the lifetime chosen, whose expiry is said; the QR code scans to the same URL.
    await page.getByLabel('Start muted').check();
    await page.getByLabel('Play on load (browsers allow it muted)').check();
    await expect.poll(() => code.inputValue(), { timeout: 30_000 }).toMatch(/\?Muted=true&amp;Autoplay=true&amp;token=/);
    const claims = (url: string) => JSON.parse(Buffer.from(new URL(url).searchParams.get('token')!.split('.')[1]!, 'base64url').toString());
    await page.getByRole('button', { name: 'Copy embed code' }).click();
    const src = /^<iframe src="([^"]+)"/.exec(await page.evaluate(() => navigator.clipboard.readText()))![1]!.replace(/&amp;/g, '&');
    const first = claims(src);
    expect(first).toMatchObject({ sub: privateId });
    expect(first.exp - first.iat).toBe(3600);
    const expiry = await page.evaluate((exp) => new Date(exp * 1000).toLocaleString(), first.exp);
    expect(await page.getByText('This asset needs a playback token: these codes carry one that expires').textContent()).toContain(expiry);
    const qr = page.locator('img.qrcode');
    await expect.poll(() => qr.getAttribute('alt'), { timeout: 30_000 }).toBe(`QR code of ${src}`);
    expect(await scanQr(page)).toBe(src);
    await reviewScreen(page, SHOTS, 'console-streaming-asset-token');

    // The copied code plays in a page of its own; without its token the player says it is refused.
    const host = await browser.newPage();
    await host.setContent(await page.evaluate(() => navigator.clipboard.readText()));
    const frame = await until(async () => host.frames().find((f) => f.url().startsWith(src.split('?')[0]!)), Boolean, {
      timeoutMs: 30_000,
      what: 'the embed frame',
    });
    await frame!.waitForFunction(() => (document.getElementById('video') as HTMLVideoElement).currentTime > 0.5, null, { timeout: 60_000 });
    await host.close();
    const source = async (url: string) => (await (await fetch(url.replace('?', '/source?'))).json()).playbackRefusal;
    expect(await source(src)).toBeNull();
    expect(await source(src.replace(/&token=[^&]+/, ''))).toEqual(expect.any(String));

    // Another lifetime makes another token.
    await page.getByLabel('Token lifetime').selectOption({ label: '24 hours' });
    await expect
      .poll(async () => claims(/src="([^"]+)"/.exec(await code.inputValue())![1]!.replace(/&amp;/g, '&')).exp - first.iat, { timeout: 30_000 })
      .toBeGreaterThanOrEqual(86400);
    const second = claims(/src="([^"]+)"/.exec(await code.inputValue())![1]!.replace(/&amp;/g, '&'));
    expect(second.exp - second.iat).toBe(86400);
    await page.context().close();

    // A Viewer key reads the settings, may change none, and cannot make a token: it is told its codes carry none.
    const viewer = await signIn(browser, p.baseUrl, t.id, viewerKey);
    await viewer.goto(`${p.baseUrl}/console#/streaming/${privateId}`);
    await expect.poll(() => viewer.getByLabel('Playback token required', { exact: true }).inputValue(), { timeout: 30_000 }).toBe('Enabled');
    const reason = "This API key's role is Viewer: it can read but not change content.";
    for (const control of [
      viewer.getByLabel('Playback token required', { exact: true }),
      viewer.getByLabel('Analytics', { exact: true }),
      viewer.getByRole('button', { name: 'Save playback settings' }),
      viewer.getByLabel('Token lifetime'),
      viewer.getByRole('button', { name: 'New token' }),
    ]) {
      expect(await control.isDisabled(), String(control)).toBe(true);
      expect(await control.getAttribute('title'), String(control)).toBe(reason);
    }
    await expect
      .poll(() => viewer.getByText(/needs a playback token, which this API key \(role Viewer\) cannot make/).isVisible(), { timeout: 30_000 })
      .toBe(true);
    expect(await viewer.getByLabel('Embed code').inputValue()).not.toContain('token=');
    await reviewScreen(viewer, SHOTS, 'console-streaming-asset-token-viewer');
    await viewer.context().close();

    // "As the tenant" again: the asset follows the tenant's default (null to the API), and its codes carry no token.
    const admin = await signIn(browser, p.baseUrl, t.id, t.key);
    await admin.goto(`${p.baseUrl}/console#/streaming/${privateId}`);
    const required = admin.getByLabel('Playback token required', { exact: true });
    await expect.poll(() => required.inputValue(), { timeout: 30_000 }).toBe('Enabled');
    await required.selectOption({ label: 'As the tenant: Disabled' });
    await admin.getByRole('button', { name: 'Save playback settings' }).click();
    await expect.poll(settings, { timeout: 30_000 }).toMatchObject({ tokenRequired: { asset: null, tenant: 'Disabled' }, analytics: { asset: 'Disabled' } });
    await expect.poll(() => admin.getByLabel('Embed code').inputValue(), { timeout: 30_000 }).not.toContain('token=');
    await admin.context().close();
  }, 150_000);
});
