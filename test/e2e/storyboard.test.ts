import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runFfmpeg } from '../../src/media/ffmpeg.ts';
import { endpointOf, vodAssets } from '../helpers/commands.ts';
import { launchBrowser, servePlayerPage } from '../helpers/browser.ts';
import { makeClip, tempDir } from '../helpers/media.ts';
import { describeOnDb, startPlatform, type TestPlatform, type TestTenant } from '../helpers/platform.ts';
import { uploadFile } from '../helpers/upload.ts';

interface Thumbnail {
  tracks: number;
  uri: string;
  x: number;
  y: number;
  width: number;
  height: number;
  /** The sheet as the page decoded it. */
  naturalWidth: number;
}

/** A rectangle of a raw RGB picture. */
function crop(rgb: Buffer, width: number, x: number, y: number, w: number, h: number): Buffer {
  const out = Buffer.alloc(w * h * 3);
  for (let row = 0; row < h; row++) rgb.copy(out, row * w * 3, ((y + row) * width + x) * 3, ((y + row) * width + x + w) * 3);
  return out;
}
const meanDifference = (a: Buffer, b: Buffer) => a.reduce((sum, v, i) => sum + Math.abs(v - b[i]), 0) / a.length;

/**
 * Issue 27 item 3: a finished output lists its storyboard where players look for seek previews (docs/decisions/
 * vod-assets.md, "Storyboards"), and players of other makers find it there: Shaka from the DASH thumbnail track and
 * from HLS's image stream, dash.js from the DASH one; the WebVTT names each tile, which is the video's frame at its time.
 */
describeOnDb('pglite', 'Storyboards of VOD outputs in the players', (kind) => {
  const { dir, cleanup } = tempDir('mediaplane-storyboard-');
  let p: TestPlatform;
  let t: TestTenant;
  let browser: Browser;
  let page: { url: string; close(): Promise<void> };
  let source = '';
  let hls = '';
  let dash = '';

  beforeAll(async () => {
    [p, browser, page] = await Promise.all([startPlatform(kind), launchBrowser(), servePlayerPage()]);
    t = await p.createTenant();
    source = await makeClip(dir, 'clip', { seconds: 12, width: 320, height: 180, fps: 25, audio: [] });
    const fileId = await uploadFile(t, source);
    const id = (await vodAssets(t).create({ transcodedSources: [{ fileId }], preset: 'cmaf-h264-ladder' })).id;
    const asset = await vodAssets(t).settled(id, 180_000);
    expect(asset.status, asset.errorMessage ?? undefined).toBe('Available');
    hls = endpointOf(asset, 'HLS').url;
    dash = endpointOf(asset, 'DASH').url;
  }, 240_000);
  afterAll(async () => {
    await Promise.all([browser?.close(), page?.close(), p?.stop()]);
    cleanup();
  });

  it('lists a tile every segment in the HLS image stream, the MPD and the WebVTT, each tile the frame of its time', async () => {
    const master = await (await fetch(hls)).text();
    const inf = /#EXT-X-IMAGE-STREAM-INF:([^\n]*)/.exec(master)?.[1];
    expect(inf).toMatch(/RESOLUTION=160x90,CODECS="jpeg",URI="storyboard\/images.m3u8"/);
    const images = await (await fetch(new URL('storyboard/images.m3u8', hls))).text();
    expect(images).toContain('#EXT-X-IMAGES-ONLY');
    expect(images).toContain('#EXT-X-TILES:RESOLUTION=160x90,LAYOUT=10x10,DURATION=4.000');
    const mpd = await (await fetch(dash)).text();
    expect(mpd).toMatch(/<EssentialProperty schemeIdUri="http:\/\/dashif.org\/thumbnail_tile" value="10x10" \/>/);

    const vtt = await (await fetch(new URL('storyboard/storyboard.vtt', hls))).text();
    const cues = [...vtt.matchAll(/(\d\d:\d\d:\d\d\.\d{3}) --> (\d\d:\d\d:\d\d\.\d{3})\n(\S+)#xywh=(\d+),(\d+),(\d+),(\d+)/g)];
    expect(cues.map((c) => [c[1], c[2], c[4]])).toEqual([
      ['00:00:00.000', '00:00:04.000', '0'],
      ['00:00:04.000', '00:00:08.000', '160'],
      ['00:00:08.000', '00:00:12.000', '320'],
    ]);
    // The second tile is the source's frame at 4 s, not the one at 0 s.
    const sheet = join(dir, 'sheet.jpg');
    writeFileSync(sheet, Buffer.from(await (await fetch(new URL(`storyboard/${cues[1][3]}`, hls))).arrayBuffer()));
    await runFfmpeg(['-y', '-i', sheet, '-f', 'rawvideo', '-pix_fmt', 'rgb24', `${sheet}.rgb`]);
    const tile = crop(readFileSync(`${sheet}.rgb`), 1600, 160, 0, 160, 90);
    const frame = async (at: number) => {
      const raw = join(dir, `frame-${at}.rgb`);
      await runFfmpeg(['-y', '-ss', String(at), '-i', source, '-frames:v', '1', '-vf', 'scale=160:90', '-f', 'rawvideo', '-pix_fmt', 'rgb24', raw]);
      return readFileSync(raw);
    };
    expect(meanDifference(tile, await frame(4))).toBeLessThan(8);
    expect(meanDifference(tile, await frame(0))).toBeGreaterThan(15);
  });

  it('Shaka finds the seek preview of 5 s in the DASH thumbnail track and in the HLS image stream, and the sheet decodes', async () => {
    for (const url of [dash, hls]) {
      const tab = await browser.newPage();
      try {
        await tab.goto(`${page.url}/shaka`);
        const thumb: Thumbnail = await tab.evaluate(async (manifest) => {
          const shaka = (window as any).shaka;
          shaka.polyfill.installAll();
          const player = new shaka.Player();
          await player.attach(document.getElementById('v'));
          await player.load(manifest);
          const tracks = player.getImageTracks();
          const t = await player.getThumbnails(tracks[0].id, 5);
          const img = new Image();
          img.crossOrigin = 'anonymous';
          img.src = t.uris[0];
          await img.decode();
          return { tracks: tracks.length, uri: t.uris[0], x: t.positionX, y: t.positionY, width: t.width, height: t.height, naturalWidth: img.naturalWidth };
        }, url);
        expect(thumb, url).toMatchObject({ tracks: 1, x: 160, y: 0, width: 160, height: 90, naturalWidth: 1600 });
        expect(thumb.uri).toMatch(/storyboard\/sheet_00001\.jpg$/);
      } finally {
        await tab.close();
      }
    }
  });

  it('dash.js gives the same seek preview', async () => {
    const tab = await browser.newPage();
    try {
      await tab.goto(page.url);
      const thumb = await tab.evaluate(
        (manifest) =>
          new Promise<{ url: string; x: number; y: number; width: number; height: number }>((resolve, reject) => {
            const player = (window as any).dashjs.MediaPlayer().create();
            player.initialize(document.getElementById('v'), manifest, false);
            player.on('streamInitialized', () => player.provideThumbnail(5, (t: any) => (t ? resolve(t) : reject(new Error('no thumbnail')))));
            player.on('error', (e: unknown) => reject(new Error(JSON.stringify(e).slice(0, 300))));
          }),
        dash,
      );
      expect(thumb).toMatchObject({ x: 160, y: 0, width: 160, height: 90 });
      expect(thumb.url).toMatch(/storyboard\/sheet_00001\.jpg$/);
    } finally {
      await tab.close();
    }
  });
});
