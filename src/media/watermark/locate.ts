import { BOUNDARY_MARGIN_S, MIN_CONTENT_MATCH, segmentStartsOf, type MarkReference } from './detect.ts';
import { IDENTITY, isIdentity, type Geometry } from './geometry.ts';
import { darkPixels, fitGeometry, type GeometryFit } from './geometryFit.ts';
import { refineGeometry } from './geometryRefine.ts';
import { centre, dotOf, norms, referencePictures, warpOf, warpPicture } from './geometrySampling.ts';
import { GRID_CELLS } from './pattern.ts';
import { SAMPLE_FPS } from './prepare.ts';
import { SUSPECT_CELLS, SUSPECT_FPS, suspectCount } from './suspect.ts';

/**
 * Detection for real captures: a suspect is read finer than the reference (SUSPECT_W x SUSPECT_H luma, SUSPECT_FPS
 * pictures a second), its geometry is fitted against the reference (crop, scale, letterbox, mirror, small rotation)
 * and it is mapped back onto the reference's grid, then placed in time piece by piece and picture by picture (drift,
 * dropped and repeated pictures, gaps at joins) before the votes are read. The suspect is read by suspect.ts, its
 * geometry fitted by geometry.ts; this file places it in time.
 */

/** Suspect pictures per reference picture. */
const RATE = SUSPECT_FPS / SAMPLE_FPS;

/** At least this many reference pictures (3 s) must line up for an asset to be recognised at all. */
const MIN_PLACED = 3 * SAMPLE_FPS;
/** ... and at least this share of what the suspect's duration could cover. */
const MIN_PLACED_SHARE = 0.3;

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
  /** For every suspect picture, the first of the run of repeated pictures it belongs to (itself when it moved). */
  frozenFrom: Int32Array;
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
export function place(suspect: Buffer, reference: Buffer, geometry: Geometry, { frozenFrom, dark }: SuspectFacts): Placement {
  // Under the identity no cell straddles a bar's edge: every cell is read, as it always was.
  const warp = warpOf(geometry, isIdentity(geometry) ? undefined : dark);
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
  /** Where between `from` and `to` the suspect leaves offset `a` for offset `b`: the split with the least residual. */
  const cutBetween = (from: number, to: number, a: number, b: number) => {
    const ja = (i: number) => Math.round(i / RATE + a);
    const jb = (i: number) => Math.round(i / RATE + b);
    // What reading picture i at `a` instead of `b` adds (nothing where either falls outside the reference).
    const extra = (i: number) => (Math.min(ja(i), jb(i)) < 0 || Math.max(ja(i), jb(i)) >= R ? 0 : cmp(i, ja(i)).sq - cmp(i, jb(i)).sq);
    let total = 0;
    let least = 0;
    let cut = from;
    for (let i = from; i < to; i++) {
      total += extra(i);
      if (total < least) [cut, least] = [i + 1, total];
    }
    return cut;
  };
  const best = new Map<number, Pair>();
  let previous: { from: number; offset: number } | undefined;
  for (let from = 0; from < n; from += PIECE) {
    const to = Math.min(n, from + PIECE);
    const lo = -Math.floor(from / RATE);
    let found: { offset: number; sq: number; corr: number } | undefined;
    for (let offset = lo; offset < R; offset++) {
      const c = pieceResidual(from, to, offset);
      if (c && (!found || c.sq < found.sq)) found = { offset, ...c };
    }
    if (previous !== undefined && found) {
      for (const offset of [previous.offset, previous.offset - 1, previous.offset + 1]) {
        const c = pieceResidual(from, to, offset);
        if (c && c.sq <= found.sq * KEEP_MARGIN && c.corr >= MIN_CONTENT_MATCH) {
          found = { offset, ...c };
          break;
        }
      }
    }
    if (!found || found.corr < MIN_CONTENT_MATCH) continue;
    // A jump (a lost stretch, a join): the pictures after the cut were read at the old offset by the piece before, or
    // before it at the new one by this piece. In slow content either still matches well enough to be kept, and would
    // read a neighbouring segment's mark as this one's: both sides of the cut are read at their own offset only.
    let cut = from;
    if (previous && Math.abs(found.offset - previous.offset) > 1) {
      cut = cutBetween(previous.from, to, previous.offset, found.offset);
      const old = previous.offset;
      for (const [j, p] of best) if (p.suspect >= cut && Math.abs(p.reference - (p.suspect / RATE + old)) <= 2) best.delete(j);
    }
    previous = { from, offset: found.offset };
    const jFrom = Math.max(0, Math.ceil(Math.max(from, cut) / RATE + found.offset));
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
  return { geometry, pictures: raw, frozenFrom, visible, pairs, coverable: Math.min(R, Math.ceil(n / RATE)), match };
}

/** What a suspect shows whatever geometry it is placed with: its runs of repeated pictures, its dark pixels (bars). */
export interface SuspectFacts {
  frozenFrom: Int32Array;
  dark: Uint8Array;
}

/** Mean absolute luma difference below which a picture repeats the one before it (moving content: 0.5 and up). */
const REPEATED = 0.25;
/**
 * How far a run of repeats may drift from its first picture. A re-encode at a low bitrate refines a repeated picture
 * a little at every picture (0.02-0.1 each, 0.3 over a second); slow motion adds up past this within a few pictures.
 */
const RUN_DRIFT = 1;

/**
 * Runs of repeated pictures: a capture over a gap (a lost segment, a join, a stalled player) shows the last picture
 * before it until the next one comes, and that picture carries the mark of the segment it came from. A picture
 * continues its predecessor's run when it differs little from it and not much from the run's first.
 */
function frozenRuns(suspect: Buffer): Int32Array {
  const n = suspectCount(suspect);
  const from = new Int32Array(n);
  const differ = (a: number, b: number) => {
    let d = 0;
    for (let c = 0; c < SUSPECT_CELLS; c++) d += Math.abs(suspect[a * SUSPECT_CELLS + c] - suspect[b * SUSPECT_CELLS + c]);
    return d / SUSPECT_CELLS;
  };
  for (let i = 1; i < n; i++) from[i] = differ(i, i - 1) < REPEATED && differ(i, from[i - 1]) < RUN_DRIFT ? from[i - 1] : i;
  return from;
}

/** Mean absolute luma difference between reference pictures (5 a second) below which the asset stands still. */
const STILL_REFERENCE = 2 * REPEATED;

const stillBetween = (reference: Buffer, a: number, b: number, visible: Uint8Array) => {
  let d = 0;
  let n = 0;
  for (let c = 0; c < GRID_CELLS; c++)
    if (visible[c]) {
      d += Math.abs(reference[a * GRID_CELLS + c] - reference[b * GRID_CELLS + c]);
      n++;
    }
  return d / (n || 1) < STILL_REFERENCE;
};

/** Whether a placement shows the asset at all: enough pictures lined up, and well. */
export const recognised = (p: Placement): boolean =>
  p.pairs.length >= MIN_PLACED && p.pairs.length >= MIN_PLACED_SHARE * p.coverable && p.match >= MIN_CONTENT_MATCH;

/** The geometry made precise on at most 60 of the placed pairs, spread over the file. */
function refined(suspect: Buffer, reference: Buffer, placement: Placement, dark: Uint8Array): Geometry {
  const all = placement.pairs;
  const pairs = all.length > REFINE_PAIRS ? Array.from({ length: REFINE_PAIRS }, (_, k) => all[Math.floor((k * all.length) / REFINE_PAIRS)]) : all;
  return refineGeometry(suspect, reference, pairs, placement.geometry, dark);
}
const REFINE_PAIRS = 60;

const better = (a: Placement, b: Placement) => (a.pairs.length !== b.pairs.length ? a.pairs.length > b.pairs.length : a.match > b.match);

/**
 * Places a suspect against one reference: with the geometry as it is first; when that does not line up well, with a
 * geometry guessed on key pictures, then made precise on the pictures it placed (twice), and placed again.
 */
export function locate(suspect: Buffer, reference: Buffer): Placement & { fit?: GeometryFit } {
  // Repeats and bars are the suspect's own, whatever geometry it is placed with.
  const facts: SuspectFacts = { frozenFrom: frozenRuns(suspect), dark: darkPixels(suspect) };
  const plain = place(suspect, reference, IDENTITY, facts);
  if (recognised(plain) && plain.pairs.length >= 0.9 * plain.coverable && plain.match >= 0.97) return plain;
  const fit = fitGeometry(suspect, reference, facts.dark);
  let chosen = plain;
  // The fitted geometry; or, when identity was kept but the picture as it is hardly lines up, the best other one.
  const guess = !isIdentity(fit.geometry) ? fit.geometry : plain.pairs.length < MIN_PLACED ? fit.other : undefined;
  if (guess) {
    const first = place(suspect, reference, guess, facts);
    if (better(first, chosen)) chosen = first;
  }
  // Refined on the pictures placed, placed again, and once more on those (more of them line up, and better).
  for (let round = 0; round < 2 && chosen.pairs.length >= MIN_PLACED; round++) {
    const next = place(suspect, reference, refined(suspect, reference, chosen, facts.dark), facts);
    // The picture as it is stays unless the refined geometry lines up clearly better (an unchanged copy reads as before).
    const margin = isIdentity(chosen.geometry) ? 0.002 : -0.002;
    if (next.pairs.length < chosen.pairs.length * 0.95 || next.match < chosen.match + margin) break;
    chosen = next;
  }
  return { ...chosen, fit };
}

/**
 * One vote per segment of the asset: the mean, over the reference pictures read inside that segment, of how much of
 * the A-minus-B difference their suspect picture shows (+1: exactly A, -1: exactly B, 0: unmarked), on the visible
 * cells only; undefined for a segment the suspect does not cover.
 */
export function placedVotes(p: Placement, ref: MarkReference): (number | undefined)[] {
  const starts = segmentStartsOf(ref);
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
  const segmentAt = (time: number) => {
    let k = starts.length - 1;
    while (k > 0 && starts[k] > time) k--;
    return k;
  };
  for (const { suspect: i, next, alpha, reference: j } of p.pairs) {
    const time = j / SAMPLE_FPS;
    const k = segmentAt(time);
    const end = starts[k] + ref.segmentDurations[k];
    if (time - starts[k] < BOUNDARY_MARGIN_S || end - time < BOUNDARY_MARGIN_S) continue;
    // A repeated picture votes only for the segment its run began in: past it, it is a frozen picture over a gap,
    // unless the asset itself stands still there (a title card, a slide).
    const runStart = time - (i - p.frozenFrom[i]) / SUSPECT_FPS;
    if (segmentAt(runStart) !== k && !stillBetween(ref.reference, Math.max(0, Math.round(runStart * SAMPLE_FPS)), j, vis)) continue;
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
