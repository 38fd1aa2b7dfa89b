import { PGlite } from '@electric-sql/pglite';
import { and, asc, sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/pglite';
import { integer, pgTable, text, timestamp } from 'drizzle-orm/pg-core';
import Fastify from 'fastify';
import addFormats from 'ajv-formats';
import { Type } from 'typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerErrorHandling } from '../../src/platform/errors.ts';
import {
  ArrayQuery,
  DateRangeQuery,
  TagAttributeQuery,
  arrayParam,
  dateRange,
  hasAllAttributes,
  hasAllTags,
  normalizeAttributeFilter,
  textSearch,
} from '../../src/platform/filters.ts';

describe('arrayParam', () => {
  it('accepts repeated parameters, comma-separated values and both mixed', () => {
    expect(arrayParam(undefined)).toEqual([]);
    expect(arrayParam('a')).toEqual(['a']);
    expect(arrayParam('a,b')).toEqual(['a', 'b']);
    expect(arrayParam(['a', 'b'])).toEqual(['a', 'b']);
    expect(arrayParam(['a,b', 'c'])).toEqual(['a', 'b', 'c']);
  });
  it('trims and drops empty entries', () => {
    expect(arrayParam(' a , ,b,')).toEqual(['a', 'b']);
    expect(arrayParam(['', ','])).toEqual([]);
  });
});

describe('normalizeAttributeFilter', () => {
  it('takes the spec form [key]=value and the short form key=value', () => {
    expect(normalizeAttributeFilter('[genre]=drama')).toBe('genre=drama');
    expect(normalizeAttributeFilter('genre=drama')).toBe('genre=drama');
    expect(normalizeAttributeFilter('[a b]=x=y')).toBe('a b=x=y');
    expect(normalizeAttributeFilter('[k]=')).toBe('k=');
  });
  it('refuses anything else with a 400 naming attributes', () => {
    for (const raw of ['genre', '[genre]', '[]=x', '=x', '[a]b]=c']) {
      expect(() => normalizeAttributeFilter(raw), raw).toThrowError(`attributes: "${raw}" is not of the form [key]=value`);
    }
  });
});

/** The SQL the helpers build, run on a real (in-memory) PostgreSQL. */
describe('filters on PostgreSQL (PGlite)', () => {
  const items = pgTable('items', {
    id: integer('id').primaryKey(),
    name: text('name').notNull(),
    tags: text('tags').array().notNull(),
    attributes: text('attributes').array().notNull(),
    created: timestamp('created', { withTimezone: true, mode: 'date' }).notNull(),
  });
  let client: PGlite;
  let db: ReturnType<typeof drizzle>;
  const ids = async (...where: Parameters<typeof and>) =>
    (
      await db
        .select({ id: items.id })
        .from(items)
        .where(and(...where))
        .orderBy(asc(items.id))
    ).map((r) => r.id);

  beforeAll(async () => {
    client = await PGlite.create();
    db = drizzle({ client });
    await client.exec(
      `create table items (id int primary key, name text not null, tags text[] not null, attributes text[] not null, created timestamptz not null)`,
    );
    await db.insert(items).values([
      { id: 1, name: 'Big Buck Bunny', tags: ['animation', 'short'], attributes: ['genre=comedy', 'year=2008'], created: new Date('2024-01-01T00:00:00Z') },
      { id: 2, name: 'Sintel 100% open', tags: ['animation'], attributes: ['genre=fantasy'], created: new Date('2024-02-01T00:00:00Z') },
      { id: 3, name: 'Tears_of_Steel', tags: ['live', 'short'], attributes: ['genre=sci-fi', 'year=2012'], created: new Date('2024-03-01T12:00:00Z') },
    ]);
  });
  afterAll(() => client.close());

  it('tags: items carrying every given tag', async () => {
    expect(await ids(hasAllTags(items.tags, 'short'))).toEqual([1, 3]);
    expect(await ids(hasAllTags(items.tags, ['animation', 'short']))).toEqual([1]);
    expect(await ids(hasAllTags(items.tags, 'animation,live'))).toEqual([]);
    expect(hasAllTags(items.tags, [])).toBeUndefined();
  });

  it('attributes: [key]=value filters, every one must match', async () => {
    expect(await ids(hasAllAttributes(items.attributes, '[genre]=comedy'))).toEqual([1]);
    expect(await ids(hasAllAttributes(items.attributes, ['[year]=2012', 'genre=sci-fi']))).toEqual([3]);
    expect(await ids(hasAllAttributes(items.attributes, ['[year]=2012', '[genre]=comedy']))).toEqual([]);
    expect(hasAllAttributes(items.attributes, undefined)).toBeUndefined();
  });

  it('date ranges are inclusive and honour offsets', async () => {
    expect(await ids(dateRange(items.created, '2024-02-01T00:00:00Z'))).toEqual([2, 3]);
    expect(await ids(dateRange(items.created, undefined, '2024-02-01T00:00:00Z'))).toEqual([1, 2]);
    // 2024-03-01T12:00Z is 14:00 at +02:00.
    expect(await ids(dateRange(items.created, '2024-03-01T14:00:00+02:00', '2024-03-01T14:00:00+02:00'))).toEqual([3]);
    expect(await ids(dateRange(items.created, '2024-03-01T14:00:01+02:00'))).toEqual([]);
    expect(dateRange(items.created)).toBeUndefined();
  });

  it('query: case-insensitive substring over the columns; %, _ and \\ match themselves', async () => {
    expect(await ids(textSearch('bunny', items.name))).toEqual([1]);
    expect(await ids(textSearch('100%', items.name))).toEqual([2]);
    expect(await ids(textSearch('%', items.name))).toEqual([2]);
    expect(await ids(textSearch('_', items.name))).toEqual([3]);
    expect(await ids(textSearch('s_o', items.name))).toEqual([3]);
    expect(await ids(textSearch('\\', items.name))).toEqual([]);
    expect(await ids(textSearch('LIVE', items.name, sql`array_to_string(${items.tags}, ' ')`))).toEqual([3]);
    expect(textSearch('', items.name)).toBeUndefined();
  });
});

/** The querystring schemas as Fastify validates them (the same Ajv options as the app). */
describe('filter query schemas', () => {
  const app = Fastify({ ajv: { customOptions: { coerceTypes: 'array', allErrors: true }, plugins: [addFormats as any] } });
  registerErrorHandling(app);
  app.get(
    '/items',
    { schema: { querystring: Type.Object({ ...DateRangeQuery, ...TagAttributeQuery, ids: Type.Optional(ArrayQuery) }) } },
    async (req) => req.query,
  );
  const get = async (qs: string) => {
    const res = await app.inject(`/items?${qs}`);
    return { status: res.statusCode, body: res.json() };
  };

  it('arrays take one value or repeated values', async () => {
    expect((await get('ids=a')).body.ids).toEqual(['a']);
    expect((await get('ids=a&ids=b,c')).body.ids).toEqual(['a', 'b,c']);
    expect((await get('tags=x&attributes=[k]=v')).body).toEqual({ tags: ['x'], attributes: ['[k]=v'] });
  });

  it('dates: ISO 8601 with Z or an offset; anything else is 400 naming the field', async () => {
    expect((await get('createDateStart=2024-01-01T00:00:00Z')).status).toBe(200);
    expect((await get('createDateEnd=2024-01-01T00:00:00.123%2B05:30')).status).toBe(200);
    for (const bad of ['2024-01-01', '2024-13-01T00:00:00Z', 'yesterday', '2024-01-01T00:00:00']) {
      const res = await get(`lastModificationDateEnd=${bad}`);
      expect(res.status, bad).toBe(400);
      expect(res.body.errors[0]).toEqual({ field: 'lastModificationDateEnd', message: 'must be an ISO 8601 date-time such as 2024-05-01T12:00:00Z' });
    }
  });
});
