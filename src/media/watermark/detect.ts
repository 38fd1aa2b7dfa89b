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
}

/** A suspect matches an asset's pictures when their shapes correlate at least this well (1 = identical). */
export const MIN_CONTENT_MATCH = 0.9;
/** Pictures this close to a segment boundary are left out: after re-encoding either neighbour may show there. */
const BOUNDARY_MARGIN_S = 0.25;

const frameCount = (grid: Buffer) => Math.floor(grid.length / GRID_CELLS);

/** Each picture without its mean brightness, scaled to unit length: its shape, whatever the level or contrast. */
function shapes(grid: Buffer): Float32Array[] {
  return Array.from({ length: frameCount(grid) }, (_, f) => {
    const v = new Float32Array(GRID_CELLS);
    let mean = 0;
    for (let i = 0; i < GRID_CELLS; i++) mean += v[i] = grid[f * GRID_CELLS + i];
    mean /= GRID_CELLS;
    let norm = 0;
    for (let i = 0; i < GRID_CELLS; i++) norm += (v[i] -= mean) ** 2;
    norm = Math.sqrt(norm) || 1;
    for (let i = 0; i < GRID_CELLS; i++) v[i] /= norm;
    return v;
  });
}

export interface Alignment {
  /** Reference picture index = suspect picture index + offset. */
  offset: number;
  /** Mean correlation of the overlapping pictures. */
  match: number;
}

/**
 * Where the suspect lies on the asset's timeline (a capture may start late or lose a stretch at the start): the
 * offset at which the pictures' shapes correlate best, over an overlap of at least min(3 s, either length).
 */
export function align(suspect: Buffer, reference: Buffer): Alignment | undefined {
  const s = shapes(suspect);
  const r = shapes(reference);
  const minOverlap = Math.min(s.length, r.length, 3 * SAMPLE_FPS);
  if (minOverlap < 2) return undefined;
  let best: Alignment | undefined;
  for (let offset = minOverlap - s.length; offset <= r.length - minOverlap; offset++) {
    let sum = 0;
    let n = 0;
    for (let i = Math.max(0, -offset); i < s.length && i + offset < r.length; i++) {
      const a = s[i];
      const b = r[i + offset];
      let dot = 0;
      for (let c = 0; c < GRID_CELLS; c++) dot += a[c] * b[c];
      sum += dot;
      n++;
    }
    const match = sum / n;
    if (!best || match > best.match) best = { offset, match };
  }
  return best;
}

/**
 * One vote per segment of the asset: the mean, over the suspect's pictures inside that segment, of how much of the
 * A-minus-B difference they show (+1: exactly A, -1: exactly B, 0: unmarked); undefined for a segment the suspect
 * does not cover.
 */
export function segmentVotes(suspect: Buffer, ref: MarkReference, offset: number): (number | undefined)[] {
  const starts: number[] = [];
  let t = 0;
  for (const d of ref.segmentDurations) {
    starts.push(t);
    t += d;
  }
  const sig = ref.signature;
  let energy = 0;
  for (const v of sig) energy += v * v;
  const sums = new Array<number>(starts.length).fill(0);
  const counts = new Array<number>(starts.length).fill(0);
  const refFrames = frameCount(ref.reference);
  for (let i = 0; i < frameCount(suspect); i++) {
    const j = i + offset;
    if (j < 0 || j >= refFrames) continue;
    const time = j / SAMPLE_FPS;
    let k = starts.length - 1;
    while (k > 0 && starts[k] > time) k--;
    const end = starts[k] + ref.segmentDurations[k];
    if (time - starts[k] < BOUNDARY_MARGIN_S || end - time < BOUNDARY_MARGIN_S) continue;
    let mean = 0;
    const residual = new Float64Array(GRID_CELLS);
    for (let c = 0; c < GRID_CELLS; c++) mean += residual[c] = suspect[i * GRID_CELLS + c] - ref.reference[j * GRID_CELLS + c];
    mean /= GRID_CELLS;
    let dot = 0;
    for (let c = 0; c < GRID_CELLS; c++) dot += (residual[c] - mean) * sig[c];
    sums[k] += dot / energy;
    counts[k]++;
  }
  return sums.map((s, k) => (counts[k] ? s / counts[k] : undefined));
}
