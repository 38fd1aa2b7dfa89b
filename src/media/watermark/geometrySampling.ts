import { GRID_CELLS, GRID_H, GRID_W } from './pattern.ts';
import { SUSPECT_CELLS, SUSPECT_H, SUSPECT_W } from './suspect.ts';
import { mapPoint, type Geometry } from './geometry.ts';

// A geometry as a sampling table: each reference cell read as a weighted mean of suspect pixels.

/** One reference cell as weighted suspect pixels (cell c: taps start[c] to start[c + 1]); `visible` where it is whole. */
export interface Warp {
  idx: Int32Array;
  w: Float32Array;
  start: Int32Array;
  visible: Uint8Array;
  visibleCount: number;
}

/** The most pixels a footprint's weights span along one axis (a cell at most 3 suspect pixels wide, and 2 each side). */
const AXIS_TAPS = 9;

/**
 * The weights of pixels from..from + AXIS_TAPS - 1 in C(t), the sum of the pixels below t (pixel i covers [i, i + 1]):
 * exact at whole t, and between them C interpolated by Catmull-Rom, so that a pixel a footprint covers in part counts
 * by a smooth reconstruction of the picture rather than as flat. Beyond the picture's edges C goes on at the edge
 * pixel's value. Added to `out` times `sign`.
 */
function addCumulative(t: number, n: number, from: number, sign: number, out: Float64Array) {
  const k = Math.floor(t);
  const f = t - k;
  const c = [(-f + 2 * f * f - f * f * f) / 2, (2 - 5 * f * f + 3 * f * f * f) / 2, (f + 4 * f * f - 3 * f * f * f) / 2, (-f * f + f * f * f) / 2];
  for (let q = 0; q < 4; q++) {
    if (!c[q]) continue;
    const node = k - 1 + q;
    // C(node) holds every pixel below node: those from `from` on get c[q] (those below cancel between two ends).
    for (let i = from; i < Math.min(n, node, from + AXIS_TAPS); i++) out[i - from] += sign * c[q];
    if (node < 0) out[0 - from] += sign * c[q] * node;
    if (node > n) out[n - 1 - from] += sign * c[q] * (node - n);
  }
}

/** The weights of pixels from..from + AXIS_TAPS - 1 in the mean over [a, b] of a row (or column) of n pixels. */
function axisWeights(a: number, b: number, n: number, out: Float64Array): number {
  const from = Math.max(0, Math.min(n - AXIS_TAPS, Math.floor(a) - 2));
  out.fill(0);
  addCumulative(b, n, from, 1 / (b - a), out);
  addCumulative(a, n, from, -1 / (b - a), out);
  return from;
}

/**
 * The sampling table of a geometry: each reference cell is the mean of its footprint in the suspect (its centre
 * mapped, its extent along u and v through the map: a rectangle, which a rotation of a few degrees hardly changes). A
 * cell is visible when its footprint lies inside the suspect and touches none of the `dark` pixels (bars: their edge
 * would darken the cell). `shift` moves every footprint (suspect pixels: the map's derivative, refineGeometry). Under
 * the identity a cell is exactly the mean of its 2x2 suspect pixels.
 */
export function warpOf(g: Geometry, dark?: Uint8Array, shift: readonly [number, number] = [0, 0]): Warp {
  const idx = new Int32Array(GRID_CELLS * AXIS_TAPS * AXIS_TAPS);
  const w = new Float32Array(GRID_CELLS * AXIS_TAPS * AXIS_TAPS);
  const start = new Int32Array(GRID_CELLS + 1);
  const visible = new Uint8Array(GRID_CELLS);
  const wx = new Float64Array(AXIS_TAPS);
  const wy = new Float64Array(AXIS_TAPS);
  let taps = 0;
  let visibleCount = 0;
  const du = 0.5 / GRID_W;
  const dv = 0.5 / GRID_H;
  for (let cy = 0; cy < GRID_H; cy++) {
    for (let cx = 0; cx < GRID_W; cx++) {
      const cell = cy * GRID_W + cx;
      start[cell] = taps;
      const u = (cx + 0.5) / GRID_W - 0.5;
      const v = (cy + 0.5) / GRID_H - 0.5;
      const [x, y] = mapPoint(g, u, v);
      // Half the footprint's width and height, at most 1.5 pixels (a cell zoomed 1.5 times).
      const hx = Math.min(1.5, Math.abs(mapPoint(g, u + du, v)[0] - mapPoint(g, u - du, v)[0]) / 2);
      const hy = Math.min(1.5, Math.abs(mapPoint(g, u, v + dv)[1] - mapPoint(g, u, v - dv)[1]) / 2);
      const [x0, x1, y0, y1] = [x + shift[0] - hx, x + shift[0] + hx, y + shift[1] - hy, y + shift[1] + hy];
      let ok = x0 >= 0 && y0 >= 0 && x1 <= SUSPECT_W && y1 <= SUSPECT_H && hx > 0.05 && hy > 0.05;
      // Outside the picture (not visible, but read by refineGeometry's derivatives): the nearest footprint inside.
      const inside = (lo: number, hi: number, n: number) => {
        const width = Math.max(0.1, hi - lo);
        const from = Math.min(n - width, Math.max(0, lo));
        return [from, from + width];
      };
      const [ax0, ax1] = inside(x0, x1, SUSPECT_W);
      const [ay0, ay1] = inside(y0, y1, SUSPECT_H);
      const fromX = axisWeights(ax0, ax1, SUSPECT_W, wx);
      const fromY = axisWeights(ay0, ay1, SUSPECT_H, wy);
      for (let j = 0; j < AXIS_TAPS; j++) {
        if (Math.abs(wy[j]) < 1e-7) continue;
        for (let i = 0; i < AXIS_TAPS; i++) {
          if (Math.abs(wx[i]) < 1e-7) continue;
          const pixel = (fromY + j) * SUSPECT_W + fromX + i;
          if (dark?.[pixel]) ok = false;
          idx[taps] = pixel;
          w[taps++] = wy[j] * wx[i];
        }
      }
      if (ok) {
        visible[cell] = 1;
        visibleCount++;
      }
    }
  }
  start[GRID_CELLS] = taps;
  return { idx: idx.subarray(0, taps), w: w.subarray(0, taps), start, visible, visibleCount };
}

/** Suspect picture f (bytes, or floats) mapped onto the reference grid (cells not visible 0, unless `every`). */
export function warpPicture(suspect: Buffer | Float32Array, f: number, warp: Warp, out: Float32Array, every = false): Float32Array {
  const base = f * SUSPECT_CELLS;
  for (let c = 0; c < GRID_CELLS; c++) {
    if (!warp.visible[c] && !every) {
      out[c] = 0;
      continue;
    }
    let s = 0;
    for (let t = warp.start[c]; t < warp.start[c + 1]; t++) s += warp.w[t] * suspect[base + warp.idx[t]];
    out[c] = s;
  }
  return out;
}

/** A picture with its mean over the visible cells removed, hidden cells 0. */
export function centre(v: Float32Array, visible: Uint8Array): Float32Array {
  let mean = 0;
  let n = 0;
  for (let c = 0; c < GRID_CELLS; c++)
    if (visible[c]) {
      mean += v[c];
      n++;
    }
  mean /= n || 1;
  const out = new Float32Array(GRID_CELLS);
  for (let c = 0; c < GRID_CELLS; c++) out[c] = visible[c] ? v[c] - mean : 0;
  return out;
}

export function referencePictures(reference: Buffer, visible: Uint8Array): Float32Array[] {
  const n = Math.floor(reference.length / GRID_CELLS);
  return Array.from({ length: n }, (_, f) => centre(new Float32Array(reference.subarray(f * GRID_CELLS, (f + 1) * GRID_CELLS)), visible));
}

export function norms(pictures: Float32Array[]): Float64Array {
  return Float64Array.from(pictures, (p) => {
    let s = 0;
    for (let c = 0; c < GRID_CELLS; c++) s += p[c] * p[c];
    return Math.sqrt(s);
  });
}

export const dotOf = (a: Float32Array, b: Float32Array) => {
  let s = 0;
  for (let c = 0; c < GRID_CELLS; c++) s += a[c] * b[c];
  return s;
};
