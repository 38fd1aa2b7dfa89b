import { sql } from 'drizzle-orm';
import type { Config } from '../../config.ts';
import type { Queryable } from '../../db/client.ts';
import { ApiError } from '../../platform/errors.ts';

/** Serializes port choices across processes and tenants (a transaction-scoped advisory lock). */
const SRT_PORT_LOCK_KEY = 0x5354_5031; // "STP1"

/**
 * The pair of SRT listener ports of a channel (`srt_port` and the next), chosen when the channel turns SRT and kept
 * while it stays SRT, so its ingest URLs never change; a channel that goes back to RTMP gives its pair back.
 * Pairs start at MEDIAPLANE_SRT_PORT_MIN and step by two; none left answers 409 `srt_ports_exhausted`.
 */
export async function srtPortFor(tx: Queryable, config: Config, protocol: string, current: number | null): Promise<number | null> {
  if (protocol !== 'SRT') return null;
  if (current) return current;
  const { srtPortMin: min, srtPortMax: max } = config.live;
  await tx.execute(sql`select pg_advisory_xact_lock(${SRT_PORT_LOCK_KEY})`);
  const result = await tx.execute(
    sql`select p::int as port from generate_series(${min}::int, ${max - 1}::int, 2) p
        where not exists (select 1 from live_channels c where c.srt_port = p) order by p limit 1`,
  );
  const rows = (result as unknown as { rows: { port: number }[] }).rows;
  const port = rows[0]?.port;
  if (!port) {
    throw new ApiError(
      409,
      'srt_ports_exhausted',
      `Every SRT port pair in MEDIAPLANE_SRT_PORT_MIN..MAX (${min}-${max}) belongs to a channel; switch a channel to RTMP or widen the range`,
    );
  }
  return port;
}
