import { and, eq, gte, lte, sql } from 'drizzle-orm';
import type { Static } from 'typebox';
import type { PlatformContext } from '../../context.ts';
import type { Queryable } from '../../db/client.ts';
import { ApiError, validationError } from '../../platform/errors.ts';
import type * as s from './schemas.ts';
import { channelRow } from './service.ts';
import { liveChannelStats } from './tables.ts';

/** The metrics a channel's owner records once per minute; the spec's `metrics` object is keyed by `id`. */
const METRICS = {
  inputBitrate: {
    description: 'Bitrate of the ingested input, averaged over the time an encoder was connected in the minute (no value for a minute without one)',
    unitName: 'kilobits per second',
    unitSymbol: 'kb/s',
  },
  inputFrameRate: {
    description: 'Frame rate of the ingested input, averaged over the time an encoder was connected in the minute (no value for a minute without one)',
    unitName: 'frames per second',
    unitSymbol: 'fps',
  },
  droppedFrames: { description: 'Input frames dropped or duplicated by the encoder to keep real time', unitName: 'frames', unitSymbol: 'frames' },
  segmentsWritten: { description: 'Output segments published (every rendition)', unitName: 'segments', unitSymbol: 'segments' },
  ingestConnectedSeconds: { description: 'Seconds an encoder was connected and sending', unitName: 'seconds', unitSymbol: 's' },
  restreamsActive: { description: 'Restream destinations sending, averaged over the minute', unitName: 'destinations', unitSymbol: 'destinations' },
  concurrentViewers: { description: 'Distinct players that requested segments in the minute', unitName: 'viewers', unitSymbol: 'viewers' },
} as const;

type MetricId = keyof typeof METRICS;

export interface MinuteStats {
  channelId: string;
  tenantId: string;
  /** The start of the minute the values cover. */
  minute: Date;
  values: Partial<Record<MetricId, number>>;
}

export const minuteOf = (ms: number): Date => new Date(Math.floor(ms / 60_000) * 60_000);

/**
 * Writes per-minute values in one statement. A minute written again (the owner flushes the minute in progress every
 * few seconds) takes the newer value; `add` sums instead, for counters kept by several processes (viewers seen by
 * each API process). Rows of channels deleted meanwhile are skipped.
 */
export async function recordChannelStats(db: Queryable, rows: MinuteStats[], { add = false } = {}): Promise<void> {
  const flat = rows.flatMap((r) =>
    Object.entries(r.values)
      .filter(([, v]) => Number.isFinite(v))
      .map(([metric, value]) => sql`(${r.channelId}::uuid, ${r.tenantId}::uuid, ${metric}, ${r.minute.toISOString()}::timestamptz, ${value}::float8)`),
  );
  if (!flat.length) return;
  const merge = add ? sql`${liveChannelStats.value} + excluded.value` : sql`excluded.value`;
  await db.execute(sql`
    insert into ${liveChannelStats} (channel_id, tenant_id, metric, minute, value)
    select v.* from (values ${sql.join(flat, sql`, `)}) as v(channel_id, tenant_id, metric, minute, value)
    where exists (select 1 from live_channels c where c.id = v.channel_id)
    on conflict (channel_id, metric, minute) do update set value = ${merge}`);
}

/** Buckets a request may ask for at once: a week of minutes. */
const MAX_BUCKETS = 7 * 24 * 60;

/**
 * `GET .../stats`: per metric, the per-minute rows in [start, end] grouped into buckets of `periodSeconds` aligned on
 * multiples of it since the epoch (so that the same period always gives the same buckets), `Sum` or `Avg` of the
 * minutes that have a value. Buckets without any recorded minute are left out: the channel was not running.
 */
export async function channelStats(ctx: PlatformContext, tenantId: string, id: string, q: Static<typeof s.StatsQuery>) {
  await channelRow(ctx.db, tenantId, id);
  const period = q.periodSeconds ?? 60;
  if (period % 60 !== 0) throw validationError('periodSeconds', 'must be a multiple of 60');
  const end = q.end ? new Date(q.end) : new Date();
  const start = q.start ? new Date(q.start) : new Date(end.getTime() - 3600_000);
  if (start > end) throw validationError('start', 'must not be after end');
  if ((end.getTime() - start.getTime()) / 1000 / period > MAX_BUCKETS) {
    throw new ApiError(400, 'validation_failed', `start to end spans more than ${MAX_BUCKETS} periods; ask for a longer periodSeconds or a shorter range`, [
      { field: 'periodSeconds', message: `at most ${MAX_BUCKETS} periods per request` },
    ]);
  }
  const fn = q.aggregationFunction === 'Avg' ? sql`avg(${liveChannelStats.value})` : sql`sum(${liveChannelStats.value})`;
  // Inlined, not a parameter: PostgreSQL matches the GROUP BY expression to the selected one by its text. `period` is
  // an integer the schema checked.
  const p = sql.raw(String(Math.trunc(period)));
  const bucket = sql<Date>`to_timestamp(floor(extract(epoch from ${liveChannelStats.minute}) / ${p}) * ${p})`;
  const rows = await ctx.db
    .select({ metric: liveChannelStats.metric, time: bucket.mapWith((v: string | Date) => new Date(v)), value: sql<number>`${fn}`.mapWith(Number) })
    .from(liveChannelStats)
    .where(
      and(
        eq(liveChannelStats.channelId, id),
        eq(liveChannelStats.tenantId, tenantId),
        // The minute that holds `start` counts: its row covers part of the range.
        gte(liveChannelStats.minute, minuteOf(start.getTime())),
        lte(liveChannelStats.minute, end),
      ),
    )
    .groupBy(liveChannelStats.metric, bucket)
    .orderBy(bucket);
  const metrics = Object.fromEntries(
    Object.entries(METRICS).map(([metricId, m]) => [
      metricId,
      { id: metricId, ...m, data: rows.filter((r) => r.metric === metricId).map((r) => ({ time: r.time, value: r.value })) },
    ]),
  );
  return { metrics };
}
