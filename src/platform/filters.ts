import { Type } from 'typebox';
import { and, gte, ilike, lte, or, sql, type AnyColumn, type SQL } from 'drizzle-orm';
import { validationError } from './errors.ts';
import { DateTime } from './schemas.ts';

/** An array filter: repeated parameters (`?ids=a&ids=b`) and comma-separated values (`?ids=a,b`) both work. */
export const ArrayQuery = Type.Array(Type.String({ maxLength: 4096 }), { maxItems: 1000 });

export const DateRangeQuery = {
  createDateStart: Type.Optional(DateTime),
  createDateEnd: Type.Optional(DateTime),
  lastModificationDateStart: Type.Optional(DateTime),
  lastModificationDateEnd: Type.Optional(DateTime),
};

export const TagAttributeQuery = {
  tags: Type.Optional(ArrayQuery),
  attributes: Type.Optional(ArrayQuery),
};

export function arrayParam(value: string[] | string | undefined): string[] {
  if (value === undefined) return [];
  const list = Array.isArray(value) ? value : [value];
  return list
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter(Boolean);
}

/** A value from a closed list, matched case-insensitively and answered in the list's own spelling. */
export function oneOf<T extends string>(field: string, value: string, allowed: readonly T[]): T {
  const found = allowed.find((a) => a.toLowerCase() === value.toLowerCase());
  if (!found) throw validationError(field, `must be one of ${allowed.join(', ')} (not "${value}")`);
  return found;
}

export function dateRange(column: AnyColumn, start?: string, end?: string): SQL | undefined {
  return and(start ? gte(column, new Date(start)) : undefined, end ? lte(column, new Date(end)) : undefined);
}

/** Items carrying every listed tag. */
export function hasAllTags(column: AnyColumn, tags: string[] | string | undefined): SQL | undefined {
  const list = arrayParam(tags);
  return list.length ? sql`${column} @> ${toTextArray(list)}` : undefined;
}

/** `attributes` filters are `[key]=value` (the spec's form) or `key=value`; items must carry every one. */
export function hasAllAttributes(column: AnyColumn, attributes: string[] | string | undefined): SQL | undefined {
  const list = arrayParam(attributes).map(normalizeAttributeFilter);
  return list.length ? sql`${column} @> ${toTextArray(list)}` : undefined;
}

export function normalizeAttributeFilter(raw: string): string {
  const m = /^\[([^\]]+)\]=(.*)$/.exec(raw) ?? /^([^=[\]]+)=(.*)$/.exec(raw);
  if (!m) throw validationError('attributes', `"${raw}" is not of the form [key]=value`);
  return `${m[1]}=${m[2]}`;
}

/** The ILIKE pattern of a substring search: `%`, `_` and `\\` in the query match themselves. */
export const likePattern = (query: string): string => `%${query.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/** Case-insensitive substring match of `query` over the given columns. */
export function textSearch(query: string | undefined, ...columns: (AnyColumn | SQL)[]): SQL | undefined {
  if (!query) return undefined;
  const pattern = likePattern(query);
  return or(...columns.map((c) => ilike(c as AnyColumn, pattern)));
}

function toTextArray(values: string[]): SQL {
  return sql`ARRAY[${sql.join(
    values.map((v) => sql`${v}`),
    sql`, `,
  )}]::text[]`;
}
