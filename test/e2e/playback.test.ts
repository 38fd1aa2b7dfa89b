import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { transcode } from '../../src/media/transcode.ts';
import { launchBrowser, play, serveDirectory, servePlayerPage, type StaticServer } from '../helpers/browser.ts';
import { makeClip, rung, tempDir, testPreset } from '../helpers/media.ts';

/** A real client: headless Chromium plays our outputs with hls.js and dash.js from a page on another origin. */
describe('browser playback', () => {
  const { dir, cleanup } = tempDir();
  let browser: Browser;
  let media: StaticServer;
  let page: { url: string; close(): Promise<void> };

  beforeAll(async () => {
    const src = await makeClip(dir, 'src', { width: 640, height: 360, seconds: 4, subtitles: [{ language: 'eng', text: 'Hello' }] });
    const tracks = [
      { type: 'Audio', index: 1 },
      { type: 'Audio', index: 2 },
      { type: 'Caption', index: 3 },
    ] as const;
    const ladder = [rung('360p', 640, 360, 600), rung('180p', 320, 180, 250)];
    await Promise.all([
      transcode({ input: src, tracks: [...tracks], preset: testPreset({ ladder }), outDir: join(dir, 'hls-out') }),
      transcode({ input: src, tracks: [...tracks], preset: testPreset({ ladder, packaging: ['cmaf'] }), outDir: join(dir, 'cmaf-out') }),
    ]);
    [browser, media, page] = await Promise.all([launchBrowser(), serveDirectory(dir), servePlayerPage()]);
  });

  afterAll(async () => {
    await Promise.all([browser?.close(), media?.close(), page?.close()]);
    cleanup();
  });

  // The clip's captions, at the times the source has them: the player put them on the right frames.
  const CUES = [
    { start: 0.5, end: 1.5, text: 'Hello' },
    { start: 2, end: 2.8, text: 'Hello again' },
  ];
  const advanced = (times: number[]) => times.at(-1)! - times.find((t) => t > 0)!;

  it('hls.js plays the HLS (MPEG-TS) output: the playhead advances at the top rung, with both languages and captions', async () => {
    expect(new URL(page.url).origin).not.toBe(new URL(media.url).origin);
    const r = await play(browser, page.url, `${media.url}/hls-out/hls/master.m3u8`, { height: 360 });
    expect(r.error).toBeUndefined();
    expect(advanced(r.times)).toBeGreaterThan(1);
    expect([r.videoWidth, r.videoHeight]).toEqual([640, 360]);
    expect(r.audioTracks).toEqual(['eng', 'fra']);
    expect(r.textTracks).toEqual(['eng']);
    expect(media.requests).toContain('/hls-out/hls/360p/seg_00000.ts');
    expect(r.cues).toEqual(CUES);
  });

  it('hls.js plays the CMAF output through its HLS master playlist', async () => {
    const r = await play(browser, page.url, `${media.url}/cmaf-out/cmaf/master.m3u8`, { height: 180 });
    expect(r.error).toBeUndefined();
    expect(advanced(r.times)).toBeGreaterThan(1);
    expect(r.videoHeight).toBe(180);
    expect(media.requests).toContain('/cmaf-out/cmaf/init-1.m4s');
    expect(r.cues).toEqual(CUES);
  });

  it('dash.js plays the same CMAF segments through the MPD, captions included', async () => {
    const r = await play(browser, page.url, `${media.url}/cmaf-out/cmaf/manifest.mpd`, { player: 'dash' });
    expect(r.error).toBeUndefined();
    expect(advanced(r.times)).toBeGreaterThan(1);
    expect([360, 180]).toContain(r.videoHeight);
    // dash.js reports languages in their two-letter form.
    expect(r.audioTracks).toEqual(['en', 'fr']);
    expect(r.textTracks).toEqual(['en']);
    expect(r.cues).toEqual(CUES);
  });
});
