import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runFfmpeg } from '../ffmpeg.ts';
import type { MarkReference } from './detect.ts';
import { GRID_CELLS, GRID_H, GRID_W } from './pattern.ts';
import { SAMPLE_FPS } from './prepare.ts';

/**
 * Detection for real captures: a suspect is read finer than the reference (SUSPECT_W x SUSPECT_H luma, SUSPECT_FPS
 * pictures a second), its geometry is fitted against the reference (crop, scale, letterbox, mirror, small rotation)
 * and it is mapped back onto the reference's grid, then placed in time piece by piece and picture by picture (drift,
 * dropped and repeated pictures, gaps at joins) before the votes are read.
 */
export const SUSPECT_W = 64;
export const SUSPECT_H = 36;
export const SUSPECT_FPS = 10;
const SUSPECT_CELLS = SUSPECT_W * SUSPECT_H;
/** Suspect pictures per reference picture. */
const RATE = SUSPECT_FPS / SAMPLE_FPS;
export const SUSPECT_FILTER = `fps=${SUSPECT_FPS},scale=${SUSPECT_W}:${SUSPECT_H}:flags=area,format=gray`;

/** A suspect matches an asset's picture when their shapes correlate at least this well (1 = identical). */
export const MIN_CONTENT_MATCH = 0.9;
/** Pictures this close to a segment boundary are left out: after re-encoding either neighbour may show there. */
const BOUNDARY_MARGIN_S = 0.25;
/** At least this many reference pictures (3 s) must line up for an asset to be recognised at all. */
const MIN_PLACED = 3 * SAMPLE_FPS;
/** ... and at least this share of what the suspect's duration could cover. */
const MIN_PLACED_SHARE = 0.3;

/** The suspect's first video track, SUSPECT_FPS pictures a second reduced to SUSPECT_W x SUSPECT_H luma bytes. */
export async function readSuspect(input: string, signal?: AbortSignal): Promise<Buffer> {
  const dir = await mkdtemp(join(tmpdir(), 'mediaplane-suspect-'));
  try {
    const out = join(dir, 'suspect.gray');
    await runFfmpeg(['-y', '-i', input, '-map', '0:v:0', '-vf', SUSPECT_FILTER, '-f', 'rawvideo', out], {
      signal,
      redact: { [input]: 'the file', [dir]: 'the work directory' },
    });
    return await readFile(out);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

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
function warpOf(g: Geometry): Warp {
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
function warpPicture(suspect: Buffer, f: number, warp: Warp, out: Float32Array): Float32Array {
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
function centre(v: Float32Array, visible: Uint8Array): Float32Array {
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

function referencePictures(reference: Buffer, visible: Uint8Array): Float32Array[] {
  const n = Math.floor(reference.length / GRID_CELLS);
  return Array.from({ length: n }, (_, f) => centre(new Float32Array(reference.subarray(f * GRID_CELLS, (f + 1) * GRID_CELLS)), visible));
}

function norms(pictures: Float32Array[]): Float64Array {
  return Float64Array.from(pictures, (p) => {
    let s = 0;
    for (let c = 0; c < GRID_CELLS; c++) s += p[c] * p[c];
    return Math.sqrt(s);
  });
}

const dotOf = (a: Float32Array, b: Float32Array) => {
  let s = 0;
  for (let c = 0; c < GRID_CELLS; c++) s += a[c] * b[c];
  return s;
};

const suspectCount = (suspect: Buffer) => Math.floor(suspect.length / SUSPECT_CELLS);

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
  // Refine the two best starts (a mirrored and an upright one can score alike on symmetric content).
  for (const start of scored.slice(0, 1)) {
    let g = start.g;
    let s = start.s;
    const steps: Record<'sx' | 'sy' | 'tx' | 'ty' | 'rotation' | 'keystone', number> = {
      sx: 0.04,
      sy: 0.04,
      tx: 0.02,
      ty: 0.02,
      rotation: 1,
      keystone: 0.04,
    };
    for (let round = 0; round < 3; round++) {
      let improved = true;
      for (let pass = 0; improved && pass < 3; pass++) {
        improved = false;
        for (const key of Object.keys(steps) as (keyof typeof steps)[]) {
          for (const dir of [1, -1]) {
            const next = { ...g, [key]: g[key] + dir * steps[key] };
            const ns = consider(next);
            if (ns > s + 1e-4) {
              [g, s] = [next, ns];
              improved = true;
              break;
            }
          }
        }
      }
      for (const key of Object.keys(steps) as (keyof typeof steps)[]) steps[key] /= 2;
    }
  }
  // Another geometry only when it is clearly better than the picture as it is.
  if (best.s < identityScore + 0.02) return { geometry: IDENTITY, score: identityScore, identityScore };
  return { geometry: best.g, score: best.s, identityScore };
}

/** A suspect picture read against a reference picture. */
export interface Pair {
  suspect: number;
  /** The picture blended with it (`alpha` of it): the reference's moment lies between the two. */
  next: number;
  alpha: number;
  reference: number;
  corr: number;
  sq: number;
}

export interface Placement {
  geometry: Geometry;
  /** The suspect pictures mapped onto the reference grid (Float32 per picture) and which cells are visible. */
  pictures: Float32Array[];
  visible: Uint8Array;
  /** One pair per reference picture read (its best suspect picture). */
  pairs: Pair[];
  /** Reference pictures the suspect could have covered (its duration at SAMPLE_FPS, at most the reference's). */
  coverable: number;
  /** Mean correlation of the pairs. */
  match: number;
}

/** A stretch of suspect pictures placed together (2 s). */
const PIECE = 2 * SUSPECT_FPS;
/** A piece keeps the previous piece's offset (or one next to it: drift) unless another one differs clearly less. */
const KEEP_MARGIN = 1.25;
/** A picture differing from its place this much more than the file's typical picture is a cut or a frozen picture. */
const OUTLIER = 16;

/**
 * Places the suspect on the reference's timeline: piece by piece (each 2 s piece searches the whole reference, keeping
 * the previous piece's offset, give or take a picture, unless another is clearly better), then picture by picture:
 * every reference picture in a piece's span takes the suspect picture nearby that differs least from it. A speed
 * difference, dropped or repeated pictures and gaps at joins only move pieces and pictures; a reference picture
 * that no suspect picture matches is not read.
 */
export function place(suspect: Buffer, reference: Buffer, geometry: Geometry): Placement {
  const warp = warpOf(geometry);
  const n = suspectCount(suspect);
  const tmp = new Float32Array(GRID_CELLS);
  const raw = Array.from({ length: n }, (_, f) => Float32Array.from(warpPicture(suspect, f, warp, tmp)));
  const s = raw.map((p) => centre(p, warp.visible));
  const r = referencePictures(reference, warp.visible);
  const sN = norms(s);
  const rN = norms(r);
  const R = r.length;
  const visible = warp.visible;
  const vc = warp.visibleCount || 1;
  const cmp = (i: number, j: number) => {
    const ab = dotOf(s[i], r[j]);
    return { corr: ab / (sN[i] * rN[j] || 1), sq: Math.max(0, (sN[i] * sN[i] + rN[j] * rN[j] - 2 * ab) / vc) };
  };
  /** s_i + alpha (s_i+1 - s_i), alpha fitted (least squares) against r_j. */
  const blend = (i: number, j: number) => {
    const a = s[i];
    const b = s[i + 1];
    let num = 0;
    let den = 0;
    for (let c = 0; c < GRID_CELLS; c++) {
      const d = b[c] - a[c];
      num += (r[j][c] - a[c]) * d;
      den += d * d;
    }
    if (!den) return undefined;
    const alpha = Math.min(1, Math.max(0, num / den));
    if (alpha <= 0 || alpha >= 1) return undefined;
    let ab = 0;
    let aa = 0;
    for (let c = 0; c < GRID_CELLS; c++) {
      const v = a[c] + alpha * (b[c] - a[c]);
      ab += v * r[j][c];
      aa += v * v;
    }
    return { alpha, corr: ab / (Math.sqrt(aa) * rN[j] || 1), sq: Math.max(0, (aa + rN[j] * rN[j] - 2 * ab) / vc) };
  };
  // Offsets in reference pictures: reference index = suspect index / RATE + offset.
  const pieceResidual = (from: number, to: number, offset: number) => {
    let sq = 0;
    let corr = 0;
    let count = 0;
    for (let i = from; i < to; i += RATE) {
      const j = Math.round(i / RATE + offset);
      if (j < 0 || j >= R) continue;
      const c = cmp(i, j);
      sq += c.sq;
      corr += c.corr;
      count++;
    }
    return count >= Math.max(1, Math.ceil((to - from) / RATE / 2)) ? { sq: sq / count, corr: corr / count } : undefined;
  };
  const best = new Map<number, Pair>();
  let previous: number | undefined;
  for (let from = 0; from < n; from += PIECE) {
    const to = Math.min(n, from + PIECE);
    const lo = -Math.floor(from / RATE);
    let found: { offset: number; sq: number; corr: number } | undefined;
    for (let offset = lo; offset < R; offset++) {
      const c = pieceResidual(from, to, offset);
      if (c && (!found || c.sq < found.sq)) found = { offset, ...c };
    }
    if (previous !== undefined && found) {
      for (const offset of [previous, previous - 1, previous + 1]) {
        const c = pieceResidual(from, to, offset);
        if (c && c.sq <= found.sq * KEEP_MARGIN && c.corr >= MIN_CONTENT_MATCH) {
          found = { offset, ...c };
          break;
        }
      }
    }
    if (!found || found.corr < MIN_CONTENT_MATCH) continue;
    previous = found.offset;
    const jFrom = Math.max(0, Math.ceil(from / RATE + found.offset));
    const jTo = Math.min(R, Math.floor((to - 1) / RATE + found.offset) + 1);
    for (let j = jFrom; j < jTo; j++) {
      const centreI = (j - found.offset) * RATE;
      let pick: Pair | undefined;
      for (let i = Math.max(0, Math.round(centreI - RATE)); i <= Math.min(n - 1, Math.round(centreI + RATE)); i++) {
        const c = cmp(i, j);
        if (c.corr >= MIN_CONTENT_MATCH && (!pick || c.sq < pick.sq)) pick = { suspect: i, next: i, alpha: 0, reference: j, ...c };
        // The reference's moment may fall between two suspect pictures (another frame rate, drift): their blend.
        if (i + 1 < n) {
          const b = blend(i, j);
          if (b && b.corr >= MIN_CONTENT_MATCH && (!pick || b.sq < pick.sq)) pick = { suspect: i, next: i + 1, reference: j, ...b };
        }
      }
      const had = best.get(j);
      if (pick && (!had || pick.sq < had.sq)) best.set(j, pick);
    }
  }
  let pairs = [...best.values()].sort((a, b) => a.reference - b.reference);
  const typical = [...pairs].sort((a, b) => a.sq - b.sq)[Math.floor(pairs.length / 2)]?.sq ?? 0;
  pairs = pairs.filter((p) => p.sq <= OUTLIER * typical + 1);
  const match = pairs.length ? pairs.reduce((t, p) => t + p.corr, 0) / pairs.length : 0;
  return { geometry, pictures: raw, visible, pairs, coverable: Math.min(R, Math.ceil(n / RATE)), match };
}

/** Whether a placement shows the asset at all: enough pictures lined up, and well. */
export const recognised = (p: Placement): boolean =>
  p.pairs.length >= MIN_PLACED && p.pairs.length >= MIN_PLACED_SHARE * p.coverable && p.match >= MIN_CONTENT_MATCH;

/**
 * How well a geometry maps the suspect pictures of placed pairs onto their reference pictures: the mean correlation
 * (a fixed set of pairs, so a finer measure than the key pictures' best match).
 */
function pairScore(blended: Buffer, reference: Buffer, pairs: Pair[], g: Geometry): number {
  const warp = warpOf(g);
  if (warp.visibleCount < GRID_CELLS * 0.4) return -1;
  const v = new Float32Array(GRID_CELLS);
  let total = 0;
  pairs.forEach((p, k) => {
    const s = centre(warpPicture(blended, k, warp, v), warp.visible);
    const r = centre(new Float32Array(reference.subarray(p.reference * GRID_CELLS, (p.reference + 1) * GRID_CELLS)), warp.visible);
    let ab = 0;
    let aa = 0;
    let bb = 0;
    for (let c = 0; c < GRID_CELLS; c++) {
      ab += s[c] * r[c];
      aa += s[c] * s[c];
      bb += r[c] * r[c];
    }
    total += ab / (Math.sqrt(aa * bb) || 1);
  });
  return pairs.length ? total / pairs.length : -1;
}

/** Coordinate descent of a geometry on the placed pairs (at most 60 of them, spread over the file). */
function refineGeometry(suspect: Buffer, reference: Buffer, placement: Placement): Geometry {
  const all = placement.pairs;
  const pairs = all.length > 40 ? Array.from({ length: 40 }, (_, k) => all[Math.floor((k * all.length) / 40)]) : all;
  // Each pair's suspect pictures blended once, at the suspect's resolution.
  const blended = Buffer.alloc(pairs.length * SUSPECT_CELLS);
  pairs.forEach((p, k) => {
    for (let c = 0; c < SUSPECT_CELLS; c++) {
      const a = suspect[p.suspect * SUSPECT_CELLS + c];
      blended[k * SUSPECT_CELLS + c] = Math.round(a + p.alpha * (suspect[p.next * SUSPECT_CELLS + c] - a));
    }
  });
  let g = placement.geometry;
  let s = pairScore(blended, reference, pairs, g);
  const steps: Record<'sx' | 'sy' | 'tx' | 'ty' | 'rotation' | 'keystone', number> = { sx: 0.02, sy: 0.02, tx: 0.01, ty: 0.01, rotation: 0.5, keystone: 0.02 };
  for (let round = 0; round < 3; round++) {
    let improved = true;
    for (let pass = 0; improved && pass < 4; pass++) {
      improved = false;
      for (const key of Object.keys(steps) as (keyof typeof steps)[]) {
        for (const dir of [1, -1]) {
          const next = { ...g, [key]: g[key] + dir * steps[key] };
          const ns = pairScore(blended, reference, pairs, next);
          if (ns > s + 1e-5) {
            [g, s] = [next, ns];
            improved = true;
            break;
          }
        }
      }
    }
    for (const key of Object.keys(steps) as (keyof typeof steps)[]) steps[key] /= 2;
  }
  return g;
}

const better = (a: Placement, b: Placement) => (a.pairs.length !== b.pairs.length ? a.pairs.length > b.pairs.length : a.match > b.match);

/**
 * Places a suspect against one reference: with the geometry as it is first; when that does not line up well, with a
 * geometry fitted on key pictures, then refined on the pictures it placed, and placed again.
 */
export function locate(suspect: Buffer, reference: Buffer): Placement & { fit?: GeometryFit } {
  const plain = place(suspect, reference, IDENTITY);
  if (recognised(plain) && plain.pairs.length >= 0.9 * plain.coverable && plain.match >= 0.97) return plain;
  const fit = fitGeometry(suspect, reference);
  let chosen = plain;
  if (fit.geometry !== IDENTITY) {
    const first = place(suspect, reference, fit.geometry);
    if (better(first, chosen)) chosen = first;
  }
  if (chosen.pairs.length >= MIN_PLACED) {
    const refined = place(suspect, reference, refineGeometry(suspect, reference, chosen));
    if (refined.pairs.length >= chosen.pairs.length * 0.95 && refined.match >= chosen.match - 0.002) chosen = refined;
  }
  return { ...chosen, fit };
}

/**
 * One vote per segment of the asset: the mean, over the reference pictures read inside that segment, of how much of
 * the A-minus-B difference their suspect picture shows (+1: exactly A, -1: exactly B, 0: unmarked), on the visible
 * cells only; undefined for a segment the suspect does not cover.
 */
export function placedVotes(p: Placement, ref: MarkReference): (number | undefined)[] {
  const starts: number[] = [];
  let t = 0;
  for (const d of ref.segmentDurations) {
    starts.push(t);
    t += d;
  }
  if (ref.segmentStarts) starts.splice(0, starts.length, ...ref.segmentStarts);
  const vis = p.visible;
  let sigMean = 0;
  let nv = 0;
  for (let c = 0; c < GRID_CELLS; c++)
    if (vis[c]) {
      sigMean += ref.signature[c];
      nv++;
    }
  sigMean /= nv || 1;
  const sig = Float64Array.from(ref.signature, (v, c) => (vis[c] ? v - sigMean : 0));
  let energy = 0;
  for (const v of sig) energy += v * v;
  const sums = new Array<number>(starts.length).fill(0);
  const counts = new Array<number>(starts.length).fill(0);
  const sp = new Float32Array(GRID_CELLS);
  for (const { suspect: i, next, alpha, reference: j } of p.pairs) {
    const time = j / SAMPLE_FPS;
    let k = starts.length - 1;
    while (k > 0 && starts[k] > time) k--;
    const end = starts[k] + ref.segmentDurations[k];
    if (time - starts[k] < BOUNDARY_MARGIN_S || end - time < BOUNDARY_MARGIN_S) continue;
    for (let c = 0; c < GRID_CELLS; c++) sp[c] = p.pictures[i][c] + alpha * (p.pictures[next][c] - p.pictures[i][c]);
    let ms = 0;
    let mr = 0;
    for (let c = 0; c < GRID_CELLS; c++)
      if (vis[c]) {
        ms += sp[c];
        mr += ref.reference[j * GRID_CELLS + c];
      }
    ms /= nv;
    mr /= nv;
    let sr = 0;
    let rr = 0;
    for (let c = 0; c < GRID_CELLS; c++) {
      if (!vis[c]) continue;
      const r = ref.reference[j * GRID_CELLS + c] - mr;
      sr += (sp[c] - ms) * r;
      rr += r * r;
    }
    const gain = rr ? sr / rr : 1;
    let dot = 0;
    for (let c = 0; c < GRID_CELLS; c++) if (vis[c]) dot += (sp[c] - ms - gain * (ref.reference[j * GRID_CELLS + c] - mr)) * sig[c];
    sums[k] += dot / (energy || 1);
    counts[k]++;
  }
  return sums.map((sum, k) => (counts[k] ? sum / counts[k] : undefined));
}
