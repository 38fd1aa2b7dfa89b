import { GRID_CELLS, GRID_H, GRID_W } from './pattern.ts';
import { SUSPECT_CELLS, SUSPECT_H, SUSPECT_W, suspectCount } from './suspect.ts';

// How the reference picture lies in a suspect's (crop, scale, letterbox, mirror, small rotation, mild perspective):
// a first guess from the pictures alone (fitGeometry), made precise on pictures placed in time (refineGeometry), then
// used to map each suspect picture back onto the reference's grid (locate.ts).

/**
 * How the reference picture lies in the suspect's: a projective map from the reference's coordinates (u, v: fractions
 * of its size from its centre, -0.5 to 0.5) to the suspect's (the same from the suspect's centre):
 * x = (a u + b v + tx) / w, y = (c u + d v + ty) / w, w = 1 + p u + q v. A mirror has a < 0; a rotation, b and c; a
 * perspective, p and q.
 */
export interface Geometry {
  a: number;
  b: number;
  c: number;
  d: number;
  tx: number;
  ty: number;
  p: number;
  q: number;
}

export const IDENTITY: Geometry = { a: 1, b: 0, c: 0, d: 1, tx: 0, ty: 0, p: 0, q: 0 };
export const isIdentity = (g: Geometry): boolean => (Object.keys(IDENTITY) as (keyof Geometry)[]).every((k) => g[k] === IDENTITY[k]);
const ASPECT = GRID_W / GRID_H;

/** A scale, shift, mirror and rotation (in degrees, clockwise on screen: a square picture stays square) as a Geometry. */
export interface Similarity {
  sx: number;
  sy: number;
  tx: number;
  ty: number;
  rotation: number;
  mirrored: boolean;
}

export function similarity(s: Similarity): Geometry {
  const cos = Math.cos((s.rotation * Math.PI) / 180);
  const sin = Math.sin((s.rotation * Math.PI) / 180);
  const m = s.mirrored ? -1 : 1;
  return { a: s.sx * cos * m, b: (-s.sx * sin) / ASPECT, c: s.sy * sin * ASPECT * m, d: s.sy * cos, tx: s.tx, ty: s.ty, p: 0, q: 0 };
}

/** Where reference point (u, v) falls in the suspect, in its pixels (0 to SUSPECT_W, 0 to SUSPECT_H). */
function mapPoint(g: Geometry, u: number, v: number): [number, number] {
  const w = 1 + g.p * u + g.q * v;
  return [(0.5 + (g.a * u + g.b * v + g.tx) / w) * SUSPECT_W, (0.5 + (g.c * u + g.d * v + g.ty) / w) * SUSPECT_H];
}

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

/** Below this luma all through the file, a suspect pixel is a bar or a window's frame, not picture. */
const DARK = 30;

/**
 * The suspect pixels that stay dark through the whole file (letterbox and pillarbox bars, a recorded window's frame,
 * the corners a rotation leaves), and their neighbours: a pixel on a bar's edge is part bar, and a cell that reads it
 * is darker than its picture, the same in every picture, which reads as a mark.
 */
export function darkPixels(suspect: Buffer): Uint8Array {
  const n = suspectCount(suspect);
  const max = new Uint8Array(SUSPECT_CELLS);
  for (let f = 0; f < n; f++) {
    const base = f * SUSPECT_CELLS;
    for (let c = 0; c < SUSPECT_CELLS; c++) if (suspect[base + c] > max[c]) max[c] = suspect[base + c];
  }
  const out = new Uint8Array(SUSPECT_CELLS);
  for (let y = 0; y < SUSPECT_H; y++)
    for (let x = 0; x < SUSPECT_W; x++) {
      if (max[y * SUSPECT_W + x] >= DARK) continue;
      for (let yy = Math.max(0, y - 1); yy <= Math.min(SUSPECT_H - 1, y + 1); yy++)
        for (let xx = Math.max(0, x - 1); xx <= Math.min(SUSPECT_W - 1, x + 1); xx++) out[yy * SUSPECT_W + xx] = 1;
    }
  return out;
}

/**
 * Pictures of the suspect worth fitting the geometry on: spread over the file, each the most detailed of its stretch
 * (a flat picture matches every geometry alike).
 */
function keyPictures(suspect: Buffer, count: number): number[] {
  const n = suspectCount(suspect);
  const keys: number[] = [];
  for (let k = 0; k < count; k++) {
    const from = Math.floor((k * n) / count);
    const to = Math.max(from + 1, Math.floor(((k + 1) * n) / count));
    let best = -1;
    let bestVar = 0;
    for (let f = from; f < to && f < n; f += 2) {
      let m = 0;
      let m2 = 0;
      for (let c = 0; c < SUSPECT_CELLS; c += 3) {
        const x = suspect[f * SUSPECT_CELLS + c];
        m += x;
        m2 += x * x;
      }
      const cnt = Math.ceil(SUSPECT_CELLS / 3);
      const variance = m2 / cnt - (m / cnt) ** 2;
      if (variance > bestVar) [best, bestVar] = [f, variance];
    }
    if (best >= 0 && bestVar > 4) keys.push(best);
  }
  return keys;
}

/**
 * How well a geometry maps the key pictures onto some reference picture: the mean, over the key pictures, of their
 * best correlation with any reference picture (on the cells the geometry keeps visible).
 */
function geometryScore(suspect: Buffer, keys: number[], reference: Buffer, g: Geometry, refStep: number, dark: Uint8Array): number {
  const warp = warpOf(g, dark);
  if (warp.visibleCount < GRID_CELLS * 0.4) return -1;
  const refs = referencePictures(reference, warp.visible);
  const refNorms = norms(refs);
  const tmp = new Float32Array(GRID_CELLS);
  let total = 0;
  for (const f of keys) {
    const s = centre(warpPicture(suspect, f, warp, tmp), warp.visible);
    let sn = 0;
    for (let c = 0; c < GRID_CELLS; c++) sn += s[c] * s[c];
    sn = Math.sqrt(sn) || 1;
    let best = -1;
    for (let j = 0; j < refs.length; j += refStep) {
      const corr = dotOf(s, refs[j]) / (sn * (refNorms[j] || 1));
      if (corr > best) best = corr;
    }
    total += best;
  }
  return keys.length ? total / keys.length : -1;
}

/**
 * Where the picture lies in the suspect: rows and columns that stay black through the file (letterbox, pillarbox, a
 * player window recorded with its frame) are outside it.
 */
function contentBox(suspect: Buffer): { x0: number; x1: number; y0: number; y1: number } {
  const n = suspectCount(suspect);
  const colMax = new Uint8Array(SUSPECT_W);
  const rowMax = new Uint8Array(SUSPECT_H);
  for (let f = 0; f < n; f += 3) {
    for (let y = 0; y < SUSPECT_H; y++) {
      for (let x = 0; x < SUSPECT_W; x++) {
        const v = suspect[f * SUSPECT_CELLS + y * SUSPECT_W + x];
        if (v > colMax[x]) colMax[x] = v;
        if (v > rowMax[y]) rowMax[y] = v;
      }
    }
  }
  let x0 = 0;
  let x1 = SUSPECT_W;
  let y0 = 0;
  let y1 = SUSPECT_H;
  while (x0 < x1 - 1 && colMax[x0] < DARK) x0++;
  while (x1 > x0 + 1 && colMax[x1 - 1] < DARK) x1--;
  while (y0 < y1 - 1 && rowMax[y0] < DARK) y0++;
  while (y1 > y0 + 1 && rowMax[y1 - 1] < DARK) y1--;
  // A bar must be clearly one (more than a pixel of the reduced picture): an edge that is merely dark is content.
  if (x0 <= 1 && x1 >= SUSPECT_W - 1) [x0, x1] = [0, SUSPECT_W];
  if (y0 <= 1 && y1 >= SUSPECT_H - 1) [y0, y1] = [0, SUSPECT_H];
  // The first pixel past a bar is part bar, part picture: the edge lies inside it, half way on average.
  const edge = (t: number, bar: boolean, inward: number) => (bar ? t + inward * 0.5 : t);
  return {
    x0: edge(x0, x0 > 0, 1) / SUSPECT_W,
    x1: edge(x1, x1 < SUSPECT_W, -1) / SUSPECT_W,
    y0: edge(y0, y0 > 0, 1) / SUSPECT_H,
    y1: edge(y1, y1 < SUSPECT_H, -1) / SUSPECT_H,
  };
}

export interface GeometryFit {
  geometry: Geometry;
  /** The fitted geometry's score (mean best correlation of the key pictures); identity's for comparison. */
  score: number;
  identityScore: number;
  /** The best geometry other than identity, whether or not it was chosen, and its score. */
  other: Geometry;
  otherScore: number;
}

/**
 * A first guess of the suspect's geometry against one reference: identity first; then the picture placed in the
 * content box (bars removed), zoomed in as a crop does, mirrored or not, rotated by a few degrees, refined by
 * coordinate ascent on key pictures (each's best match with any reference picture: no placement in time needed).
 * Identity is kept unless another geometry correlates clearly better, so that an unchanged copy is read as before.
 */
export function fitGeometry(suspect: Buffer, reference: Buffer, dark: Uint8Array): GeometryFit {
  const keys = keyPictures(suspect, 8);
  const refCount = Math.floor(reference.length / GRID_CELLS);
  const step = refCount > 300 ? 2 : 1;
  const score = (s: Similarity) => geometryScore(suspect, keys, reference, similarity(s), step, dark);
  const identityScore = geometryScore(suspect, keys, reference, IDENTITY, step, dark);
  const box = contentBox(suspect);
  const bw = box.x1 - box.x0;
  const bh = box.y1 - box.y0;
  const base = { tx: (box.x0 + box.x1) / 2 - 0.5, ty: (box.y0 + box.y1) / 2 - 0.5, rotation: 0 };
  let best: { g: Similarity; s: number } | undefined;
  const consider = (g: Similarity) => {
    const s = score(g);
    if (!best || s > best.s) best = { g, s };
    return s;
  };
  const starts: Similarity[] = [];
  for (const mirrored of [false, true])
    for (const zoom of [1, 1.12, 1.25]) for (const rotation of [0, -3, 3]) starts.push({ ...base, sx: bw * zoom, sy: bh * zoom, mirrored, rotation });
  const scored = starts.map((g) => ({ g, s: consider(g) })).sort((a, b) => b.s - a.s);
  // Refine the best start (`consider` keeps the best geometry seen on the way).
  const [first] = scored;
  climb(first.g, first.s, { sx: 0.04, sy: 0.04, tx: 0.02, ty: 0.02, rotation: 1 }, consider, { passes: 3, epsilon: 1e-4 });
  const other = { geometry: similarity(best!.g), score: best!.s };
  // Another geometry only when it is clearly better than the picture as it is: 0.02 more correlation, or a third less
  // of what does not correlate (smooth content correlates well under any nearby geometry).
  const clearly = other.score >= identityScore + 0.02 || 1 - other.score < (2 / 3) * (1 - identityScore);
  const chosen = clearly ? other : { geometry: IDENTITY, score: identityScore };
  return { ...chosen, identityScore, other: other.geometry, otherScore: other.score };
}

/**
 * Coordinate ascent: each parameter stepped up or down while that raises the score by more than `epsilon` (at most
 * `passes` sweeps over the parameters), then every step halved, three rounds. Returns the best.
 */
export function climb<T extends Record<keyof S, number>, S extends Record<string, number>>(
  start: T,
  startScore: number,
  steps: S,
  score: (g: T) => number,
  { passes, epsilon }: { passes: number; epsilon: number },
): { geometry: T; score: number } {
  let g = start;
  let s = startScore;
  const step: Record<string, number> = { ...steps };
  const keys = Object.keys(step) as (keyof S & keyof T)[];
  for (let round = 0; round < 3; round++) {
    let improved = true;
    for (let pass = 0; improved && pass < passes; pass++) {
      improved = false;
      for (const key of keys) {
        for (const dir of [1, -1]) {
          const next = { ...g, [key]: g[key] + dir * step[key as string] };
          const ns = score(next);
          if (ns > s + epsilon) {
            [g, s] = [next, ns];
            improved = true;
            break;
          }
        }
      }
    }
    for (const key of keys) step[key as string] /= 2;
  }
  return { geometry: g, score: s };
}

/** A suspect picture (or the blend of two: `alpha` of `next`) placed against a reference picture (locate.ts). */
export interface PlacedPicture {
  suspect: number;
  next: number;
  alpha: number;
  reference: number;
}

const PARAMETERS = ['a', 'b', 'c', 'd', 'tx', 'ty', 'p', 'q'] as const;
/** The footprint shift (suspect pixels) of the central differences that give a warped picture's derivative. */
const SHIFT = 0.25;

/**
 * Makes a geometry precise on pictures placed in time (each against its own reference picture): Gauss-Newton
 * (Levenberg-Marquardt) on the eight parameters of the projective map, minimising what is left of every warped
 * picture once its reference (times a gain, plus a level) is taken out. Textured cells decide, flat ones weigh
 * little, as they should: a flat cell looks the same under every nearby geometry. Stops when a step moves no cell by
 * more than a hundredth of a pixel.
 */
export function refineGeometry(suspect: Buffer, reference: Buffer, placed: PlacedPicture[], start: Geometry, dark: Uint8Array, iterations = 12): Geometry {
  const n = placed.length;
  const pictures = new Float32Array(n * SUSPECT_CELLS);
  const refs = new Float32Array(n * GRID_CELLS);
  for (let k = 0; k < n; k++) {
    const p = placed[k];
    for (let c = 0; c < SUSPECT_CELLS; c++) {
      const a = suspect[p.suspect * SUSPECT_CELLS + c];
      pictures[k * SUSPECT_CELLS + c] = a + p.alpha * (suspect[p.next * SUSPECT_CELLS + c] - a);
    }
    for (let c = 0; c < GRID_CELLS; c++) refs[k * GRID_CELLS + c] = reference[p.reference * GRID_CELLS + c];
  }
  const warped = new Float32Array(GRID_CELLS);
  const plus = new Float32Array(GRID_CELLS);
  const minus = new Float32Array(GRID_CELLS);
  const e = new Float64Array(GRID_CELLS);
  const rc = new Float64Array(GRID_CELLS);
  const gx = new Float64Array(GRID_CELLS);
  const gy = new Float64Array(GRID_CELLS);
  const jac = new Float64Array(8 * GRID_CELLS);
  const dx = new Float64Array(8 * GRID_CELLS);
  const dy = new Float64Array(8 * GRID_CELLS);
  /**
   * Pair k's warped picture minus level + gain x reference over `cells` (least squares): into `e` (indexed like
   * `cells`), the reference centred into `rc`; returns the sum of squares and the reference's energy.
   */
  const residual = (k: number, warp: Warp, cells: Int32Array) => {
    warpPicture(pictures, k, warp, warped, true);
    const m = cells.length;
    let ms = 0;
    let mr = 0;
    for (let i = 0; i < m; i++) {
      ms += warped[cells[i]];
      mr += refs[k * GRID_CELLS + cells[i]];
    }
    ms /= m;
    mr /= m;
    let sr = 0;
    let rr = 0;
    for (let i = 0; i < m; i++) {
      rc[i] = refs[k * GRID_CELLS + cells[i]] - mr;
      sr += (warped[cells[i]] - ms) * rc[i];
      rr += rc[i] * rc[i];
    }
    const gain = rr ? sr / rr : 1;
    let sq = 0;
    for (let i = 0; i < m; i++) {
      e[i] = warped[cells[i]] - ms - gain * rc[i];
      sq += e[i] * e[i];
    }
    return { sq, rr };
  };
  /** Mean squared residual of geometry g over those of `cells` it keeps visible (most of them, or it is refused). */
  const cost = (g: Geometry, cells: Int32Array) => {
    const warp = warpOf(g, dark);
    const kept = cells.filter((c) => warp.visible[c]);
    if (kept.length < cells.length * 0.9) return Infinity;
    let sq = 0;
    for (let k = 0; k < n; k++) sq += residual(k, warp, kept).sq;
    return sq / (kept.length * n);
  };
  let g = start;
  let lambda = 1e-3;
  for (let it = 0; it < iterations; it++) {
    const warp = warpOf(g, dark);
    // The cells read: those that stay visible when the geometry moves them by a pixel, so that a step keeps them all.
    const margins = [-1, 1].flatMap((x) => [-1, 1].map((y) => warpOf(g, dark, [x, y]).visible));
    const cells = Int32Array.from(warp.visible.keys()).filter((c) => warp.visible[c] && margins.every((v) => v[c]));
    const m = cells.length;
    if (m < GRID_CELLS * 0.4) break;
    const shifted = [
      [SHIFT, 0],
      [-SHIFT, 0],
      [0, SHIFT],
      [0, -SHIFT],
    ].map((s) => warpOf(g, undefined, s as [number, number]));
    // How every cell's centre (suspect pixels) moves with each parameter (a, b, c, d, tx, ty, p, q).
    dx.fill(0);
    dy.fill(0);
    for (let i = 0; i < m; i++) {
      const u = ((cells[i] % GRID_W) + 0.5) / GRID_W - 0.5;
      const v = (Math.floor(cells[i] / GRID_W) + 0.5) / GRID_H - 0.5;
      const w = 1 + g.p * u + g.q * v;
      const x = (g.a * u + g.b * v + g.tx) / w;
      const y = (g.c * u + g.d * v + g.ty) / w;
      const o = i * 8;
      dx[o] = (u / w) * SUSPECT_W;
      dx[o + 1] = (v / w) * SUSPECT_W;
      dx[o + 4] = SUSPECT_W / w;
      dx[o + 6] = ((-x * u) / w) * SUSPECT_W;
      dx[o + 7] = ((-x * v) / w) * SUSPECT_W;
      dy[o + 2] = (u / w) * SUSPECT_H;
      dy[o + 3] = (v / w) * SUSPECT_H;
      dy[o + 5] = SUSPECT_H / w;
      dy[o + 6] = ((-y * u) / w) * SUSPECT_H;
      dy[o + 7] = ((-y * v) / w) * SUSPECT_H;
    }
    const jtj = new Float64Array(64);
    const jte = new Float64Array(8);
    let sq = 0;
    for (let k = 0; k < n; k++) {
      const { sq: s2, rr } = residual(k, warp, cells);
      sq += s2;
      warpPicture(pictures, k, shifted[0], plus, true);
      warpPicture(pictures, k, shifted[1], minus, true);
      for (let i = 0; i < m; i++) gx[i] = (plus[cells[i]] - minus[cells[i]]) / (2 * SHIFT);
      warpPicture(pictures, k, shifted[2], plus, true);
      warpPicture(pictures, k, shifted[3], minus, true);
      for (let i = 0; i < m; i++) gy[i] = (plus[cells[i]] - minus[cells[i]]) / (2 * SHIFT);
      for (let j = 0; j < 8; j++) {
        // The residual's derivative: the picture's, less what the level and the gain take up of it.
        const o = j * GRID_CELLS;
        let mean = 0;
        let along = 0;
        for (let i = 0; i < m; i++) {
          const d = gx[i] * dx[i * 8 + j] + gy[i] * dy[i * 8 + j];
          jac[o + i] = d;
          mean += d;
          along += d * rc[i];
        }
        mean /= m;
        along = rr ? along / rr : 0;
        for (let i = 0; i < m; i++) jac[o + i] -= mean + along * rc[i];
      }
      for (let a = 0; a < 8; a++) {
        for (let b = a; b < 8; b++) {
          let t = 0;
          for (let i = 0; i < m; i++) t += jac[a * GRID_CELLS + i] * jac[b * GRID_CELLS + i];
          jtj[a * 8 + b] += t;
        }
        let t = 0;
        for (let i = 0; i < m; i++) t += jac[a * GRID_CELLS + i] * e[i];
        jte[a] += t;
      }
    }
    const current = sq / (m * n);
    let moved = Infinity;
    let accepted = false;
    for (let attempt = 0; attempt < 6 && !accepted; attempt++) {
      const system = Array.from({ length: 8 }, (_, a) =>
        Array.from({ length: 8 }, (_, b) => jtj[Math.min(a, b) * 8 + Math.max(a, b)] * (a === b ? 1 + lambda : 1)),
      );
      const step = solve(
        system,
        Array.from(jte, (t) => -t),
      );
      const next = { ...g };
      PARAMETERS.forEach((key, j) => (next[key] += step[j]));
      const cn = cost(next, cells);
      if (cn < current) {
        moved = 0;
        for (let i = 0; i < m; i++) {
          let mx = 0;
          let my = 0;
          for (let j = 0; j < 8; j++) {
            mx += dx[i * 8 + j] * step[j];
            my += dy[i * 8 + j] * step[j];
          }
          moved = Math.max(moved, Math.hypot(mx, my));
        }
        g = next;
        lambda = Math.max(1e-6, lambda / 3);
        accepted = true;
      } else lambda *= 10;
    }
    if (!accepted || moved < 0.01) break;
  }
  return g;
}

/** Solves the linear system m x = b (Gaussian elimination with partial pivoting); a singular direction gets 0. */
function solve(m: number[][], b: number[]): number[] {
  const size = b.length;
  const rows = m.map((row, i) => [...row, b[i]]);
  for (let col = 0; col < size; col++) {
    let pivot = col;
    for (let r = col + 1; r < size; r++) if (Math.abs(rows[r][col]) > Math.abs(rows[pivot][col])) pivot = r;
    [rows[col], rows[pivot]] = [rows[pivot], rows[col]];
    if (!rows[col][col]) continue;
    for (let r = 0; r < size; r++) {
      if (r === col) continue;
      const f = rows[r][col] / rows[col][col];
      for (let k = col; k <= size; k++) rows[r][k] -= f * rows[col][k];
    }
  }
  return rows.map((row, i) => (row[i] ? row[size] / row[i] : 0));
}
