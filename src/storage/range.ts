import type { FastifyReply } from 'fastify';
import { ApiError } from '../platform/errors.ts';

/**
 * Parses a single `Range: bytes=…` header against an object's size (RFC 9110 §14): `undefined` means serve the
 * whole object (no header, or one we do not support such as multiple ranges), `'unsatisfiable'` means 416.
 */
export function parseRange(header: string | undefined, size: number): { start: number; end: number } | 'unsatisfiable' | undefined {
  if (!header) return undefined;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === '' && m[2] === '')) return undefined;
  let start: number;
  let end: number;
  if (m[1] === '') {
    const suffix = Number(m[2]);
    if (suffix === 0) return 'unsatisfiable';
    start = Math.max(0, size - suffix);
    end = size - 1;
  } else {
    start = Number(m[1]);
    end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  }
  if (start >= size || start > end) return 'unsatisfiable';
  return { start, end };
}

/** The 416 for a range `parseRange` found unsatisfiable: sets the `Content-Range` naming the size, answers the error to throw. */
export function rangeNotSatisfiable(reply: FastifyReply, header: string | undefined, size: number): ApiError {
  reply.header('content-range', `bytes */${size}`);
  return new ApiError(416, 'range_not_satisfiable', `The range ${header} is outside the object's ${size} bytes`);
}
