import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, play, servePlayerPage } from '../helpers/browser.ts';
import { makeClip, tempDir } from '../helpers/media.ts';
import { startPlatform, type TestPlatform } from '../helpers/platform.ts';
import { uploadFile } from '../helpers/upload.ts';
import { until } from '../helpers/until.ts';

/** The whole path a customer takes: upload, create an asset, play its HLS endpoint in a browser on another origin. */
describe('a fresh VOD asset plays in headless Chromium with hls.js', () => {
  const { dir, cleanup } = tempDir();
  let p: TestPlatform;
  let browser: Browser;
  let page: { url: string; close(): Promise<void> };

  beforeAll(async () => {
    [p, browser, page] = await Promise.all([startPlatform('pglite'), launchBrowser(), servePlayerPage()]);
  });
  afterAll(async () => {
    await Promise.all([browser?.close(), page?.close(), p?.stop()]);
    cleanup();
  });

  it('advances currentTime at the expected height', async () => {
    const t = await p.createTenant();
    const src = await makeClip(dir, 'src', { width: 640, height: 360, seconds: 4 });
    const fileId = await uploadFile(t, src);
    const audio = (await t.json('POST', `/vod/v1/files/${fileId}/detect`)).body.tracks.find((x: any) => x.type === 'Audio');
    const { body } = await t.json('POST', '/vod/v1/assets', { transcodedSources: [{ fileId, transcodingTracks: [audio] }], preset: 'hls-h264-ladder' });
    const asset = (
      await until(
        () => t.json('GET', `/vod/v1/assets/${body.id}`),
        (r) => ['Available', 'Error'].includes(r.body.status),
        { timeoutMs: 90_000 },
      )
    ).body;
    expect(asset.status, asset.errorMessage).toBe('Available');
    const hls = asset.endpoints.find((e: any) => e.format === 'HLS');
    expect(new URL(page.url).origin).not.toBe(new URL(hls.url).origin);

    const r = await play(browser, page.url, hls.url, { height: 360 });
    expect(r.videoHeight).toBe(360);
    expect(r.times.at(-1)! - r.times.find((x) => x > 0)!).toBeGreaterThan(1);
  });
});
