import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { launchBrowser } from './helpers/browser.ts';
import { atPhoneWidth, reviewScreen, shotsDir, signIn } from './helpers/console.ts';
import { makeClip, tempDir } from './helpers/media.ts';
import { describeOnDb, startPlatform, type TestPlatform, type TestTenant } from './helpers/platform.ts';
import { until } from './helpers/until.ts';
import { uploadFile } from './helpers/upload.ts';

const { dir, cleanup } = tempDir('mediaplane-console-watermarking-');
afterAll(cleanup);
const SHOTS = shotsDir(dir);

/**
 * The console's Watermarking screen in headless Chromium: a VOD asset prepared there, a viewer's session opened,
 * revoked and unrevoked there (the API and the redirector agree), and that viewer's capture uploaded there through the
 * presigned parts, whose detection names the viewer; an unmarked file shows the API's reason. A Viewer key finds
 * every write control disabled with the reason.
 */
describeOnDb('pglite', 'Tenant console: Watermarking', (kind) => {
  let p: TestPlatform;
  let t: TestTenant;
  let browser: Browser;
  let viewerKey: string;
  let vodAssetId: string;
  let preparedId: string;
  let playbackUrl: string;

  beforeAll(async () => {
    p = await startPlatform(kind);
    t = await p.createTenant();
    viewerKey = (await t.json('POST', '/core/v1/api-key', { name: 'console viewer', roleType: 'Viewer' })).body.key;
    // A short asset: 1 s segments and 6-bit user numbers (a 14-bit code word with the CRC-8) fit a 16 s clip.
    expect((await t.json('PATCH', '/watermarking/v1/settings', { segmentDuration: 1, userNumberBits: 6 })).status).toBe(200);
    const [source] = await Promise.all([
      makeClip(dir, 'source', { width: 320, height: 180, seconds: 16, fps: 15, audio: [{ language: 'eng', frequency: 440 }] }),
      launchBrowser().then((b) => (browser = b)),
    ]);
    const fileId = await uploadFile(t, source);
    vodAssetId = (await t.json('POST', '/vod/v1/assets', { transcodedSources: [{ fileId }], preset: 'remux-hls-mp4', title: 'Clip' })).body.id;
    await until(
      () => t.json('GET', `/vod/v1/assets/${vodAssetId}`),
      (r) => ['Available', 'Error'].includes(r.body.status),
      { timeoutMs: 60_000, what: 'the VOD asset' },
    );
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await p?.stop();
  });

  const open = async (key: string): Promise<Page> => {
    const page = await signIn(browser, p.baseUrl, t.id, key);
    await page.getByRole('link', { name: 'Watermarking' }).click();
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent(), { timeout: 30_000 }).toBe('Watermarking');
    return page;
  };

  it('prepares a VOD asset and shows its preparation until it is Available', async () => {
    const page = await open(t.key);
    const picker = page.getByLabel('VOD asset');
    await expect.poll(() => picker.locator('option').first().getAttribute('value'), { timeout: 30_000 }).toBe(vodAssetId);
    // The minimum length at the tenant's settings: 14 bits of 1 s.
    expect(await page.getByText('an asset needs at least 0:14').count()).toBe(1);
    await page.getByLabel('Title').fill('Marked clip');
    await page.getByRole('button', { name: 'Prepare asset' }).click();
    const row = page.getByRole('table', { name: 'Prepared assets' }).locator('tr').filter({ hasText: 'Marked clip' });
    await expect.poll(() => row.count(), { timeout: 30_000 }).toBe(1);
    preparedId = (await row.getAttribute('data-watermark-asset'))!;
    await expect.poll(() => row.locator('.badge').textContent(), { timeout: 90_000 }).toBe('Available');
    const asset = (await t.json('GET', `/watermarking/v1/assets/${preparedId}`)).body;
    expect(asset).toMatchObject({ vodAssetId, status: 'Available', metadata: { title: 'Marked clip' }, segmentDuration: 1, userNumberBits: 6 });
    expect(await row.textContent()).toContain(`${asset.segmentCount} × 1 s · 6-bit user numbers`);
    expect(await row.textContent()).toContain('320×180');
    await page.context().close();
  }, 120_000);

  it('opens a session, revokes and unrevokes it, and the API and the redirector agree', async () => {
    const page = await open(t.key);
    await expect.poll(() => page.getByLabel('Prepared asset', { exact: true }).inputValue(), { timeout: 30_000 }).toBe(preparedId);
    expect(await page.getByText('0 to 63 on this asset (6 bits).').count()).toBe(1);
    await page.getByLabel('User number').fill('37');
    await page.getByLabel('User name').fill('Ada');
    await page.getByRole('button', { name: 'Open session' }).click();
    await expect.poll(() => page.getByText('The playlist of Ada').count(), { timeout: 30_000 }).toBe(1);
    playbackUrl = (await page.locator('.secret-once code').textContent())!;
    const [listed] = (await t.json('GET', `/watermarking/v1/sessions?assetId=${preparedId}`)).body.items;
    expect(listed).toMatchObject({ userNumber: 37, userName: 'Ada', revoked: false });
    expect((await t.fetch(playbackUrl)).status).toBe(200);

    const row = page.getByRole('table', { name: 'Sessions' }).locator(`tr[data-session="${listed.id}"]`);
    await expect.poll(() => row.locator('.badge').textContent(), { timeout: 30_000 }).toBe('Active');
    await row.getByRole('button', { name: 'Revoke the session of Ada' }).click();
    await expect.poll(() => row.locator('.badge').textContent(), { timeout: 30_000 }).toBe('Revoked');
    expect((await t.json('GET', `/watermarking/v1/sessions/${listed.id}`)).body).toMatchObject({ revoked: true, revokeDate: expect.any(String) });
    expect((await t.fetch(playbackUrl)).status).toBe(403);
    // Only the revoked ones, then all again.
    await page.getByLabel('Show').selectOption('Revoked');
    await expect.poll(() => row.count(), { timeout: 30_000 }).toBe(1);
    await page.getByLabel('Show').selectOption('Active');
    await expect.poll(() => row.count(), { timeout: 30_000 }).toBe(0);
    await page.getByLabel('Show').selectOption('All sessions');
    await expect.poll(() => row.count(), { timeout: 30_000 }).toBe(1);
    await row.getByRole('button', { name: 'Unrevoke the session of Ada' }).click();
    await expect.poll(() => row.locator('.badge').textContent(), { timeout: 30_000 }).toBe('Active');
    expect((await t.json('GET', `/watermarking/v1/sessions/${listed.id}`)).body.revoked).toBe(false);
    expect((await t.fetch(playbackUrl)).status).toBe(200);
    await reviewScreen(page, SHOTS, 'console-watermarking');
    await page.context().close();
  }, 120_000);

  it("uploads Ada's capture and an unmarked clip as suspects: the first names Ada, the second says why none", async () => {
    // Ada's capture: every segment her playlist names, fetched as her player does (through the redirects), joined.
    const media = new URL('media.m3u8', playbackUrl);
    const uris = (await (await t.fetch(media)).text()).split('\n').filter((l) => l && !l.startsWith('#'));
    const segments = await Promise.all(uris.map(async (uri) => Buffer.from(await (await t.fetch(new URL(uri, media))).arrayBuffer())));
    const capture = join(dir, 'ada-capture.ts');
    await writeFile(capture, Buffer.concat(segments));
    const unrelated = await makeClip(dir, 'unrelated', { width: 320, height: 180, seconds: 4, fps: 15, color: 'navy', audio: [] });

    const page = await open(t.key);
    await page.getByLabel('Suspect capture').setInputFiles([capture, unrelated]);
    await page.getByRole('button', { name: 'Upload and detect' }).click();
    const files = page.getByRole('table', { name: 'Suspect files' });
    const ada = files.locator('tr').filter({ hasText: 'ada-capture.ts' });
    const navy = files.locator('tr').filter({ hasText: 'unrelated.mp4' });
    await expect.poll(() => ada.locator('.badge').textContent(), { timeout: 90_000 }).toBe('Detected');
    await expect.poll(() => navy.locator('.badge').textContent(), { timeout: 90_000 }).toBe('NoMarkFound');

    const found = (await t.json('GET', '/watermarking/v1/files?sort=CreateDate')).body.items;
    const byName = Object.fromEntries(found.map((f: any) => [f.orginalFileName, f]));
    expect(byName['ada-capture.ts']).toMatchObject({ uploadStatus: 'Completed', detection: { status: 'Detected', userNumber: 37, userName: 'Ada' } });
    expect(byName['unrelated.mp4'].detection).toMatchObject({ status: 'NoMarkFound', userNumber: null });
    const result = ada.locator('td.detection');
    expect(await result.locator('strong').textContent()).toBe('Ada');
    expect(await result.textContent()).toContain(`user number 37 · confidence ${byName['ada-capture.ts'].detection.confidence.toFixed(2)}`);
    // The reason is the API's own message.
    expect(await navy.locator('td.detection').textContent()).toContain(byName['unrelated.mp4'].detection.message);
    expect(byName['unrelated.mp4'].detection.message).toMatch(/none of the prepared assets/);
    // The uploads are gone from the list of uploads in progress once their detections began.
    await expect.poll(() => page.getByRole('list', { name: 'Suspect uploads' }).locator('li').count(), { timeout: 30_000 }).toBe(0);

    // Read again on demand: a new job replaces the result, which comes back the same.
    const before = byName['ada-capture.ts'].detection.jobId;
    await ada.getByRole('button', { name: 'Detect again in ada-capture.ts' }).click();
    await expect
      .poll(async () => (await t.json('GET', `/watermarking/v1/files/${byName['ada-capture.ts'].id}`)).body.detection, { timeout: 90_000 })
      .toMatchObject({ status: 'Detected', userName: 'Ada', jobId: expect.not.stringMatching(before) });
    await expect.poll(() => ada.locator('.badge').textContent(), { timeout: 30_000 }).toBe('Detected');
    await reviewScreen(page, SHOTS, 'console-watermarking-detection');
    await atPhoneWidth(page, `${SHOTS}/console-watermarking-phone.png`);
    await page.context().close();
  }, 120_000);

  it('a Viewer key sees the assets, sessions and results with every write control disabled, with the reason', async () => {
    const page = await open(viewerKey);
    const reason = "This API key's role is Viewer: it can read but not change content.";
    expect(await page.locator('.note').first().textContent()).toBe(reason);
    const session = page.getByRole('table', { name: 'Sessions' }).locator('tr').filter({ hasText: 'Ada' });
    await expect.poll(() => session.count(), { timeout: 30_000 }).toBe(1);
    const file = page.getByRole('table', { name: 'Suspect files' }).locator('tr').filter({ hasText: 'ada-capture.ts' });
    await expect.poll(() => file.locator('.badge').textContent(), { timeout: 30_000 }).toBe('Detected');
    const controls = [
      page.getByRole('button', { name: 'Prepare asset' }),
      page.getByRole('button', { name: 'Open session' }),
      page.getByRole('button', { name: 'Upload and detect' }),
      page.getByLabel('Suspect capture'),
      page.getByLabel('User name'),
      session.getByRole('button', { name: 'Revoke the session of Ada' }),
      file.getByRole('button', { name: 'Detect again in ada-capture.ts' }),
    ];
    for (const control of controls) {
      expect(await control.isDisabled(), String(control)).toBe(true);
      expect(await control.getAttribute('title'), String(control)).toBe(reason);
    }
    // The settings need an Admin key: shown, not changeable.
    const adminOnly = "This API key's role is Viewer: only an Admin key changes this.";
    await expect.poll(() => page.getByLabel('Mark strength').inputValue(), { timeout: 30_000 }).toBe('3');
    for (const control of [
      page.getByLabel('Mark strength'),
      page.getByLabel('Code length (bits)'),
      page.getByRole('button', { name: 'Save watermarking settings' }),
    ]) {
      expect(await control.isDisabled(), String(control)).toBe(true);
      expect(await control.getAttribute('title'), String(control)).toBe(adminOnly);
    }
    await reviewScreen(page, SHOTS, 'console-watermarking-viewer');
    await page.context().close();
  }, 120_000);
  it("changes the watermarking settings: a value out of range is refused in the API's words, the others are saved and the minimum length follows", async () => {
    const page = await open(t.key);
    const settings = async () => (await t.json('GET', '/watermarking/v1/settings')).body;
    await expect.poll(() => page.getByLabel('Code length (bits)').inputValue(), { timeout: 30_000 }).toBe('6');
    expect(await page.getByLabel('Segment duration (seconds)').inputValue()).toBe('1');
    const before = await settings();

    // The browser does not stop the value: the API refuses it, and its message is shown as it is.
    await page.getByLabel('Mark strength').fill('7');
    await page.getByRole('button', { name: 'Save watermarking settings' }).click();
    const refusal = (await t.json('PATCH', '/watermarking/v1/settings', { strength: 7 })).body.status.message as string;
    expect(refusal).toMatch(/strength/);
    const alert = page.getByRole('region', { name: 'Watermarking settings' }).getByRole('alert');
    await expect.poll(() => alert.textContent(), { timeout: 30_000 }).toBe(refusal);
    expect(await settings()).toEqual(before);

    await page.getByLabel('Mark strength').fill('4');
    await page.getByLabel('Code length (bits)').fill('8');
    await page.getByLabel('Segment duration (seconds)').fill('2');
    await page.getByLabel('Session token lifetime (seconds)').fill('3600');
    await page.getByLabel('Detection threshold').fill('0.5');
    await page.getByRole('button', { name: 'Save watermarking settings' }).click();
    await expect.poll(settings, { timeout: 30_000 }).toEqual({ userNumberBits: 8, segmentDuration: 2, strength: 4, tokenTtlSeconds: 3600, minConfidence: 0.5 });
    expect(await alert.isVisible()).toBe(false);
    // (8 + 8) bits of 2 s: the picker of "Prepare an asset" says so, and the 16 s clip is now too short.
    await expect.poll(() => page.locator('#wm-vod-asset-help').textContent(), { timeout: 30_000 }).toContain('needs at least 0:32');
    expect(await page.getByRole('option', { name: 'Clip (0:16, too short)' }).isDisabled()).toBe(true);
    await reviewScreen(page, SHOTS, 'console-watermarking-settings');
    await page.context().close();
  }, 60_000);
});
