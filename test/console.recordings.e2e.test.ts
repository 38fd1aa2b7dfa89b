import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { launchBrowser } from './helpers/browser.ts';
import { atPhoneWidth, reviewScreen, shotsDir, signIn } from './helpers/console.ts';
import { pushEncoder } from './helpers/live.ts';
import { tempDir } from './helpers/media.ts';
import { describeOnDb, startPlatform, type TestPlatform, type TestTenant } from './helpers/platform.ts';
import { freePort } from './helpers/process.ts';
import { until } from './helpers/until.ts';

const { dir, cleanup } = tempDir('mediaplane-console-recordings-');
afterAll(cleanup);
const SHOTS = shotsDir(dir);

/**
 * A recording's outputs in the console's channel page (headless Chromium): an output added from the recording's card
 * while it records waits, is made once it is recorded, plays and is copied; it is removed there; a Viewer key finds
 * those controls disabled with the reason. The channel is fed by ffmpeg (160x90 at 15 fps) for a few seconds.
 */
describeOnDb('pglite', 'Tenant console: recording outputs', (kind) => {
  let p: TestPlatform;
  let t: TestTenant;
  let browser: Browser;
  let viewerKey: string;
  let encoder: ReturnType<typeof pushEncoder> | undefined;
  let channelId: string;
  let recordingId: string;

  beforeAll(async () => {
    p = await startPlatform(kind, {
      MEDIAPLANE_RTMP_HOST: '127.0.0.1',
      MEDIAPLANE_RTMP_PORT: String(await freePort()),
      MEDIAPLANE_LIVE_POLL_MS: '200',
      MEDIAPLANE_LIVE_SEGMENT_SECONDS: '1',
    });
    t = await p.createTenant();
    viewerKey = (await t.json('POST', '/core/v1/api-key', { name: 'console viewer', roleType: 'Viewer' })).body.key;
    const [channel] = await Promise.all([
      t.json('POST', '/live/v1/channels', {
        name: 'Stadium',
        input: { inputLoss: { type: 'COLOR', color: '#1060C0' } },
        qualities: [{ resolution: '144p', frameRate: 15 }],
      }),
      launchBrowser().then((b) => (browser = b)),
    ]);
    channelId = channel.body.id;
    expect((await t.call('POST', `/live/v1/channels/${channelId}/start`)).status).toBe(200);
    const configuration = async () => (await t.json('GET', `/live/v1/channels/${channelId}/configuration`)).body;
    const on = await until(configuration, (c) => c.status.value === 'On', { timeoutMs: 60_000, everyMs: 200, what: 'the channel On' });
    encoder = pushEncoder(on.input.transportPrimaryIngestUrl.replace('localhost', '127.0.0.1'), { size: '160x90', rate: 15 });
    await until(
      async () => (await t.json('GET', `/live/v1/channels/${channelId}`)).body.internalStatus,
      (s) => s === 'InputConnected',
      { timeoutMs: 60_000, everyMs: 200, what: 'the encoder connected' },
    );
  }, 180_000);
  afterAll(async () => {
    await encoder?.stop();
    await browser?.close();
    await p?.stop();
  });

  const recording = async () => (await t.json('GET', `/cvr/v1/recordings/${recordingId}`)).body;
  const openChannel = async (key: string): Promise<Page> => {
    const page = await signIn(browser, p.baseUrl, t.id, key);
    await page.goto(`${p.baseUrl}/console#/channels/${channelId}`);
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent(), { timeout: 30_000 }).toBe('Stadium');
    return page;
  };

  /** The segments the recording has copied so far, as its catch-up playlist lists them. */
  async function recordedSegments(): Promise<number> {
    const master = (await recording()).catchup?.endpoints?.find((e: { format: string }) => e.format === 'HLS')?.url as string | undefined;
    if (!master) return 0;
    const res = await fetch(master);
    const variant = res.ok ? (await res.text()).split('\n').find((l) => l && !l.startsWith('#')) : undefined;
    if (!variant) return 0;
    return (await (await fetch(new URL(variant, master))).text()).split('#EXTINF').length - 1;
  }

  it('adds an output to a recording while it records: it waits, is made once recorded, plays, is copied and removed', async () => {
    // From now until the channel stops: recording (Live) when the output is added.
    const created = await t.json('POST', '/cvr/v1/recordings', {
      source: { type: 'LiveChannel', liveChannelDetails: { channelId, start: new Date().toISOString() } },
      catchup: { enabled: true },
      title: 'Match',
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    recordingId = created.body.id;
    const page = await openChannel(t.key);
    page.on('dialog', (d) => void d.accept());
    const card = page.locator(`[data-recording="${recordingId}"]`);
    await expect.poll(() => card.locator('.badge').first().textContent(), { timeout: 30_000 }).toMatch(/Scheduled|Live/);
    expect(await card.getByText('No output: add one below.').isVisible()).toBe(true);

    // The recorder's presets, the download chosen first and explained.
    const preset = card.getByLabel('Preset of a new output');
    await expect.poll(() => preset.inputValue(), { timeout: 30_000 }).toBe('mp4-h264-download');
    const presets = (await t.json('GET', '/transcoder/v1/presets?limit=100')).body.items as { id: string; description: string }[];
    expect(await preset.locator('option').count()).toBe(presets.length);
    expect(await card.locator(`#rec-output-${recordingId}-help`).textContent()).toBe(presets.find((x) => x.id === 'mp4-h264-download')!.description);
    await card.getByRole('button', { name: 'Add output to Match' }).click();
    const output = card.locator('[data-output]');
    await expect.poll(() => output.count(), { timeout: 30_000 }).toBe(1);
    const [added] = (await recording()).outputs;
    expect(added).toMatchObject({ preset: 'mp4-h264-download', status: 'Pending' });
    // It waits for the recording, its progress at 0.
    expect(await output.locator('.badge').textContent()).toBe('Pending');
    expect(await output.getByText('made once the recording is recorded').isVisible()).toBe(true);
    expect(await output.getByRole('progressbar', { name: 'Progress of the mp4-h264-download output' }).getAttribute('value')).toBe('0');
    await reviewScreen(page, SHOTS, 'console-recording-output-waiting');

    // A few seconds recorded, the channel stops: the recording ends, and its output is made.
    await expect.poll(recordedSegments, { timeout: 60_000, interval: 500 }).toBeGreaterThanOrEqual(3);
    expect((await t.call('POST', `/live/v1/channels/${channelId}/stop`)).status).toBe(200);
    await encoder!.stop();
    await expect.poll(() => output.locator('.badge').textContent(), { timeout: 90_000, interval: 1000 }).toBe('Available');
    expect(await output.getByRole('progressbar').count()).toBe(0);
    expect((await t.json('GET', `/cvr/v1/recordings/${recordingId}/outputs/${added.id}/progress`)).body).toEqual({ progressPercent: 100 });

    const [mp4] = (await recording()).outputs[0].endpoints;
    expect(mp4.format).toBe('MP4');
    await output.getByRole('button', { name: 'Copy URL of mp4-h264-download MP4' }).click();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(mp4.url);
    await output.getByRole('button', { name: 'Play mp4-h264-download MP4' }).click();
    await page.waitForFunction(() => (document.getElementById('player') as HTMLVideoElement).currentTime > 0.5, null, { timeout: 60_000 });
    await reviewScreen(page, SHOTS, 'console-recording-outputs');
    await atPhoneWidth(page, `${SHOTS}/console-recording-outputs-phone.png`);

    await output.getByRole('button', { name: 'Remove the mp4-h264-download output' }).click();
    await expect.poll(async () => (await recording()).outputs, { timeout: 30_000 }).toEqual([]);
    await expect.poll(() => card.getByText('No output: add one below.').isVisible(), { timeout: 30_000 }).toBe(true);
    expect((await t.call('GET', `/cvr/v1/recordings/${recordingId}/outputs/${added.id}/progress`)).status).toBe(404);
    await page.context().close();
  }, 180_000);

  it('a Viewer key sees the outputs with "Add output", the preset and "Remove" disabled, with the reason', async () => {
    expect((await t.json('POST', `/cvr/v1/recordings/${recordingId}/outputs`, { preset: 'remux-hls-mp4' })).status).toBe(200);
    const page = await openChannel(viewerKey);
    const card = page.locator(`[data-recording="${recordingId}"]`);
    await expect.poll(() => card.locator('[data-output] strong').textContent(), { timeout: 30_000 }).toBe('remux-hls-mp4');
    const reason = "This API key's role is Viewer: it can read but not change content.";
    for (const control of [
      card.getByRole('button', { name: 'Add output to Match' }),
      card.getByLabel('Preset of a new output'),
      card.getByRole('button', { name: 'Remove the remux-hls-mp4 output' }),
    ]) {
      expect(await control.isDisabled(), String(control)).toBe(true);
      expect(await control.getAttribute('title'), String(control)).toBe(reason);
    }
    await reviewScreen(page, SHOTS, 'console-recording-outputs-viewer');
    await page.context().close();
  }, 60_000);
});
