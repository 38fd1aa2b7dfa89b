import { createHash } from 'node:crypto';

/**
 * The mark itself: a smooth, low-frequency luma pattern of a few large blobs (an 8x4 field of +1/-1, cosine
 * interpolated), added to variant A and subtracted from variant B. Low frequency so that it survives downscaling
 * and the DCT of a low-bitrate encoder (a block's DC term carries it); a few levels so that the eye does not see it.
 */
const FIELD_W = 8;
const FIELD_H = 4;
/** The size every picture is reduced to before it is compared: the detector works on these cells. */
export const GRID_W = 32;
export const GRID_H = 18;
export const GRID_CELLS = GRID_W * GRID_H;

/** A deterministic +1/-1 field from a seed, half of each sign so that the pattern has no mean (no brightness shift). */
function signField(seed: string): Int8Array {
  const signs = new Int8Array(FIELD_W * FIELD_H).map((_, i) => (i < (FIELD_W * FIELD_H) / 2 ? 1 : -1));
  let state = createHash('sha256').update(seed).digest();
  let used = 0;
  const next = (): number => {
    if (used + 4 > state.length) {
      state = createHash('sha256').update(state).digest();
      used = 0;
    }
    const v = state.readUInt32BE(used);
    used += 4;
    return v / 0x1_0000_0000;
  };
  for (let i = signs.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [signs[i], signs[j]] = [signs[j], signs[i]];
  }
  return signs;
}

/** The pattern's value in [-1, 1] at every pixel of a width x height picture. */
export function patternValues(seed: string, width: number, height: number): Float32Array {
  const field = signField(seed);
  const at = (i: number, j: number) => field[Math.min(FIELD_H - 1, Math.max(0, j)) * FIELD_W + Math.min(FIELD_W - 1, Math.max(0, i))];
  const smooth = (t: number) => (1 - Math.cos(Math.PI * t)) / 2;
  const out = new Float32Array(width * height);
  for (let y = 0; y < height; y++) {
    const gy = ((y + 0.5) / height) * FIELD_H - 0.5;
    const y0 = Math.floor(gy);
    const ty = smooth(gy - y0);
    for (let x = 0; x < width; x++) {
      const gx = ((x + 0.5) / width) * FIELD_W - 0.5;
      const x0 = Math.floor(gx);
      const tx = smooth(gx - x0);
      const top = at(x0, y0) * (1 - tx) + at(x0 + 1, y0) * tx;
      const bottom = at(x0, y0 + 1) * (1 - tx) + at(x0 + 1, y0 + 1) * tx;
      out[y * width + x] = top * (1 - ty) + bottom * ty;
    }
  }
  return out;
}

/**
 * One yuv420p frame to blend onto the picture with ffmpeg's `grainmerge` (result = picture + frame - 128): luma
 * 128 + sign x strength x pattern, chroma 128 (unchanged).
 */
export function patternFrame(values: Float32Array, width: number, height: number, strength: number, sign: 1 | -1): Buffer {
  const frame = Buffer.alloc((width * height * 3) / 2, 128);
  for (let i = 0; i < width * height; i++) frame[i] = 128 + Math.round(sign * strength * values[i]);
  return frame;
}

/**
 * What the mark looks like once a picture is reduced to the detection grid (by area, as ffmpeg's `scale=flags=area`
 * does): the luma added to variant A per cell, without its mean. Computed from the frame actually blended, so
 * rounding is accounted for.
 */
export function gridSignature(frameA: Buffer, width: number, height: number): Float64Array {
  const sums = new Float64Array(GRID_CELLS);
  const counts = new Float64Array(GRID_CELLS);
  for (let y = 0; y < height; y++) {
    const gy = Math.min(GRID_H - 1, Math.floor((y * GRID_H) / height));
    for (let x = 0; x < width; x++) {
      const cell = gy * GRID_W + Math.min(GRID_W - 1, Math.floor((x * GRID_W) / width));
      sums[cell] += frameA[y * width + x] - 128;
      counts[cell]++;
    }
  }
  let mean = 0;
  for (let i = 0; i < GRID_CELLS; i++) mean += sums[i] /= counts[i] || 1;
  mean /= GRID_CELLS;
  return sums.map((v) => v - mean);
}
