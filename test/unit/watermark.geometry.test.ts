import { expect, it } from 'vitest';
import { IDENTITY, similarity, type Geometry } from '../../src/media/watermark/geometry.ts';
import { darkPixels } from '../../src/media/watermark/geometryFit.ts';
import { refineGeometry } from '../../src/media/watermark/geometryRefine.ts';
import { warpOf } from '../../src/media/watermark/geometrySampling.ts';
import { GRID_CELLS, GRID_H, GRID_W } from '../../src/media/watermark/pattern.ts';
import { SUSPECT_H, SUSPECT_W } from '../../src/media/watermark/suspect.ts';

/**
 * The geometry of detection (src/media/watermark/geometry*.ts) on synthetic pictures, without ffmpeg: a textured picture
 * drawn finely, reduced by area to the reference's grid as preparation does, and drawn through a known geometry (bars
 * around it) then reduced to the suspect's size as a capture is read.
 */
const FINE = 10; // fine pixels per suspect pixel
const picture = (seed: number) => (u: number, v: number) => {
  // Edges and blobs at several scales (a test card's kind of detail), different for every seed.
  const s = Math.sin(9 * u + seed) * Math.cos(7 * v - seed) + 0.5 * Math.sin(23 * u * (1 + seed / 7) + 17 * v);
  const square = (Math.floor((u + 0.5) * (6 + seed)) + Math.floor((v + 0.5) * 4)) % 2;
  return 120 + 50 * s + 40 * square;
};

/** The picture (u, v: -0.5 to 0.5) reduced by area to w x h. */
function reduce(w: number, h: number, at: (u: number, v: number) => number | undefined): Buffer {
  const out = Buffer.alloc(w * h);
  const n = FINE;
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++) {
      let s = 0;
      for (let j = 0; j < n; j++) for (let i = 0; i < n; i++) s += at((x + (i + 0.5) / n) / w - 0.5, (y + (j + 0.5) / n) / h - 0.5) ?? 16;
      out[y * w + x] = Math.round(s / (n * n));
    }
  return out;
}

/** Where a suspect point (x, y from its centre) comes from in the reference: g inverted (a 3x3 matrix inverse). */
function inverse(g: Geometry) {
  const m = [g.a, g.b, g.tx, g.c, g.d, g.ty, g.p, g.q, 1];
  const [a, b, c, d, e, f, gg, h, i] = m;
  const inv = [e * i - f * h, c * h - b * i, b * f - c * e, f * gg - d * i, a * i - c * gg, c * d - a * f, d * h - e * gg, b * gg - a * h, a * e - b * d];
  return (x: number, y: number): [number, number] => {
    const w = inv[6] * x + inv[7] * y + inv[8];
    return [(inv[0] * x + inv[1] * y + inv[2]) / w, (inv[3] * x + inv[4] * y + inv[5]) / w];
  };
}

function capture(g: Geometry, pictures: number) {
  const back = inverse(g);
  const reference = Buffer.concat(Array.from({ length: pictures }, (_, k) => reduce(GRID_W, GRID_H, picture(k))));
  const suspect = Buffer.concat(
    Array.from({ length: pictures }, (_, k) =>
      reduce(SUSPECT_W, SUSPECT_H, (x, y) => {
        const [u, v] = back(x, y);
        // Outside the picture: the black of a bar (16), as a player window's frame.
        return Math.abs(u) <= 0.5 && Math.abs(v) <= 0.5 ? picture(k)(u, v) : undefined;
      }),
    ),
  );
  return { reference, suspect };
}

/** The largest distance (suspect pixels) between where two geometries put the reference's cell centres. */
function farthest(a: Geometry, b: Geometry): number {
  let worst = 0;
  for (let cy = 0; cy < GRID_H; cy++)
    for (let cx = 0; cx < GRID_W; cx++) {
      const u = (cx + 0.5) / GRID_W - 0.5;
      const v = (cy + 0.5) / GRID_H - 0.5;
      const at = (g: Geometry) => {
        const w = 1 + g.p * u + g.q * v;
        return [((g.a * u + g.b * v + g.tx) / w) * SUSPECT_W, ((g.c * u + g.d * v + g.ty) / w) * SUSPECT_H];
      };
      const [p, q] = [at(a), at(b)];
      worst = Math.max(worst, Math.hypot(p[0] - q[0], p[1] - q[1]));
    }
  return worst;
}

it('reads each reference cell under the identity as the mean of its 2x2 suspect pixels, every cell visible', () => {
  const warp = warpOf(IDENTITY);
  expect(warp.visibleCount).toBe(GRID_CELLS);
  for (let c = 0; c < GRID_CELLS; c++) {
    const [x, y] = [(c % GRID_W) * 2, Math.floor(c / GRID_W) * 2];
    const taps = Array.from({ length: warp.start[c + 1] - warp.start[c] }, (_, t) => [warp.idx[warp.start[c] + t], warp.w[warp.start[c] + t]]);
    expect(taps.sort((p, q) => p[0] - q[0])).toEqual([
      [y * SUSPECT_W + x, 0.25],
      [y * SUSPECT_W + x + 1, 0.25],
      [(y + 1) * SUSPECT_W + x, 0.25],
      [(y + 1) * SUSPECT_W + x + 1, 0.25],
    ]);
  }
});

it('finds the bars of a player window, and leaves out the cells that would read their edge', () => {
  const g = similarity({ sx: 0.8, sy: 0.8, tx: 0, ty: 0, rotation: 0, mirrored: false });
  const { suspect } = capture(g, 3);
  const dark = darkPixels(suspect);
  // 0.1 of 64 = 6.4 pixels of bar each side: 6 dark columns, and the 7th (part bar) with them.
  expect(dark[SUSPECT_W * 18 + 6]).toBe(1);
  expect(dark[SUSPECT_W * 18 + 7]).toBe(0);
  const warp = warpOf(g, dark);
  const edge = warpOf(g);
  expect(warp.visibleCount).toBeLessThan(edge.visibleCount);
  expect(warp.visibleCount).toBeGreaterThan(GRID_CELLS * 0.7);
});

it('makes a geometry precise to a tenth of a pixel from a guess a pixel or two off (scale, rotation, perspective)', () => {
  const truths: Geometry[] = [
    similarity({ sx: 0.8, sy: 0.75, tx: 0.02, ty: -0.01, rotation: 0, mirrored: false }),
    { ...similarity({ sx: 1.03, sy: 1.02, tx: 0, ty: 0, rotation: 3, mirrored: false }), p: 0.02, q: 0.01 },
    similarity({ sx: 1.25, sy: 1.25, tx: 0, ty: 0, rotation: 0, mirrored: true }),
  ];
  for (const truth of truths) {
    const { reference, suspect } = capture(truth, 4);
    const guess = { ...truth, tx: truth.tx + 0.02, ty: truth.ty - 0.03, a: truth.a * 1.02 };
    expect(farthest(guess, truth)).toBeGreaterThan(1);
    const placed = Array.from({ length: 4 }, (_, k) => ({ suspect: k, next: k, alpha: 0, reference: k }));
    const fitted = refineGeometry(suspect, reference, placed, guess, darkPixels(suspect));
    expect(farthest(fitted, truth)).toBeLessThan(0.1);
  }
});
