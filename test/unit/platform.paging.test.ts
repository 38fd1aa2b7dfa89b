import { PgDialect, integer, pgTable, text } from 'drizzle-orm/pg-core';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/platform/errors.ts';
import { envelope, orderBy, pageArray, pageWindow } from '../../src/platform/paging.ts';

describe('pageWindow', () => {
  it('defaults to limit 100, page 1, offset 0', () => {
    expect(pageWindow({})).toEqual({ limit: 100, page: 1, offset: 0 });
  });
  it('offsets by (page - 1) * limit', () => {
    expect(pageWindow({ limit: 25, page: 3 })).toEqual({ limit: 25, page: 3, offset: 50 });
    expect(pageWindow({ limit: 1000, page: 1_000_000 }).offset).toBe(999_999_000);
  });
});

describe('envelope', () => {
  const cases: [number, number, number, { pageCount: number; hasMore: boolean }][] = [
    // totalCount, limit, page → pageCount, hasMore
    [0, 10, 1, { pageCount: 0, hasMore: false }],
    [1, 10, 1, { pageCount: 1, hasMore: false }],
    [10, 10, 1, { pageCount: 1, hasMore: false }],
    [11, 10, 1, { pageCount: 2, hasMore: true }],
    [11, 10, 2, { pageCount: 2, hasMore: false }],
    [11, 10, 3, { pageCount: 2, hasMore: false }],
    [1000, 100, 9, { pageCount: 10, hasMore: true }],
    [1000, 100, 10, { pageCount: 10, hasMore: false }],
  ];
  for (const [total, limit, page, expected] of cases) {
    it(`total ${total}, limit ${limit}, page ${page}`, () => {
      const e = envelope(['x'], total, { limit, page });
      expect(e).toEqual({ items: ['x'], totalCount: total, pageSize: limit, pageNumber: page, ...expected });
    });
  }
});

describe('pageArray', () => {
  const all = Array.from({ length: 7 }, (_, i) => i);
  it('slices the page and counts the whole array', () => {
    expect(pageArray(all, { limit: 3, page: 3 })).toEqual({ items: [6], totalCount: 7, pageCount: 3, pageSize: 3, pageNumber: 3, hasMore: false });
    expect(pageArray(all, { limit: 3, page: 2 }).items).toEqual([3, 4, 5]);
    expect(pageArray(all, { limit: 3, page: 9 }).items).toEqual([]);
    expect(pageArray([], {})).toEqual({ items: [], totalCount: 0, pageCount: 0, pageSize: 100, pageNumber: 1, hasMore: false });
  });
});

describe('orderBy', () => {
  const t = pgTable('t', { id: integer('id'), name: text('name'), created: text('created') });
  const whitelist = { Name: t.name, CreateDate: t.created, 'Metadata.Title': sql`${t.name} || 'x'` };
  const render = (parts: ReturnType<typeof orderBy>) => new PgDialect().sqlToQuery(sql.join(parts, sql`, `)).sql;

  it('uses the fallback, then the id as tiebreak, ascending by default', () => {
    expect(render(orderBy({}, whitelist, 'CreateDate', t.id))).toBe('"t"."created" asc, "t"."id" asc');
  });
  it('matches spec property names case-insensitively, desc applies to the tiebreak too', () => {
    expect(render(orderBy({ sort: 'name', desc: true }, whitelist, 'CreateDate', t.id))).toBe('"t"."name" desc, "t"."id" desc');
    expect(render(orderBy({ sort: 'metadata.title' }, whitelist, 'CreateDate', t.id))).toBe(`"t"."name" || 'x' asc, "t"."id" asc`);
  });
  it('refuses an unknown property with a 400 naming sort and listing the allowed ones', () => {
    try {
      orderBy({ sort: 'Color' }, whitelist, 'CreateDate', t.id);
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(ApiError);
      expect((e as ApiError).body()).toEqual({
        status: { code: 'validation_failed', status: 400, message: 'sort: unknown sort property "Color"; allowed: Name, CreateDate, Metadata.Title' },
        errors: [{ field: 'sort', message: 'unknown sort property "Color"; allowed: Name, CreateDate, Metadata.Title' }],
      });
    }
  });
});
