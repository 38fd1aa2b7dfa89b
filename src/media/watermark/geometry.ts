import { GRID_CELLS, GRID_H, GRID_W } from './pattern.ts';
import { SUSPECT_CELLS, SUSPECT_H, SUSPECT_W, suspectCount } from './suspect.ts';

// How the reference picture lies in a suspect's (crop, scale, letterbox, mirror, small rotation): fitted once from the
// pictures alone, then used to map each suspect picture back onto the reference's grid (locate.ts).
/** How the reference picture lies in the suspect's: scale, shift, mirror and rotation (a similarity with two scales). */
export interface Geometry {
  /** Width and height of the reference picture in the suspect's, as fractions of the suspect's (1 = the same). */
  sx: number;
  sy: number;
  /** Shift of the reference picture's centre from the suspect's, in fractions of the suspect's size. */
  tx: number;
  ty: number;
  /** Rotation in degrees (positive: clockwise on screen). */
  rotation: number;
  mirrored: boolean;
  /** Perspective: how much wider the picture's bottom is than its top (0: none), and the same left/right. */
  keystone: number;
}

export const IDENTITY: Geometry = { sx: 1, sy: 1, tx: 0, ty: 0, rotation: 0, mirrored: false, keystone: 0 };
const ASPECT = GRID_W / GRID_H;

/** One reference cell as bilinear taps into the suspect picture; `visible` is false when any tap falls outside. */
interface Warp {
  idx: Int32Array;
  w: Float32Array;
  visible: Uint8Array;
  visibleCount: number;
}

const SUB = 2;
/** The sampling table of a geometry: each reference cell averaged from SUB x SUB points mapped into the suspect. */
export function warpOf(g: Geometry): Warp {
  const taps = SUB * SUB * 4;
  const idx = new Int32Array(GRID_CELLS * taps);
  const w = new Float32Array(GRID_CELLS * taps);
  const visible = new Uint8Array(GRID_CELLS);
  const cos = Math.cos((g.rotation * Math.PI) / 180);
  const sin = Math.sin((g.rotation * Math.PI) / 180);
  let visibleCount = 0;
  for (let cy = 0; cy < GRID_H; cy++) {
    for (let cx = 0; cx < GRID_W; cx++) {
      const cell = cy * GRID_W + cx;
      let ok = true;
      let t = cell * taps;
      for (let sy = 0; sy < SUB; sy++) {
        for (let sx = 0; sx < SUB; sx++) {
          const u = (cx + (sx + 0.5) / SUB) / GRID_W - 0.5;
          const v = (cy + (sy + 0.5) / SUB) / GRID_H - 0.5;
          const pu = (g.mirrored ? -u : u) * ASPECT;
          const ru = (cos * pu - sin * v) / ASPECT;
          const rv = sin * pu + cos * v;
          const k = 1 + g.keystone * rv;
          const x = (0.5 + g.tx + g.sx * ru * k) * SUSPECT_W - 0.5;
          const y = (0.5 + g.ty + g.sy * rv) * SUSPECT_H - 0.5;
          if (x < -0.5 || y < -0.5 || x > SUSPECT_W - 0.5 || y > SUSPECT_H - 0.5) ok = false;
          const xc = Math.min(SUSPECT_W - 1, Math.max(0, x));
          const yc = Math.min(SUSPECT_H - 1, Math.max(0, y));
          const x0 = Math.min(SUSPECT_W - 2, Math.floor(xc));
          const y0 = Math.min(SUSPECT_H - 2, Math.floor(yc));
          const fx = xc - x0;
          const fy = yc - y0;
          const q = 1 / (SUB * SUB);
          idx[t] = y0 * SUSPECT_W + x0;
          w[t++] = (1 - fx) * (1 - fy) * q;
          idx[t] = y0 * SUSPECT_W + x0 + 1;
          w[t++] = fx * (1 - fy) * q;
          idx[t] = (y0 + 1) * SUSPECT_W + x0;
          w[t++] = (1 - fx) * fy * q;
          idx[t] = (y0 + 1) * SUSPECT_W + x0 + 1;
          w[t++] = fx * fy * q;
        }
      }
      if (ok) {
        visible[cell] = 1;
        visibleCount++;
      }
    }
  }
  return { idx, w, visible, visibleCount };
}

/** Suspect picture f mapped onto the reference grid (masked cells 0). */
export function warpPicture(suspect: Buffer, f: number, warp: Warp, out: Float32Array): Float32Array {
  const base = f * SUSPECT_CELLS;
  const taps = SUB * SUB * 4;
  for (let c = 0; c < GRID_CELLS; c++) {
    if (!warp.visible[c]) {
      out[c] = 0;
      continue;
    }
    let s = 0;
    for (let t = c * taps; t < (c + 1) * taps; t++) s += warp.w[t] * suspect[base + warp.idx[t]];
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
function geometryScore(suspect: Buffer, keys: number[], reference: Buffer, g: Geometry, refStep: number): number {
  const warp = warpOf(g);
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
  const dark = 30;
  let x0 = 0;
  let x1 = SUSPECT_W;
  let y0 = 0;
  let y1 = SUSPECT_H;
  while (x0 < x1 - 1 && colMax[x0] < dark) x0++;
  while (x1 > x0 + 1 && colMax[x1 - 1] < dark) x1--;
  while (y0 < y1 - 1 && rowMax[y0] < dark) y0++;
  while (y1 > y0 + 1 && rowMax[y1 - 1] < dark) y1--;
  // A bar must be clearly one (more than a pixel of the reduced picture): an edge that is merely dark is content.
  if (x0 <= 1 && x1 >= SUSPECT_W - 1) [x0, x1] = [0, SUSPECT_W];
  if (y0 <= 1 && y1 >= SUSPECT_H - 1) [y0, y1] = [0, SUSPECT_H];
  return { x0: x0 / SUSPECT_W, x1: x1 / SUSPECT_W, y0: y0 / SUSPECT_H, y1: y1 / SUSPECT_H };
}

export interface GeometryFit {
  geometry: Geometry;
  /** The fitted geometry's score (mean best correlation of the key pictures); identity's for comparison. */
  score: number;
  identityScore: number;
}

/**
 * Fits the geometry of the suspect against one reference: identity first; then the picture placed in the content box
 * (bars removed), zoomed in as a crop does, mirrored or not, rotated by a few degrees, refined by coordinate descent.
 * Identity is kept unless another geometry correlates clearly better, so that an unchanged copy is read as before.
 */
export function fitGeometry(suspect: Buffer, reference: Buffer): GeometryFit {
  const keys = keyPictures(suspect, 8);
  const refCount = Math.floor(reference.length / GRID_CELLS);
  const step = refCount > 300 ? 2 : 1;
  const score = (g: Geometry) => geometryScore(suspect, keys, reference, g, step);
  const identityScore = score(IDENTITY);
  const box = contentBox(suspect);
  const bw = box.x1 - box.x0;
  const bh = box.y1 - box.y0;
  const base = { tx: (box.x0 + box.x1) / 2 - 0.5, ty: (box.y0 + box.y1) / 2 - 0.5, rotation: 0, keystone: 0 };
  let best: { g: Geometry; s: number } = { g: IDENTITY, s: identityScore };
  const consider = (g: Geometry) => {
    const s = score(g);
    if (s > best.s) best = { g, s };
    return s;
  };
  const starts: Geometry[] = [];
  for (const mirrored of [false, true])
    for (const zoom of [1, 1.12, 1.25]) for (const rotation of [0, -3, 3]) starts.push({ ...base, sx: bw * zoom, sy: bh * zoom, mirrored, rotation });
  const scored = starts.map((g) => ({ g, s: consider(g) })).sort((a, b) => b.s - a.s);
  // Refine the best start (`consider` keeps the best geometry seen on the way).
  const [first] = scored;
  climb(first.g, first.s, { sx: 0.04, sy: 0.04, tx: 0.02, ty: 0.02, rotation: 1, keystone: 0.04 }, consider, { passes: 3, epsilon: 1e-4 });
  // Another geometry only when it is clearly better than the picture as it is.
  if (best.s < identityScore + 0.02) return { geometry: IDENTITY, score: identityScore, identityScore };
  return { geometry: best.g, score: best.s, identityScore };
}

/** The step of each geometry parameter in a coordinate ascent (`climb`). */
export type GeometrySteps = Record<'sx' | 'sy' | 'tx' | 'ty' | 'rotation' | 'keystone', number>;

/**
 * Coordinate ascent of a geometry: each parameter stepped up or down while that raises the score by more than
 * `epsilon` (at most `passes` sweeps over the parameters), then every step halved, three rounds. Returns the best.
 */
export function climb(
  start: Geometry,
  startScore: number,
  steps: GeometrySteps,
  score: (g: Geometry) => number,
  { passes, epsilon }: { passes: number; epsilon: number },
): { geometry: Geometry; score: number } {
  let g = start;
  let s = startScore;
  const step = { ...steps };
  for (let round = 0; round < 3; round++) {
    let improved = true;
    for (let pass = 0; improved && pass < passes; pass++) {
      improved = false;
      for (const key of Object.keys(step) as (keyof GeometrySteps)[]) {
        for (const dir of [1, -1]) {
          const next = { ...g, [key]: g[key] + dir * step[key] };
          const ns = score(next);
          if (ns > s + epsilon) {
            [g, s] = [next, ns];
            improved = true;
            break;
          }
        }
      }
    }
    for (const key of Object.keys(step) as (keyof GeometrySteps)[]) step[key] /= 2;
  }
  return { geometry: g, score: s };
}
