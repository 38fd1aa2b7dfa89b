import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PlacedOverlay } from '../src/media/overlays.ts';
import { transcode } from '../src/media/transcode.ts';
import { serveDirectory, type StaticServer } from './helpers/browser.ts';
import { frameAt, makeClip, makeImage, meanColor, rung, tempDir, testPreset } from './helpers/media.ts';

type Rgb = [number, number, number];

/**
 * Overlays burned into a black 320x180 clip, checked on decoded frames of the output: each picture must be at its
 * place inside its time window and absent outside it, with its opacity, fade and layer order.
 */
describe('overlays burned in', () => {
  const { dir, cleanup } = tempDir();
  let server: StaticServer;
  let outDir: string;

  // Source pixels: A red square (PNG over HTTP) at 20,20 from 1.0 to 2.0 s; B blue at 50% opacity at 120,20 from 0.5 to
  // 2.5 s fading in over 1 s; C red (layer 2) over D green (layer 1) overlapping at x 40–60; E a yellow video at 220,20.
  const A = { x: 48, y: 48 };
  const B = { x: 148, y: 48 };
  const OVERLAP = { x: 46, y: 126 };
  const GREEN_ONLY = { x: 66, y: 126 };
  const E = { x: 236, y: 36 };

  beforeAll(async () => {
    const [src, red, blue, green, yellowVideo] = await Promise.all([
      makeClip(dir, 'black', { color: 'black', seconds: 3, audio: [] }),
      makeImage(dir, 'red', { color: 'red' }),
      makeImage(dir, 'blue', { color: 'blue' }),
      makeImage(dir, 'green', { width: 40, height: 40, color: 'lime' }),
      makeClip(dir, 'yellow', { color: 'yellow', width: 40, height: 40, seconds: 1, audio: [] }),
    ]);
    server = await serveDirectory(dir);
    const overlays: PlacedOverlay[] = [
      { startTime: '1000', duration: 1000, imageX: 20, imageY: 20, width: 64, height: 64, source: `${server.url}/red.png` },
      { startTime: '500', duration: 2000, imageX: 120, imageY: 20, width: 64, height: 64, opacity: 50, fadeIn: 1000, source: blue },
      { startTime: '0', duration: 3000, imageX: 20, imageY: 110, width: 40, height: 40, layer: 2, source: red },
      { startTime: '0', duration: 3000, imageX: 40, imageY: 110, width: 40, height: 40, layer: 1, source: green },
      { startTime: '500', duration: 2000, imageX: 220, imageY: 20, width: 40, height: 40, source: yellowVideo },
    ];
    outDir = join(dir, 'out');
    const preset = testPreset({ packaging: ['mp4'], ladder: [rung('180p', 320, 180, 400), rung('90p', 160, 90, 150)] });
    await transcode({ input: src, tracks: [], preset, overlays, outDir });
  });
  afterAll(async () => {
    await server?.close();
    cleanup();
  });

  const colorAt = async (t: number, at: { x: number; y: number }, file = 'mp4/180p.mp4', scale = 1): Promise<Rgb> =>
    meanColor(await frameAt(join(outDir, file), t), Math.round(at.x * scale), Math.round(at.y * scale), Math.max(2, 8 * scale));

  const expectColor = (actual: Rgb, expected: Rgb, tolerance = 24) => {
    actual.forEach((c, i) => expect(Math.abs(c - expected[i]), `${actual} ≈ ${expected}`).toBeLessThanOrEqual(tolerance));
  };
  const BLACK: Rgb = [0, 0, 0];

  it('draws the picture only inside its time window (fetched by URL)', async () => {
    expectColor(await colorAt(0.5, A), BLACK);
    expectColor(await colorAt(1.5, A), [255, 0, 0]);
    expectColor(await colorAt(2.5, A), BLACK);
    expect(server.requests).toContain('/red.png');
  });

  it('applies opacity and the alpha fade-in', async () => {
    expectColor(await colorAt(0.25, B), BLACK);
    // A quarter into the fade at 50% opacity: about an eighth of full blue.
    const early = await colorAt(0.75, B);
    expect(early[2]).toBeGreaterThan(15);
    expect(early[2]).toBeLessThan(55);
    expectColor(await colorAt(2, B), [0, 0, 128]);
  });

  it('stacks by layer: the higher layer is on top where they overlap', async () => {
    expectColor(await colorAt(1, OVERLAP), [255, 0, 0]);
    expectColor(await colorAt(1, GREEN_ONLY), [0, 255, 0]);
  });

  it('plays a video overlay in its window, repeated to fill it', async () => {
    expectColor(await colorAt(0.25, E), BLACK);
    expectColor(await colorAt(0.75, E), [255, 255, 0]);
    // The 1 s clip is over by 2.2 s into the window's 2 s; it is repeated, not frozen or gone.
    expectColor(await colorAt(2.2, E), [255, 255, 0]);
    expectColor(await colorAt(2.75, E), BLACK);
  });

  it('burns the overlays in before scaling, so every rung shows them in the same place', async () => {
    expectColor(await colorAt(1.5, A, 'mp4/90p.mp4', 0.5), [255, 0, 0], 40);
    expectColor(await colorAt(0.5, A, 'mp4/90p.mp4', 0.5), BLACK, 40);
  });
});
