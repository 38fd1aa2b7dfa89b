import { GRID_CELLS } from './pattern.ts';
import { SUSPECT_CELLS, SUSPECT_H, SUSPECT_W, suspectCount } from './suspect.ts';
import { IDENTITY, similarity, type Geometry, type Similarity } from './geometry.ts';
import { centre, dotOf, norms, referencePictures, warpOf, warpPicture } from './geometrySampling.ts';

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
