import { sql, type SQL } from 'drizzle-orm';
import { validationError } from '../../platform/errors.ts';
import { DIMENSIONS, INTERVALS, ORDER_NAMES, dimensionsOf, isRatio, type DimensionName, type IntervalName, type Operator } from './dimensions.ts';

/** The body every analytics operation takes (spec, "Streaming: analytics"). */
export interface AnalyticsBody {
  start?: string;
  end?: string;
  filters?: { name: DimensionName; operator: Operator; value: unknown }[];
  orderBy?: { name: string; order: 'ASC' | 'DESC' }[];
  interval?: IntervalName;
  groupBy?: DimensionName[];
  limit?: number;
  offset?: number;
  dimension?: DimensionName;
  includeContext?: boolean;
}

export type Aggregate = 'count' | 'sum' | 'avg' | 'median';
/** `play`: queries/*; `ad`: ads/queries/*; `all`: max concurrent viewers and impressions, over every beacon. */
export type Scope = 'play' | 'ad' | 'all';

const MAX_IN_VALUES = 100;
const MAX_TEXT_VALUE = 256;

/** Refuses a dimension the operation's scope does not know, naming the ones it does. */
export function checkDimension(name: string, scope: Scope, field: string): DimensionName {
  const allowed = dimensionsOf(scope);
  if (!(allowed as string[]).includes(name)) throw validationError(field, `must be one of ${allowed.join(', ')}`);
  return name as DimensionName;
}

function scalar(name: DimensionName, value: unknown, field: string): string | number {
  const { type } = DIMENSIONS[name];
  if (type === 'number') {
    if (typeof value !== 'number' || !Number.isFinite(value)) throw validationError(field, `must be a number (${name} is numeric)`);
    return value;
  }
  if (typeof value !== 'string' || value.length > MAX_TEXT_VALUE) {
    throw validationError(field, `must be a string of at most ${MAX_TEXT_VALUE} characters (${name} is text)`);
  }
  return value;
}

/** One filter as a condition; the value is a parameter, the column a constant of the catalogue. */
function condition(f: { name: DimensionName; operator: Operator; value: unknown }, scope: Scope, i: number): SQL {
  const name = checkDimension(f.name, scope, `filters[${i}].name`);
  if (isRatio(name)) throw validationError(`filters[${i}].name`, `${name} is a ratio over many beacons and cannot filter them`);
  const { expr, type } = DIMENSIONS[name];
  const field = `filters[${i}].value`;
  switch (f.operator) {
    case 'IN': {
      if (!Array.isArray(f.value) || f.value.length === 0 || f.value.length > MAX_IN_VALUES) {
        throw validationError(field, `must be an array of 1 to ${MAX_IN_VALUES} values for IN`);
      }
      const values = f.value.map((v, j) => scalar(name, v, `${field}[${j}]`));
      return sql`${expr} in (${sql.join(
        values.map((v) => sql`${v}`),
        sql`, `,
      )})`;
    }
    case 'CONTAINS':
      if (type !== 'text') throw validationError(`filters[${i}].operator`, `CONTAINS applies to text dimensions; ${name} is numeric`);
      return sql`strpos(${expr}, ${scalar(name, f.value, field)}) > 0`;
    case 'EQ':
      return sql`${expr} = ${scalar(name, f.value, field)}`;
    case 'NE':
      return sql`${expr} is distinct from ${scalar(name, f.value, field)}`;
    case 'LT':
      return sql`${expr} < ${scalar(name, f.value, field)}`;
    case 'LTE':
      return sql`${expr} <= ${scalar(name, f.value, field)}`;
    case 'GT':
      return sql`${expr} > ${scalar(name, f.value, field)}`;
    case 'GTE':
      return sql`${expr} >= ${scalar(name, f.value, field)}`;
  }
}

/** The conditions every operation shares: the tenant, the scope, the time range and the filters. */
export function whereOf(tenantId: string, body: AnalyticsBody, scope: Scope): SQL {
  const parts: SQL[] = [sql`tenant_id = ${tenantId}`];
  if (scope === 'ad') parts.push(sql`kind like 'ad%'`);
  if (scope === 'play') parts.push(sql`kind not like 'ad%'`);
  const start = body.start ? new Date(body.start) : undefined;
  const end = body.end ? new Date(body.end) : undefined;
  if (start && end && start > end) throw validationError('end', 'must not be before start');
  if (start) parts.push(sql`time >= ${start.toISOString()}::timestamptz`);
  if (end) parts.push(sql`time < ${end.toISOString()}::timestamptz`);
  (body.filters ?? []).forEach((f, i) => parts.push(condition(f, scope, i)));
  return sql.join(parts, sql` and `);
}

/** The start of an interval, as an ISO 8601 UTC string (sortable as text). */
export const bucketOf = (interval: IntervalName, time: SQL = sql.raw('time')): SQL =>
  sql`to_char(date_trunc(${sql.raw(`'${INTERVALS[interval]}'`)}, ${time} at time zone 'UTC'), 'YYYY-MM-DD"T"HH24:MI:SS"Z"')`;

/** The grouped dimensions, checked: known to the scope, not a ratio, not twice. */
export function groupsOf(body: AnalyticsBody, scope: Scope): DimensionName[] {
  const groups = (body.groupBy ?? []).map((g, i) => {
    const name = checkDimension(g, scope, `groupBy[${i}]`);
    if (isRatio(name)) throw validationError(`groupBy[${i}]`, `${name} is a ratio over many beacons and cannot group them`);
    return name;
  });
  if (new Set(groups).size !== groups.length) throw validationError('groupBy', 'must not name a dimension twice');
  return groups;
}

/**
 * ` order by ...` from `orderBy`, over the result's columns (`c0`... for the interval and groups, `v` for the result):
 * by default the interval, then the groups, ascending.
 */
export function orderOf(body: AnalyticsBody, groups: DimensionName[]): SQL {
  const columns = new Map<string, string>();
  let n = 0;
  if (body.interval) columns.set('INTERVAL', `c${n++}`);
  for (const g of groups) columns.set(g, `c${n++}`);
  columns.set('FUNCTION', 'v');
  const order = (body.orderBy ?? []).map((o, i) => {
    const column = columns.get(o.name);
    if (!column) {
      const allowed = [...columns.keys()].filter((k) => k !== 'INTERVAL' || body.interval);
      throw validationError(`orderBy[${i}].name`, `must be one of ${allowed.join(', ')} (${ORDER_NAMES.join(' and ')}, or a dimension of groupBy)`);
    }
    return `${column} ${o.order === 'DESC' ? 'desc' : 'asc'} nulls last`;
  });
  for (const column of columns.values()) if (column !== 'v' && !order.some((o) => o.startsWith(`${column} `))) order.push(`${column} asc`);
  // Only names of this function's own making reach raw SQL.
  return order.length ? sql.raw(` order by ${order.join(', ')}`) : sql``;
}

/** The aggregate of one dimension, as a float8 so that both drivers hand back a number. */
export function aggregateOf(aggregate: Aggregate, name: DimensionName): SQL {
  const d = DIMENSIONS[name] as (typeof DIMENSIONS)[DimensionName] & { count?: SQL; ratio?: SQL };
  if (d.ratio) {
    if (aggregate !== 'avg') throw validationError('dimension', `${name} is a percentage: only avg applies to it`);
    return sql`(${d.ratio})::float8`;
  }
  if (aggregate !== 'count' && d.type !== 'number') throw validationError('dimension', `${aggregate} needs a numeric dimension; ${name} is text`);
  switch (aggregate) {
    case 'count':
      return sql`(${d.count ?? sql`count(${d.expr})`})::float8`;
    case 'sum':
      return sql`coalesce(sum(${d.expr}), 0)::float8`;
    case 'avg':
      return sql`avg(${d.expr})::float8`;
    case 'median':
      return sql`(percentile_cont(0.5) within group (order by ${d.expr}))::float8`;
  }
}
