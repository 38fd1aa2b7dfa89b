import { GRID_CELLS, GRID_H, GRID_W } from './pattern.ts';
import { SUSPECT_CELLS, SUSPECT_H, SUSPECT_W } from './suspect.ts';
import type { Geometry } from './geometry.ts';
import { warpOf, warpPicture, type Warp } from './geometrySampling.ts';

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
