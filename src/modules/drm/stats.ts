import { and, asc, count, eq, gte, lt, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { validationError } from '../../platform/errors.ts';
import { envelope, pageWindow, type PageRequest } from '../../platform/paging.ts';
import { drmLicenseLog } from './tables.ts';

export interface StatsRange {
  from?: string;
  to?: string;
}

const DAY_MS = 86400_000;
const RANGE_MAX_MS = 366 * DAY_MS;
export const INTERVALS = { Minute: 'minute', Hour: 'hour', Day: 'day' } as const;
export type Interval = keyof typeof INTERVALS;

/** A time range: `to` defaults to now, `from` to a day before `to`; at most a year. */
export function range(q: StatsRange): { from: Date; to: Date } {
  const to = q.to ? new Date(q.to) : new Date();
  const from = q.from ? new Date(q.from) : new Date(to.getTime() - DAY_MS);
  if (Number.isNaN(to.getTime())) throw validationError('to', 'must be an ISO 8601 date-time');
  if (Number.isNaN(from.getTime())) throw validationError('from', 'must be an ISO 8601 date-time');
  if (from >= to) throw validationError('from', 'must be before to');
  if (to.getTime() - from.getTime() > RANGE_MAX_MS) throw validationError('from', 'the range is at most 366 days');
  return { from, to };
}

const inRange = (tenantId: string, r: { from: Date; to: Date }) =>
  and(eq(drmLicenseLog.tenantId, tenantId), gte(drmLicenseLog.time, r.from), lt(drmLicenseLog.time, r.to));

const rangeOut = (r: { from: Date; to: Date }) => ({ from: r.from.toISOString(), to: r.to.toISOString() });

/** Refusals by error code, most frequent first. */
export async function licenseErrorCodes(db: Db, tenantId: string, q: StatsRange) {
  const r = range(q);
  const rows = await db
    .select({ errorCode: drmLicenseLog.errorCode, httpStatus: drmLicenseLog.httpStatus, count: count() })
    .from(drmLicenseLog)
    .where(and(inRange(tenantId, r), eq(drmLicenseLog.granted, false)))
    .groupBy(drmLicenseLog.errorCode, drmLicenseLog.httpStatus)
    .orderBy(sql`count(*) desc`, asc(drmLicenseLog.errorCode));
  return { ...rangeOut(r), items: rows.map((x) => ({ errorCode: x.errorCode ?? '', httpStatus: x.httpStatus, count: x.count })) };
}

/** The license requests themselves, newest first, in the paging envelope. */
export async function licenseRequests(db: Db, tenantId: string, q: StatsRange & PageRequest) {
  const r = range(q);
  const { limit, offset } = pageWindow(q);
  const [rows, [{ total }]] = await Promise.all([
    db
      .select()
      .from(drmLicenseLog)
      .where(inRange(tenantId, r))
      .orderBy(sql`${drmLicenseLog.time} desc`, sql`${drmLicenseLog.id} desc`)
      .limit(limit)
      .offset(offset),
    db.select({ total: count() }).from(drmLicenseLog).where(inRange(tenantId, r)),
  ]);
  const items = rows.map((x) => ({
    id: String(x.id),
    time: x.time,
    type: x.type,
    contentId: x.contentId,
    keyIds: x.keyIds,
    policyId: x.policyId,
    userId: x.userId,
    granted: x.granted,
    errorCode: x.errorCode,
    httpStatus: x.httpStatus,
  }));
  return envelope(items, total, q);
}

/** Licenses granted in the range, in total and per type. */
export async function licenseCount(db: Db, tenantId: string, q: StatsRange) {
  const r = range(q);
  const rows = await db
    .select({ type: drmLicenseLog.type, count: count() })
    .from(drmLicenseLog)
    .where(and(inRange(tenantId, r), eq(drmLicenseLog.granted, true)))
    .groupBy(drmLicenseLog.type);
  const byType = Object.fromEntries(rows.map((x) => [x.type, x.count]));
  return { ...rangeOut(r), count: rows.reduce((n, x) => n + x.count, 0), byType };
}

/** Requests per minute, hour or day: granted and refused. Empty buckets are left out. */
export async function requestsHistogram(db: Db, tenantId: string, q: StatsRange & { interval?: Interval }) {
  const r = range(q);
  const interval = q.interval ?? 'Hour';
  // The unit is one of three literals (never user text): inlined, so the select and the GROUP BY are the same expression.
  const bucket = sql<string>`date_trunc('${sql.raw(INTERVALS[interval])}', ${drmLicenseLog.time} at time zone 'UTC')`;
  const rows = await db
    .select({
      time: bucket,
      requests: count(),
      licenses: sql<number>`count(*) filter (where ${drmLicenseLog.granted})`.mapWith(Number),
    })
    .from(drmLicenseLog)
    .where(inRange(tenantId, r))
    .groupBy(bucket)
    .orderBy(bucket);
  return {
    ...rangeOut(r),
    interval,
    items: rows.map((x) => ({
      time: new Date(`${String(x.time).replace(' ', 'T')}Z`).toISOString(),
      requests: x.requests,
      licenses: x.licenses,
      errors: x.requests - x.licenses,
    })),
  };
}

/** The license server's figures for the range: requests, licenses, refusals, distinct viewers and contents. */
export async function licenseMetrics(db: Db, tenantId: string, q: StatsRange) {
  const r = range(q);
  const [row] = await db
    .select({
      requests: count(),
      licenses: sql<number>`count(*) filter (where ${drmLicenseLog.granted})`.mapWith(Number),
      users: sql<number>`count(distinct ${drmLicenseLog.userId})`.mapWith(Number),
      contents: sql<number>`count(distinct ${drmLicenseLog.contentId})`.mapWith(Number),
      tokens: sql<number>`count(distinct ${drmLicenseLog.tokenId})`.mapWith(Number),
    })
    .from(drmLicenseLog)
    .where(inRange(tenantId, r));
  const errors = row.requests - row.licenses;
  return {
    ...rangeOut(r),
    licenseRequests: row.requests,
    licenses: row.licenses,
    errors,
    errorRate: row.requests > 0 ? errors / row.requests : 0,
    uniqueUsers: row.users,
    uniqueContents: row.contents,
    uniqueTokens: row.tokens,
  };
}
