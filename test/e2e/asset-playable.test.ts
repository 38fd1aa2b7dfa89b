import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, play, servePlayerPage } from '../helpers/browser.ts';
import { makeClip, tempDir } from '../helpers/media.ts';
import { startPlatform, type TestPlatform } from '../helpers/platform.ts';
import { uploadFile } from '../helpers/upload.ts';
import { until } from '../helpers/until.ts';

/**
 * Issue 24: a player starts an output from its beginning while the output is still being encoded. Both sources are
 * above the platform's chunk threshold here (two minutes): their chunks (6 s each) publish them one after the other,
 * and hls.js and dash.js play across the first chunk border. Each encode takes minutes on this machine (nothing
 * throttles ffmpeg); the test checks it was still running after playing. A source under the threshold (one pass) is
 * test/vod.playable.test.ts's.
 */
describe('a VOD asset plays in headless Chromium (hls.js, dash.js) while it is still encoding', () => {
  const { dir, cleanup } = tempDir();
  let p: TestPlatform;
  let browser: Browser;
  let page: { url: string; close(): Promise<void> };

  beforeAll(async () => {
    [p, browser, page] = await Promise.all([
      startPlatform('pglite', { MEDIAPLANE_CHUNK_THRESHOLD_SECONDS: '120', MEDIAPLANE_CHUNK_SECONDS: '6' }),
      launchBrowser(),
      servePlayerPage(),
    ]);
  });
  afterAll(async () => {
    await Promise.all([browser?.close(), page?.close(), p?.stop()]);
    cleanup();
  });

  const clips = new Map<number, Promise<string>>();
  /**
   * Uploads a source of `seconds` (made once for both tests), creates an asset with `preset` and waits until it is
   * playable (still Processing).
   */
  async function playableAsset(preset: string, format: 'HLS' | 'DASH', seconds: number) {
    const t = await p.createTenant();
    if (!clips.has(seconds))
      clips.set(seconds, makeClip(dir, `${seconds}s`, { width: 640, height: 360, seconds, audio: [{ language: 'eng', frequency: 440 }] }));
    const src = await clips.get(seconds)!;
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
    const embed = `${p.baseUrl}/player/v1/${t.id}/${body.id}?Muted=true&Autoplay=true`;
    return { url: playable.endpoints.find((e: any) => e.format === format).url as string, embed, status, remove };
  }

  it('hls.js starts from the beginning of the growing EVENT playlist of a chunked encode and plays across a chunk border before the asset is Available', async () => {
    const asset = await playableAsset('hls-h264-ladder', 'HLS', 240);
    const r = await play(browser, page.url, asset.url, { startTime: 0, seconds: 90, untilAdvanced: 8 });
    expect(r.error).toBeUndefined();
    expect(r.videoHeight).toBe(360);
    const started = r.times.find((x) => x > 0)!;
    // From the beginning, not from the end of what was encoded so far; then past the first chunk's end (6 s).
    expect(started).toBeLessThan(4);
    expect(r.times.at(-1)!).toBeGreaterThan(6.5);

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
    // Written by the chunks: the second chunk's segments follow the first's.
    expect(media).toContain('c0001_00000.ts');

    // Our own embed player plays it too, from its beginning, while it encodes.
    const embed = await browser.newPage();
    try {
      await embed.goto(asset.embed);
      const times: number[] = [];
      for (let i = 0; i < 40 && (times.at(-1) ?? 0) < 3; i++) {
        await embed.waitForTimeout(250);
        times.push(await embed.evaluate(() => document.querySelector('video')!.currentTime));
      }
      expect(await embed.evaluate(() => document.getElementById('message')!.textContent)).toBe('');
      expect(
        times.find((x) => x > 0),
        times.join(', '),
      ).toBeLessThan(4);
      expect(times.at(-1)!, times.join(', ')).toBeGreaterThan(2);
    } finally {
      await embed.close();
    }
    expect(await asset.status()).toBe('Processing');
    // The end of the encode (VOD playlists at the same URLs) is test/vod.playable.test.ts's.
    await asset.remove();
  }, 900_000);

  it('dash.js and Shaka start from the beginning of the dynamic MPD of a chunked encode and play across a chunk border before the asset is Available', async () => {
    // Long enough that the encode still runs after both players (in CI it had finished a 130 s source in 12 s chunks;
    // four minutes since the chunks start from the upload's probe, each a probe sooner).
    const asset = await playableAsset('dash-h264-ladder', 'DASH', 240);
    const mpd = await (await fetch(asset.url)).text();
    expect(mpd).toContain('type="dynamic"');
    // Laid together from the chunks' segments, named by their times.
    expect(mpd).toContain('media="chunk-$RepresentationID$-$Time$.m4s"');
    // dash.js, then Shaka Player (a third maker's), each from 0 across the first chunk border.
    for (const player of ['dash', 'shaka'] as const) {
      const r = await play(browser, page.url, asset.url, { player, startTime: 0, seconds: 90, untilAdvanced: 8 });
      expect(r.error, player).toBeUndefined();
      const started = r.times.find((x) => x > 0)!;
      expect(started, player).toBeLessThan(4);
      expect(r.times.at(-1)!, player).toBeGreaterThan(6.5);
    }
    expect(await asset.status()).toBe('Processing');
    await asset.remove();
  }, 900_000);
});
