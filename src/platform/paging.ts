import { Type, type TSchema } from 'typebox';
import { asc, desc as descending, type AnyColumn, type SQL } from 'drizzle-orm';
import { validationError } from './errors.ts';

const PAGE_SIZE_MAX = 1000;

/** `limit`/`page`/`sort`/`desc`/`query`, spread into each list operation's querystring schema. */
export const PagingQuery = {
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: PAGE_SIZE_MAX, default: 100 })),
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1 })),
  sort: Type.Optional(Type.String({ maxLength: 128 })),
  desc: Type.Optional(Type.Boolean({ default: false })),
  query: Type.Optional(Type.String({ maxLength: 1024 })),
};

export interface PageRequest {
  limit?: number;
  page?: number;
  sort?: string;
  desc?: boolean;
  query?: string;
}

export function Paged<T extends TSchema>(item: T) {
  return Type.Object({
    items: Type.Array(item),
    pageCount: Type.Integer(),
    pageSize: Type.Integer(),
    totalCount: Type.Integer(),
    pageNumber: Type.Integer(),
    hasMore: Type.Boolean(),
  });
}

export interface Page<T> {
  items: T[];
  pageCount: number;
  pageSize: number;
  totalCount: number;
  pageNumber: number;
  hasMore: boolean;
}

export function pageWindow(req: PageRequest): { limit: number; offset: number; page: number } {
  const limit = req.limit ?? 100;
  const page = req.page ?? 1;
  return { limit, page, offset: (page - 1) * limit };
}

export function envelope<T>(items: T[], totalCount: number, req: PageRequest): Page<T> {
  const { limit, page } = pageWindow(req);
  const pageCount = Math.ceil(totalCount / limit);
  return { items, pageCount, pageSize: limit, totalCount, pageNumber: page, hasMore: page < pageCount };
}

/** Pages a plain array (for catalogues that are data, not rows). */
export function pageArray<T>(all: T[], req: PageRequest): Page<T> {
  const { limit, offset } = pageWindow(req);
  return envelope(all.slice(offset, offset + limit), all.length, req);
}

/**
 * Resolves `sort`/`desc` against a whitelist keyed by the spec's property names (`CreateDate`, `Metadata.Title`),
 * matched case-insensitively. The id column is always the last key so that pages are stable.
 */
export function orderBy(req: PageRequest, whitelist: Record<string, AnyColumn | SQL>, fallback: string, tiebreak: AnyColumn): SQL[] {
  const wanted = req.sort ?? fallback;
  const key = Object.keys(whitelist).find((k) => k.toLowerCase() === wanted.toLowerCase());
  if (!key) throw validationError('sort', `unknown sort property "${wanted}"; allowed: ${Object.keys(whitelist).join(', ')}`);
  const dir = req.desc ? descending : asc;
  return [dir(whitelist[key]), dir(tiebreak)];
}
