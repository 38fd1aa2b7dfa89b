import { readFileSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { launchBrowser } from './helpers/browser.ts';
import { atPhoneWidth, reviewScreen, shotsDir, signIn } from './helpers/console.ts';
import { makeClip, tempDir } from './helpers/media.ts';
import { describeOnDb, startPlatform, type TestPlatform, type TestTenant } from './helpers/platform.ts';
import { uploadFile } from './helpers/upload.ts';

const { dir, cleanup } = tempDir('mediaplane-console-vod-');
afterAll(cleanup);
const SHOTS = shotsDir(dir);
const PART = 64 * 1024;

/**
 * The console's VOD screens in headless Chromium, as a person uses them: files dropped, an upload a reload interrupts
 * and resumes, a cancelled upload, and an asset played at each quality, edited, and given and relieved of an output.
 */
describeOnDb('postgres', 'Tenant console: VOD', (kind) => {
  let p: TestPlatform;
  let t: TestTenant;
  let browser: Browser;
  let small: string;
  let ladder: string;

  beforeAll(async () => {
    // Small parts: a clip of a few hundred KiB goes up in several.
    p = await startPlatform(kind, { MEDIAPLANE_UPLOAD_PART_SIZE: String(PART) });
    t = await p.createTenant();
    small = await makeClip(dir, 'small', { seconds: 2 });
    // Tall enough for two rungs of the ladder presets (480p and 360p).
    ladder = await makeClip(dir, 'ladder', { seconds: 2, width: 854, height: 480 });
    browser = await launchBrowser();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await p?.stop();
  });

  const vod = async (page: Page) => {
    await page.getByRole('link', { name: 'VOD' }).click();
    await expect.poll(() => page.locator('#preset-help').textContent(), { timeout: 30_000 }).not.toBe('');
  };
  const uploaded = (page: Page, name: string) =>
    expect
      .poll(() => page.getByRole('progressbar', { name: `Upload of ${name}` }).evaluate((e) => (e as HTMLProgressElement).value), { timeout: 60_000 })
      .toBe(100);

  it('drops several files on the upload card: each goes up with its own progress bar; the screen passes axe', async () => {
    const page = await signIn(browser, p.baseUrl, t.id, t.key);
    await vod(page);
    const b64 = readFileSync(small).toString('base64');
    const drop = await page.evaluateHandle((data) => {
      const bytes = Uint8Array.from(atob(data), (c) => c.charCodeAt(0));
      const transfer = new DataTransfer();
      for (const name of ['first.mp4', 'second.mp4']) transfer.items.add(new File([bytes], name, { type: 'video/mp4' }));
      return transfer;
    }, b64);
    const card = page.locator('form.card').filter({ has: page.getByLabel('Files') });
    await card.dispatchEvent('dragover', { dataTransfer: drop });
    await card.dispatchEvent('drop', { dataTransfer: drop });
    await uploaded(page, 'first.mp4');
    await uploaded(page, 'second.mp4');
    const files = (await t.json('GET', '/vod/v1/files?limit=10')).body.items.map((f: { name: string; status: string }) => f.name);
    expect(files.sort()).toEqual(['first.mp4', 'second.mp4']);
    await reviewScreen(page, SHOTS, 'console-vod-dropped');
    await page.context().close();
  }, 120_000);

  it('an upload a reload interrupts is resumed once its file is chosen again: only the missing parts are sent', async () => {
    const page = await signIn(browser, p.baseUrl, t.id, t.key);
    await vod(page);
    await page.getByLabel('Preset', { exact: true }).selectOption('dash-h264-ladder');
    // The store takes two parts, then holds every other one, as a connection lost mid-upload would.
    let puts = 0;
    await page.route('**/*', (route) => {
      if (route.request().method() !== 'PUT') return route.continue();
      if (++puts <= 2) return route.continue();
      return new Promise(() => {});
    });
    await page.getByLabel('Files').setInputFiles(ladder);
    await page.getByRole('button', { name: 'Upload', exact: true }).click();
    const kept = () => page.evaluate(() => Object.entries(localStorage).find(([k]) => k.startsWith('mediaplane.console.uploads.'))?.[1]);
    await expect.poll(async () => JSON.parse((await kept()) ?? '[]')[0]?.state.parts.length, { timeout: 30_000 }).toBe(2);
    const saved = JSON.parse((await kept())!)[0];
    expect(saved).toMatchObject({ name: 'ladder.mp4', preset: 'dash-h264-ladder', state: { partSize: PART } });
    expect(saved.state.partsCount).toBeGreaterThan(3);

    // The reload drops the held parts (unrouted before it, they would be let through).
    await page.reload();
    await page.unrouteAll({ behavior: 'ignoreErrors' });
    await vod(page);
    expect(JSON.parse((await kept())!)[0].state.parts).toHaveLength(2);
    const sent: string[] = [];
    await page.route('**/*', (route) => {
      if (route.request().method() === 'PUT') sent.push(route.request().url());
      return route.continue();
    });
    // The page lost the file: it asks for it again; another file is refused.
    await page.getByLabel('Choose ladder.mp4 again to resume').setInputFiles(small);
    await expect.poll(() => page.getByRole('alert').filter({ hasText: 'is not the file this upload started with' }).count()).toBe(1);
    await page.getByLabel('Choose ladder.mp4 again to resume').setInputFiles(ladder);
    await uploaded(page, 'ladder.mp4');
    expect(sent).toHaveLength(saved.state.partsCount - 2);
    const file = (await t.json('GET', `/vod/v1/files/${saved.state.fileId}`)).body;
    expect(file).toMatchObject({ fileSize: readFileSync(ladder).length });
    expect(file.status).not.toBe('Uploading');
    expect(await kept()).toBeUndefined();
    await page.unrouteAll({ behavior: 'ignoreErrors' });

    await page.getByRole('button', { name: 'Create asset from ladder.mp4' }).click();
    await page.waitForURL(/#\/assets\/[0-9a-f-]{36}$/, { timeout: 30_000 });
    const assetId = page.url().split('/').at(-1)!;
    expect((await t.json('GET', `/vod/v1/assets/${assetId}`)).body).toMatchObject({ title: 'ladder', preset: 'dash-h264-ladder' });
    await page.context().close();
  }, 180_000);

  it('"Cancel" stops an upload and deletes it on the platform', async () => {
    const page = await signIn(browser, p.baseUrl, t.id, t.key);
    await vod(page);
    let puts = 0;
    await page.route('**/*', (route) => (route.request().method() === 'PUT' && ++puts > 1 ? new Promise(() => {}) : route.continue()));
    await page.getByLabel('Files').setInputFiles(ladder);
    await page.getByRole('button', { name: 'Upload', exact: true }).click();
    await expect.poll(() => puts, { timeout: 30_000 }).toBeGreaterThan(1);
    const fileId = await page.evaluate(
      () => JSON.parse(Object.entries(localStorage).find(([k]) => k.startsWith('mediaplane.console.uploads.'))![1])[0].state.fileId,
    );
    await page.getByRole('button', { name: 'Cancel upload of ladder.mp4' }).click();
    await expect.poll(async () => (await t.json('GET', `/vod/v1/files/${fileId}`)).status, { timeout: 30_000 }).toBe(404);
    await expect.poll(() => page.evaluate(() => localStorage.length)).toBe(0);
    await page.unrouteAll({ behavior: 'ignoreErrors' });
    await page.context().close();
  }, 120_000);

  it('an asset plays at each quality, is edited, and gains and loses an output, live; the page passes axe', async () => {
    // The asset the resumed upload made, or (this test run alone) one made through the API.
    let id: string = (await t.json('GET', '/vod/v1/assets?presets=dash-h264-ladder')).body.items[0]?.id;
    if (!id) {
      const fileId = await uploadFile(t, ladder);
      id = (await t.json('POST', '/vod/v1/assets', { transcodedSources: [{ fileId }], preset: 'dash-h264-ladder', title: 'ladder' })).body.id;
    }
    const page = await signIn(browser, p.baseUrl, t.id, t.key);
    await page.goto(`${p.baseUrl}/console#/assets/${id}`);
    await expect.poll(() => page.locator('dl.facts').textContent(), { timeout: 180_000, interval: 1000 }).toContain('Available');

    // DASH, at the quality chosen: the picker lists Auto and both rungs; choosing the other rung changes the picture.
    await page.getByRole('button', { name: 'Play DASH' }).click();
    const video = () =>
      page.evaluate(() => ({
        t: (document.getElementById('player') as HTMLVideoElement).currentTime,
        h: (document.getElementById('player') as HTMLVideoElement).videoHeight,
      }));
    await expect.poll(async () => (await video()).t, { timeout: 60_000 }).toBeGreaterThan(0.3);
    const quality = page.getByLabel('Quality');
    await expect
      .poll(() => quality.locator('option').allTextContents(), { timeout: 30_000 })
      .toEqual(['Auto', expect.stringMatching(/^480p · \d+ kb\/s$/), expect.stringMatching(/^360p · \d+ kb\/s$/)]);
    const other = (await video()).h === 360 ? 480 : 360;
    await quality.selectOption({ label: (await quality.locator('option').allTextContents()).find((l) => l.startsWith(`${other}p`))! });
    await page.evaluate(() => {
      const v = document.getElementById('player') as HTMLVideoElement;
      v.currentTime = 0;
      void v.play();
    });
    await expect.poll(async () => (await video()).h, { timeout: 60_000 }).toBe(other);
    await reviewScreen(page, SHOTS, 'console-asset-playing');

    // Edit: title, tags and metadata; a line that is not "name: value" is refused before anything is sent.
    await page.getByLabel('Title').fill('Renamed in the console');
    await page.getByLabel('Tags').fill('news, sport ,');
    await page.getByLabel('Metadata').fill('director Ada');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await expect.poll(() => page.getByRole('alert').filter({ hasText: 'is not a line "name: value"' }).count()).toBe(1);
    await page.getByLabel('Metadata').fill('director: Ada\nyear: 2026');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Renamed in the console');
    expect((await t.json('GET', `/vod/v1/assets/${id}`)).body).toMatchObject({
      title: 'Renamed in the console',
      tags: ['news', 'sport'],
      metadata: { director: 'Ada', year: '2026' },
    });

    // An output added shows its progress and becomes playable here; removed, it is gone.
    await page.getByLabel('Preset of the new output').selectOption('remux-hls-mp4');
    await page.getByRole('button', { name: 'Add output' }).click();
    const added = page.locator('[data-output]').filter({ hasText: 'remux-hls-mp4' });
    await expect.poll(() => added.locator('.badge').textContent(), { timeout: 120_000, interval: 1000 }).toBe('Available');
    expect(await added.getByRole('progressbar').evaluate((e) => (e as HTMLProgressElement).value)).toBe(100);
    await added.getByRole('button', { name: /^Play MP4/ }).click();
    await expect.poll(async () => (await video()).t, { timeout: 60_000 }).toBeGreaterThan(0.3);
    page.on('dialog', (d) => void d.accept());
    await page.getByRole('button', { name: 'Remove the remux-hls-mp4 output' }).click();
    await expect.poll(() => added.count(), { timeout: 30_000 }).toBe(0);
    const outputs = (await t.json('GET', `/vod/v1/assets/${id}`)).body.outputs.map((o: { preset: string }) => o.preset);
    expect(outputs).toEqual(['dash-h264-ladder']);
    await reviewScreen(page, SHOTS, 'console-asset-edited');
    await atPhoneWidth(page, `${SHOTS}/console-asset-edited-phone.png`);
    await page.context().close();
  }, 300_000);
});
