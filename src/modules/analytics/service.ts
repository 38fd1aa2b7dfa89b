import { sql, type SQL } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { validationError } from '../../platform/errors.ts';
import { DIMENSIONS, INTERVALS, type DimensionName } from './dimensions.ts';
import { aggregateOf, bucketOf, checkDimension, groupsOf, orderOf, whereOf, type Aggregate, type AnalyticsBody, type Scope } from './query.ts';
import { analyticsBeacons } from './tables.ts';

export interface AnalyticsResult {
  rowCount: number;
  rows: unknown[][];
  columnLabels: { key: string; label: string }[];
  contextDescription: { label: string; description: string }[];
}

const DEFAULT_LIMIT = 100;

async function rowsOf(db: Db, query: SQL): Promise<Record<string, unknown>[]> {
  const result = await db.execute(query);
  return (result as unknown as { rows: Record<string, unknown>[] }).rows;
}

function checkInterval(body: AnalyticsBody): void {
  if (body.interval !== undefined && !(body.interval in INTERVALS)) {
    throw validationError('interval', `must be one of ${Object.keys(INTERVALS).join(', ')}`);
  }
}

/** The columns of a result: the interval's start, the grouped dimensions, then the operation's value. */
function shape(rows: Record<string, unknown>[], body: AnalyticsBody, groups: DimensionName[], valueKey: string, valueLabel: string) {
  const columnLabels = [
    ...(body.interval ? [{ key: 'INTERVAL', label: `${body.interval[0]}${body.interval.slice(1).toLowerCase()} starting` }] : []),
    ...groups.map((g) => ({ key: g, label: DIMENSIONS[g].label })),
    { key: valueKey, label: valueLabel },
  ];
  const width = columnLabels.length - 1;
  return {
    rowCount: rows.length,
    rows: rows.map((r) => [...Array.from({ length: width }, (_, i) => r[`c${i}`] ?? null), r.v === null || r.v === undefined ? null : Number(r.v)]),
    columnLabels,
  };
}

function context(body: AnalyticsBody, what: string, groups: DimensionName[]): AnalyticsResult['contextDescription'] {
  if (!body.includeContext) return [];
  const described = [...new Set([...(body.dimension ? [body.dimension] : []), ...groups, ...(body.filters ?? []).map((f) => f.name)])];
  return [
    { label: 'Query', description: what },
    { label: 'Period', description: `${body.start ?? 'the first beacon'} to ${body.end ?? 'now'} (UTC), by ${body.interval ?? 'the whole period'}` },
    ...(body.filters ?? []).map((f) => ({ label: 'Filter', description: `${f.name} ${f.operator} ${JSON.stringify(f.value)}` })),
    ...described.map((d) => ({ label: d, description: DIMENSIONS[d].description })),
  ];
}

/** `queries/count|sum|avg|median` and `ads/queries/count|sum|avg`: one aggregate of one dimension. */
export async function aggregate(db: Db, tenantId: string, scope: 'play' | 'ad', fn: Aggregate, body: AnalyticsBody): Promise<AnalyticsResult> {
  if (body.dimension === undefined) throw validationError('dimension', 'is required');
  const dimension = checkDimension(body.dimension, scope, 'dimension');
  checkInterval(body);
  const groups = groupsOf(body, scope);
  const value = aggregateOf(fn, dimension);
  const where = whereOf(tenantId, body, scope);
  const keys: SQL[] = [...(body.interval ? [bucketOf(body.interval)] : []), ...groups.map((g) => DIMENSIONS[g].expr)];
  const select = sql.join([...keys.map((k, i) => sql`${k} as ${sql.raw(`c${i}`)}`), sql`${value} as v`], sql`, `);
  const groupBy = keys.length ? sql` group by ${sql.join(keys, sql`, `)}` : sql``;
  const rows = await rowsOf(
    db,
    sql`select ${select} from ${analyticsBeacons} where ${where}${groupBy}${orderOf(body, groups)} limit ${body.limit ?? DEFAULT_LIMIT} offset ${body.offset ?? 0}`,
  );
  const label = `${fn} of ${DIMENSIONS[dimension].label}`;
  return { ...shape(rows, body, groups, fn.toUpperCase(), label), contextDescription: context(body, label, groups) };
}

/**
 * `metrics/max_concurrentviewers`: an impression is watching from its first beacon to its last; the result is the
 * most impressions watching at once (per interval and group). Each impression's span opens (+1) and closes (-1) a
 * running count; starts sort before ends at the same instant, so touching spans count as concurrent.
 */
export async function maxConcurrentViewers(db: Db, tenantId: string, body: AnalyticsBody): Promise<AnalyticsResult> {
  checkInterval(body);
  const groups = groupsOf(body, 'all');
  const where = whereOf(tenantId, body, 'all');
  const g = groups.map((_, i) => sql.raw(`g${i}`));
  const sessionGroups = groups.map((name, i) => sql`, min(${DIMENSIONS[name].expr}) as ${g[i]}`);
  const edgeGroups = g.map((x) => sql`, ${x}`);
  const partition = g.length ? sql`partition by ${sql.join(g, sql`, `)} ` : sql``;
  const keys: SQL[] = [...(body.interval ? [bucketOf(body.interval, sql.raw('t'))] : []), ...g];
  const select = sql.join([...keys.map((k, i) => sql`${k} as ${sql.raw(`c${i}`)}`), sql`max(running)::float8 as v`], sql`, `);
  const groupBy = keys.length ? sql` group by ${sql.join(keys, sql`, `)}` : sql``;
  const rows = await rowsOf(
    db,
    sql`with sessions as (
          select min(time) as s, max(time) as e${sql.join(sessionGroups, sql``)} from ${analyticsBeacons} where ${where} group by impression_id
        ), edges as (
          select s as t, 1 as d${sql.join(edgeGroups, sql``)} from sessions union all select e as t, -1 as d${sql.join(edgeGroups, sql``)} from sessions
        ), counted as (
          select t${sql.join(edgeGroups, sql``)}, sum(d) over (${partition}order by t, d desc rows unbounded preceding) as running from edges
        )
        select ${select} from counted${groupBy}${orderOf(body, groups)} limit ${body.limit ?? DEFAULT_LIMIT} offset ${body.offset ?? 0}`,
  );
  const label = 'Max concurrent viewers';
  // Without groups the answer is one figure, 0 for a period without beacons (max() over no rows is null).
  const result = shape(rows, body, groups, 'MAX_CONCURRENTVIEWERS', label);
  if (!keys.length) Object.assign(result, { rowCount: 1, rows: [[result.rows[0]?.[0] ?? 0]] });
  return { ...result, contextDescription: context(body, label, groups) };
}

/** `impressions`: the impressions of the period that pass the filters, the most recent first. */
export async function listImpressions(db: Db, tenantId: string, body: AnalyticsBody): Promise<{ impressions: { impressionId: string }[] }> {
  const where = whereOf(tenantId, { start: body.start, end: body.end, filters: body.filters }, 'all');
  const rows = await rowsOf(
    db,
    sql`select impression_id::text as id from ${analyticsBeacons} where ${where} group by impression_id order by min(time) desc limit ${body.limit ?? DEFAULT_LIMIT}`,
  );
  return { impressions: rows.map((r) => ({ impressionId: String(r.id) })) };
}

export type { Scope };
