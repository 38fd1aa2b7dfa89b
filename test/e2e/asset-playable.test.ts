import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, play, servePlayerPage } from '../helpers/browser.ts';
import { makeClip, tempDir } from '../helpers/media.ts';
import { startPlatform, type TestPlatform } from '../helpers/platform.ts';
import { uploadFile } from '../helpers/upload.ts';
import { until } from '../helpers/until.ts';

/**
 * Issue 24: a player starts an output from its beginning while the output is still being encoded. The source is three
 * minutes of 360p, whose encode takes minutes on this machine (nothing throttles ffmpeg); the test plays a few
 * seconds and checks the encode was still running after them.
 */
describe('a VOD asset plays in headless Chromium (hls.js, dash.js) while it is still encoding', () => {
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

  /** The three-minute source, made once for both players. */
  let source: Promise<string> | undefined;
  /** Uploads the three-minute source, creates an asset with `preset` and waits until it is playable (still Processing). */
  async function playableAsset(preset: string, format: 'HLS' | 'DASH') {
    const t = await p.createTenant();
    source ??= makeClip(dir, 'long', { width: 640, height: 360, seconds: 180, audio: [{ language: 'eng', frequency: 440 }] });
    const src = await source;
    const fileId = await uploadFile(t, src);
    const audio = (await t.json('POST', `/vod/v1/files/${fileId}/detect`)).body.tracks.find((x: any) => x.type === 'Audio');
    const { body } = await t.json('POST', '/vod/v1/assets', { transcodedSources: [{ fileId, transcodingTracks: [audio] }], preset });
    const playable = (
      await until(
        () => t.json('GET', `/vod/v1/assets/${body.id}`),
        (r) => r.body.endpoints.length > 0 || ['Available', 'Error'].includes(r.body.status),
        { timeoutMs: 240_000, everyMs: 200 },
      )
    ).body;
    expect(playable.status, playable.errorMessage).toBe('Processing');
    const status = async () => (await t.json('GET', `/vod/v1/assets/${body.id}`)).body.status as string;
    // Its encode stops with it, rather than running on beside the next test (and the rest of the suite).
    const remove = async () => expect((await t.call('DELETE', `/vod/v1/assets/${body.id}`)).status).toBe(200);
    return { url: playable.endpoints.find((e: any) => e.format === format).url as string, status, remove };
  }

  it('hls.js starts from the beginning of the growing EVENT playlist and advances before the asset is Available', async () => {
    const asset = await playableAsset('hls-h264-ladder', 'HLS');
    const r = await play(browser, page.url, asset.url, { startTime: 0, seconds: 60, untilAdvanced: 3 });
    expect(r.error).toBeUndefined();
    expect(r.videoHeight).toBe(360);
    const started = r.times.find((x) => x > 0)!;
    // From the beginning, not from the end of what was encoded so far.
    expect(started).toBeLessThan(4);
    expect(r.times.at(-1)! - started).toBeGreaterThan(2);

    expect(await asset.status()).toBe('Processing');
    const media = await (
      await fetch(
        new URL(
          (await (await fetch(asset.url)).text()).split('\n').find((l) => l && !l.startsWith('#'))!,
          asset.url,
        ),
      )
    ).text();
    expect(media).not.toContain('#EXT-X-ENDLIST');
    // The end of the encode (VOD playlists at the same URLs) is test/vod.playable.test.ts's.
    await asset.remove();
  }, 900_000);

  it('dash.js starts from the beginning of the dynamic MPD and advances before the asset is Available', async () => {
    const asset = await playableAsset('dash-h264-ladder', 'DASH');
    expect(await (await fetch(asset.url)).text()).toContain('type="dynamic"');
    const r = await play(browser, page.url, asset.url, { player: 'dash', startTime: 0, seconds: 60, untilAdvanced: 3 });
    expect(r.error).toBeUndefined();
    const started = r.times.find((x) => x > 0)!;
    expect(started).toBeLessThan(4);
    expect(r.times.at(-1)! - started).toBeGreaterThan(2);
    expect(await asset.status()).toBe('Processing');
    await asset.remove();
  }, 900_000);
});
