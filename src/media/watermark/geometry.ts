import { GRID_H, GRID_W } from './pattern.ts';
import { SUSPECT_H, SUSPECT_W } from './suspect.ts';

// How the reference picture lies in a suspect's (crop, scale, letterbox, mirror, small rotation, mild perspective):
// a first guess from the pictures alone (geometryFit.ts), made precise on pictures placed in time (geometryRefine.ts),
// then used to map each suspect picture back onto the reference's grid (geometrySampling.ts, locate.ts).

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
export function mapPoint(g: Geometry, u: number, v: number): [number, number] {
  const w = 1 + g.p * u + g.q * v;
  return [(0.5 + (g.a * u + g.b * v + g.tx) / w) * SUSPECT_W, (0.5 + (g.c * u + g.d * v + g.ty) / w) * SUSPECT_H];
}
