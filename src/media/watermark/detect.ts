import { GRID_CELLS } from './pattern.ts';
import { SAMPLE_FPS } from './prepare.ts';

/** A prepared asset as the detector needs it. */
export interface MarkReference {
  id: string;
  /** The unmarked pictures reduced to the grid (prepareVariants' `reference.gray`). */
  reference: Buffer;
  /** Variant A minus the unmarked picture, per grid cell (zero mean). */
  signature: readonly number[];
  segmentDurations: readonly number[];
  /** Each segment's start on the reference's timeline (seconds); default: one after the other from 0. */
  segmentStarts?: readonly number[];
}

/** Each segment's start on the reference's timeline: as given, or one after the other from 0. */
export function segmentStartsOf(ref: MarkReference): number[] {
  if (ref.segmentStarts) return [...ref.segmentStarts];
  const starts: number[] = [];
  let t = 0;
  for (const d of ref.segmentDurations) {
    starts.push(t);
    t += d;
  }
  return starts;
}

/** A suspect matches an asset's pictures when their shapes correlate at least this well (1 = identical). */
export const MIN_CONTENT_MATCH = 0.9;
/** Pictures this close to a segment boundary are left out: after re-encoding either neighbour may show there. */
export const BOUNDARY_MARGIN_S = 0.25;

const frameCount = (grid: Buffer) => Math.floor(grid.length / GRID_CELLS);

/** Each picture without its mean brightness (a level change is no content change). */
function centred(grid: Buffer): Float32Array[] {
  return Array.from({ length: frameCount(grid) }, (_, f) => {
    const v = new Float32Array(GRID_CELLS);
    let mean = 0;
    for (let i = 0; i < GRID_CELLS; i++) mean += v[i] = grid[f * GRID_CELLS + i];
    mean /= GRID_CELLS;
    for (let i = 0; i < GRID_CELLS; i++) v[i] -= mean;
    return v;
  });
}

/** Squared difference and correlation of two centred pictures. */
function compare(a: Float32Array, b: Float32Array): { sq: number; corr: number } {
  let sq = 0;
  let ab = 0;
  let aa = 0;
  let bb = 0;
  for (let c = 0; c < GRID_CELLS; c++) {
    const d = a[c] - b[c];
    sq += d * d;
    ab += a[c] * b[c];
    aa += a[c] * a[c];
    bb += b[c] * b[c];
  }
  return { sq: sq / GRID_CELLS, corr: ab / (Math.sqrt(aa * bb) || 1) };
}

export interface Alignment {
  /** Reference picture index = suspect picture index + offset. */
  offset: number;
  /** Mean correlation of the overlapping pictures (1 = the same pictures). */
  match: number;
  /** Mean squared difference per cell, in luma levels squared, at that offset. */
  residual: number;
}

/**
 * The offset at which the stretch [from, to) of the suspect differs least from the reference. The smallest
 * difference, not the best correlation, decides: a picture with a large static layout correlates with every moment
 * of its scene, but only the right moment leaves nothing but the mark and the encoder's noise.
 */
function bestOffset(s: Float32Array[], r: Float32Array[], from: number, to: number, candidates: Iterable<number>): Alignment | undefined {
  let best: Alignment | undefined;
  const need = Math.max(1, Math.ceil((to - from) / 2));
  for (const offset of candidates) {
    let sq = 0;
    let corr = 0;
    let n = 0;
    for (let i = Math.max(from, -offset); i < to && i + offset < r.length; i++) {
      const c = compare(s[i], r[i + offset]);
      sq += c.sq;
      corr += c.corr;
      n++;
    }
    if (n < need) continue;
    if (!best || sq / n < best.residual) best = { offset, match: corr / n, residual: sq / n };
  }
  return best;
}

const range = (from: number, to: number) => Array.from({ length: Math.max(0, to - from) }, (_, i) => from + i);

/**
 * Where the suspect lies on the asset's timeline (a capture may start late): the offset with the smallest
 * difference over at least half of the suspect. `match` then says whether it is this asset at all.
 */
export function align(suspect: Buffer, reference: Buffer): Alignment | undefined {
  const s = centred(suspect);
  const r = centred(reference);
  if (s.length < 2 || r.length < 2) return undefined;
  return bestOffset(s, r, 0, s.length, range(-Math.floor(s.length / 2), r.length - Math.ceil(s.length / 2) + 1));
}

/** Pictures aligned together: a capture may lose a stretch anywhere (a skipped segment), so each piece finds its place. */
const PIECE = 3 * SAMPLE_FPS;
/** A piece keeps the previous piece's offset unless another one differs clearly less. */
const KEEP_MARGIN = 1.25;
/** A picture differing from its place this much more than the file's typical picture is a cut or a frozen picture. */
const OUTLIER = 4;

/**
 * Where on the reference every suspect picture belongs (its reference index, or -1 when it matches nothing well
 * enough). The suspect is placed piece by piece, each piece searching the whole reference and keeping the previous
 * piece's offset unless another is clearly better, so that a cut in the middle of a capture shifts only what follows
 * it. A picture that does not match its place (a frozen picture over a gap, a cut inside the piece) is left out
 * rather than read against the wrong moment.
 */
export function placePictures(suspect: Buffer, reference: Buffer, whole: Alignment): Int32Array {
  const s = centred(suspect);
  const r = centred(reference);
  const place = new Int32Array(s.length).fill(-1);
  const squares: number[] = [];
  let previous = whole.offset;
  for (let from = 0; from < s.length; from += PIECE) {
    const to = Math.min(s.length, from + PIECE);
    const best = bestOffset(s, r, from, to, range(-from, r.length - from));
    const kept = bestOffset(s, r, from, to, [previous]);
    const chosen = kept && best && kept.residual <= best.residual * KEEP_MARGIN ? kept : best;
    if (!chosen || chosen.match < MIN_CONTENT_MATCH) continue;
    previous = chosen.offset;
    for (let i = from; i < to; i++) {
      const j = i + chosen.offset;
      if (j < 0 || j >= r.length) continue;
      const c = compare(s[i], r[j]);
      if (c.corr < MIN_CONTENT_MATCH) continue;
      place[i] = j;
      squares[i] = c.sq;
    }
  }
  const placed = squares.filter((x) => x !== undefined).sort((a, b) => a - b);
  const typical = placed[Math.floor(placed.length / 2)] ?? 0;
  for (let i = 0; i < s.length; i++) if (place[i] >= 0 && squares[i] > OUTLIER * typical + 1) place[i] = -1;
  return place;
}

/**
 * One vote per segment of the asset: the mean, over the suspect's pictures placed inside that segment, of how much of
 * the A-minus-B difference they show (+1: exactly A, -1: exactly B, 0: unmarked); undefined for a segment the suspect
 * does not cover.
 */
export function segmentVotes(suspect: Buffer, ref: MarkReference, place: Int32Array): (number | undefined)[] {
  const starts = segmentStartsOf(ref);
  const sig = ref.signature;
  let energy = 0;
  for (const v of sig) energy += v * v;
  const sums = new Array<number>(starts.length).fill(0);
  const counts = new Array<number>(starts.length).fill(0);
  for (let i = 0; i < place.length; i++) {
    const j = place[i];
    if (j < 0) continue;
    const time = j / SAMPLE_FPS;
    let k = starts.length - 1;
    while (k > 0 && starts[k] > time) k--;
    const end = starts[k] + ref.segmentDurations[k];
    if (time - starts[k] < BOUNDARY_MARGIN_S || end - time < BOUNDARY_MARGIN_S) continue;
    // The suspect as gain x reference + mark: the gain (least squares on the centred pictures) takes out a contrast
    // change, which would otherwise leave a copy of the content in the residual.
    let ms = 0;
    let mr = 0;
    for (let c = 0; c < GRID_CELLS; c++) {
      ms += suspect[i * GRID_CELLS + c];
      mr += ref.reference[j * GRID_CELLS + c];
    }
    ms /= GRID_CELLS;
    mr /= GRID_CELLS;
    let sr = 0;
    let rr = 0;
    for (let c = 0; c < GRID_CELLS; c++) {
      const r = ref.reference[j * GRID_CELLS + c] - mr;
      sr += (suspect[i * GRID_CELLS + c] - ms) * r;
      rr += r * r;
    }
    const gain = rr ? sr / rr : 1;
    let dot = 0;
    for (let c = 0; c < GRID_CELLS; c++) dot += (suspect[i * GRID_CELLS + c] - ms - gain * (ref.reference[j * GRID_CELLS + c] - mr)) * sig[c];
    sums[k] += dot / energy;
    counts[k]++;
  }
  return sums.map((sum, k) => (counts[k] ? sum / counts[k] : undefined));
}
