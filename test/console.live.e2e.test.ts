import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { launchBrowser } from './helpers/browser.ts';
import { atPhoneWidth, reviewScreen, shotsDir, signIn } from './helpers/console.ts';
import { pushEncoder } from './helpers/live.ts';
import { tempDir } from './helpers/media.ts';
import { describeOnDb, startPlatform, type TestPlatform, type TestTenant } from './helpers/platform.ts';
import { freePort } from './helpers/process.ts';

const { dir, cleanup } = tempDir('mediaplane-console-live-');
afterAll(cleanup);
const SHOTS = shotsDir(dir);

/**
 * The console's Live screens in headless Chromium: a channel created, set up (qualities, endpoints, input loss,
 * restreams), its ingest copied for OBS, started, fed by ffmpeg, previewed in the page, recorded and stopped; and the
 * same page read-only for a Viewer key.
 */
describeOnDb('pglite', 'Tenant console: Live', (kind) => {
  let p: TestPlatform;
  let t: TestTenant;
  let browser: Browser;
  let viewerKey: string;
  let encoder: ReturnType<typeof pushEncoder> | undefined;
  let channelId: string;

  beforeAll(async () => {
    p = await startPlatform(kind, {
      MEDIAPLANE_RTMP_HOST: '127.0.0.1',
      MEDIAPLANE_RTMP_PORT: String(await freePort()),
      MEDIAPLANE_LIVE_POLL_MS: '200',
      MEDIAPLANE_LIVE_SEGMENT_SECONDS: '1',
    });
    t = await p.createTenant();
    viewerKey = (await t.json('POST', '/core/v1/api-key', { name: 'console viewer', roleType: 'Viewer' })).body.key;
    browser = await launchBrowser();
  }, 120_000);
  afterAll(async () => {
    await encoder?.stop();
    await browser?.close();
    await p?.stop();
  });

  const configuration = async () => (await t.json('GET', `/live/v1/channels/${channelId}/configuration`)).body;
  const badgeOf = (page: Page) => page.locator('.title-row .badge');

  it('creates a channel and sets it up: qualities, endpoints, input loss and a restream; the key is shown on demand and copied', async () => {
    const page = await signIn(browser, p.baseUrl, t.id, t.key);
    await page.getByRole('link', { name: 'Live' }).click();
    await page.getByLabel('Channel name').fill('Studio two');
    await page.getByRole('button', { name: 'Create channel' }).click();
    await page.getByRole('link', { name: 'Studio two' }).click();
    await page.waitForURL(/#\/channels\/[^/]+$/);
    channelId = page.url().split('/').at(-1)!;
    await expect.poll(() => badgeOf(page).textContent(), { timeout: 30_000 }).toBe('Off');

    await expect.poll(() => page.getByLabel('720p').isChecked(), { timeout: 30_000 }).toBe(true);
    for (const q of ['720p', '480p', '360p']) await page.getByLabel(q, { exact: true }).uncheck();
    await page.getByLabel('144p', { exact: true }).check();
    // A new channel's qualities keep the encoder's frame rate (up to 30) until one is chosen.
    expect(await page.getByLabel('Frame rate', { exact: true }).inputValue()).toBe('source');
    await page.getByLabel('Frame rate', { exact: true }).selectOption('25');
    await page.getByLabel('DASH', { exact: true }).uncheck();
    await page.getByLabel('Colour').fill('#1060c0');
    await page.getByRole('button', { name: 'Add restream' }).click();
    await page.getByLabel('Destination name').fill('YouTube');
    await page.getByLabel('RTMP URL').fill('rtmp://a.rtmp.youtube.example/live2');
    await page.getByLabel('Stream key', { exact: true }).fill('abcd-1234');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'Saved' }).count(), { timeout: 30_000 }).toBe(1);
    const saved = await configuration();
    expect(saved.qualities).toEqual([{ resolution: '144p', frameRate: 25, followsSourceFrameRate: false }]);
    expect(saved.endpoints.map((e: { type: string }) => e.type)).toEqual(['Hls']);
    expect(saved.input.inputLoss).toMatchObject({ type: 'COLOR', color: '#1060C0' });
    expect(saved.restreams).toMatchObject([
      { destination: 'YouTube', rtmpDestinations: [{ url: 'rtmp://a.rtmp.youtube.example/live2', streamKey: '********' }] },
    ]);

    // The key is hidden until asked for; Server and Stream key are what OBS asks for.
    const url: string = saved.input.transportPrimaryIngestUrl;
    const key = url.slice(url.lastIndexOf('/') + 1);
    expect(await page.locator('code.secret').textContent()).not.toContain(key);
    await page.getByRole('button', { name: 'Show stream key' }).click();
    expect(await page.locator('code.secret').textContent()).toBe(key);
    await page.getByRole('button', { name: 'Copy Stream key' }).click();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(key);
    await page.getByRole('button', { name: 'Copy Server' }).click();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(url.slice(0, url.lastIndexOf('/')));
    await reviewScreen(page, SHOTS, 'console-channel');
    await atPhoneWidth(page, `${SHOTS}/console-channel-phone.png`);

    await page.context().close();
  }, 180_000);

  /** The segments the channel's recording has copied so far, as its catch-up playlist lists them. */
  async function recordedSegments(): Promise<number> {
    const [item] = (await t.json('GET', `/cvr/v1/recordings?channelId=${channelId}`)).body.items;
    const rec = item && (await t.json('GET', `/cvr/v1/recordings/${item.id}`)).body;
    const master = rec?.catchup?.endpoints?.[0]?.url as string | undefined;
    if (!master) return 0;
    const res = await fetch(master);
    const variant = res.ok ? (await res.text()).split('\n').find((l) => l && !l.startsWith('#')) : undefined;
    if (!variant) return 0;
    return (await (await fetch(new URL(variant, master))).text()).split('#EXTINF').length - 1;
  }

  it('starts the channel, previews what ffmpeg sends, records it with catch-up, and stops it: the recording becomes Available', async () => {
    const page = await signIn(browser, p.baseUrl, t.id, t.key);
    await page.goto(`${p.baseUrl}/console#/channels/${channelId}`);
    await page.getByRole('button', { name: 'Start', exact: true }).click();
    await expect.poll(() => badgeOf(page).textContent(), { timeout: 60_000 }).toMatch(/Starting|On/);
    encoder = pushEncoder((await configuration()).input.transportPrimaryIngestUrl.replace('localhost', '127.0.0.1'));
    await expect.poll(() => badgeOf(page).textContent(), { timeout: 120_000, interval: 1000 }).toBe('On');
    await expect.poll(() => page.getByRole('button', { name: 'Preview HLS' }).isEnabled(), { timeout: 30_000 }).toBe(true);
    await page.getByRole('button', { name: 'Preview HLS' }).click();
    await page
      .waitForFunction(() => (document.getElementById('player') as HTMLVideoElement).currentTime > 1, null, { timeout: 90_000 })
      .catch(async (e) => {
        // Seen once in CI: the preview never passed one second. What the page and the API said then.
        const seen = await page.evaluate(() => {
          const v = document.getElementById('player') as HTMLVideoElement;
          return {
            alerts: [...document.querySelectorAll('[role=alert]')].map((a) => a.textContent),
            readyState: v.readyState,
            paused: v.paused,
            src: v.src,
            networkState: v.networkState,
            error: v.error?.message,
            ended: v.ended,
            hidden: v.hidden,
            now: document.querySelector('.card p.muted')?.textContent,
            t: v.currentTime,
            buffered: [...Array(v.buffered.length).keys()].map((i) => [v.buffered.start(i), v.buffered.end(i)]),
          };
        });
        console.log('preview did not play:', JSON.stringify(seen), JSON.stringify((await t.json('GET', `/live/v1/channels/${channelId}/status`)).body));
        throw e;
      });

    await page.getByLabel('Recording title').fill('The show');
    await page.getByRole('button', { name: 'Record', exact: true }).click();
    const rec = page.locator('[data-recording]').filter({ hasText: 'The show' });
    await expect.poll(() => rec.locator('.badge').first().textContent(), { timeout: 60_000, interval: 1000 }).toBe('Live');
    await expect.poll(() => rec.getByRole('button', { name: 'Play catch-up HLS' }).count(), { timeout: 60_000, interval: 1000 }).toBe(1);
    await reviewScreen(page, SHOTS, 'console-channel-on-air');
    // Stopped only once the recording holds a segment: a loaded encoder may not have made one of its range yet (the
    // recording would then end as Error, nothing recorded).
    await expect.poll(recordedSegments, { timeout: 60_000, interval: 1000 }).toBeGreaterThan(0);

    await page.getByRole('button', { name: 'Stop', exact: true }).click();
    await expect.poll(() => badgeOf(page).textContent(), { timeout: 120_000, interval: 1000 }).toBe('Off');
    await encoder.stop();
    try {
      await expect.poll(() => rec.locator('.badge').first().textContent(), { timeout: 90_000, interval: 1000 }).toBe('Available');
    } catch (e) {
      // Seen once in three runs on this machine: the recording still Live after the stop. What the API says then.
      const list = (await t.json('GET', `/cvr/v1/recordings?channelId=${channelId}`)).body.items;
      const one = (await t.json('GET', `/cvr/v1/recordings/${list[0].id}`)).body;
      console.log(
        'recording still not Available in the console:',
        JSON.stringify(one).slice(0, 1500),
        JSON.stringify((await t.json('GET', `/live/v1/channels/${channelId}/status`)).body),
      );
      throw e;
    }
    await rec.getByRole('button', { name: 'Play catch-up HLS' }).click();
    await page.waitForFunction(() => (document.getElementById('player') as HTMLVideoElement).currentTime > 0.5, null, { timeout: 60_000 });
    const recordings = (await t.json('GET', `/cvr/v1/recordings?channelId=${channelId}`)).body.items;
    expect(recordings).toMatchObject([{ title: 'The show', status: 'Available' }]);
    await page.context().close();
  }, 300_000);

  it('rotates the stream key: the old one no longer appears, the API gives the new one', async () => {
    const page = await signIn(browser, p.baseUrl, t.id, t.key);
    await page.goto(`${p.baseUrl}/console#/channels/${channelId}`);
    const url: string = (await configuration()).input.transportPrimaryIngestUrl;
    page.on('dialog', (d) => void d.accept());
    await page.getByRole('button', { name: 'Rotate stream key' }).click();
    await expect.poll(async () => (await configuration()).input.transportPrimaryIngestUrl, { timeout: 30_000 }).not.toBe(url);
    await page.getByRole('button', { name: 'Show stream key' }).click();
    const fresh: string = (await configuration()).input.transportPrimaryIngestUrl;
    await expect.poll(() => page.locator('code.secret').textContent()).toBe(fresh.slice(fresh.lastIndexOf('/') + 1));
    await page.context().close();
  }, 120_000);

  it('a Viewer key reads the channel page with no write control enabled, the stream key masked; it passes axe', async () => {
    const page = await signIn(browser, p.baseUrl, t.id, viewerKey);
    await page.goto(`${p.baseUrl}/console#/channels/${channelId}`);
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent(), { timeout: 30_000 }).toBe('Studio two');
    await expect.poll(() => page.getByRole('button', { name: 'Save settings' }).isDisabled(), { timeout: 30_000 }).toBe(true);
    for (const name of ['Start', 'Stop', 'Record', 'Add restream']) expect(await page.getByRole('button', { name, exact: true }).isDisabled(), name).toBe(true);
    expect(await page.getByLabel('Name', { exact: true }).isDisabled()).toBe(true);
    expect(await page.getByRole('button', { name: 'Rotate stream key' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Show stream key' }).isVisible()).toBe(false);
    await expect.poll(() => page.getByText('The stream key is masked.').isVisible()).toBe(true);
    await reviewScreen(page, SHOTS, 'console-channel-viewer');
    await page.context().close();
  }, 120_000);
});
