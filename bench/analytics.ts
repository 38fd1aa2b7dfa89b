import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import pg from 'pg';
import { loadConfig } from '../src/config.ts';
import { openPlatform } from '../src/server.ts';

/**
 * bench analytics, on PostgreSQL:
 * 1. ingestion: autocannon POSTs batches of beacons to `/player/v1/{tenantId}/beacons` for BENCH_DURATION seconds
 *    (BENCH_CONNECTIONS connections, BENCH_BATCH beacons a request); figure: beacons stored per second.
 * 2. query: the table is filled up to BENCH_ROWS beacons (one million by default: 100 assets, 20 beacons an
 *    impression), then `POST /streaming/v1/analytics/queries/count` (IMPRESSION_ID grouped by ASSET_ID) is timed
 *    against the same aggregate written by hand in SQL, each BENCH_RUNS times in turn; figures: medians and their ratio.
 * The platform runs in this process, on a scratch database of BENCH_DATABASE_URL (default TEST_DATABASE_URL or the
 * local server).
 */
const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const BATCH = Number(process.env.BENCH_BATCH ?? 50);
const ROWS = Number(process.env.BENCH_ROWS ?? 1_000_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 7);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

export async function run(): Promise<void> {
  const admin = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const name = `mediaplane_bench_${process.pid}`;
  const server = new pg.Client({ connectionString: admin });
  await server.connect();
  await server.query(`create database ${name}`);
  const url = new URL(admin);
  url.pathname = `/${name}`;
  const dataDir = mkdtempSync(join(tmpdir(), 'mediaplane-bench-'));
  const config = loadConfig({
    ...process.env,
    DATABASE_URL: url.toString(),
    MEDIAPLANE_DATA_DIR: dataDir,
    MEDIAPLANE_ADMIN_TOKEN: 'bench-admin-token',
    LOG_LEVEL: 'warn',
    MEDIAPLANE_RATE_LIMIT_PER_MINUTE: '100000000',
    MEDIAPLANE_BEACON_RATE_LIMIT_PER_MINUTE: '100000000',
  });
  const platform = await openPlatform(config);
  const db = new pg.Client({ connectionString: url.toString() });
  try {
    const base = await platform.app.listen({ port: 0, host: '127.0.0.1' });
    const created = await fetch(`${base}/admin/v1/tenants`, {
      method: 'POST',
      headers: { authorization: 'Bearer bench-admin-token', 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'bench' }),
    });
    const tenant = (await created.json()) as { id: string; apiKey: { key: string } };
    await db.connect();

    // 1. Ingestion over HTTP.
    const beacons = Array.from({ length: BATCH }, (_, i) => ({
      impressionId: randomUUID(),
      kind: 'heartbeat',
      assetId: `asset-${i % 100}`,
      assetType: 'Vod',
      playerTech: 'hls.js',
      playedSeconds: 10,
      videoBitrate: 1_500_000,
    }));
    const result = await autocannon({
      url: `${base}/player/v1/${tenant.id}/beacons`,
      method: 'POST',
      connections: CONNECTIONS,
      duration: DURATION,
      headers: { 'content-type': 'application/json', 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Chrome/120.0 Safari/537.36' },
      body: JSON.stringify({ beacons }),
    });
    const stored = Number((await db.query('select count(*) from analytics_beacons')).rows[0].count);
    const non2xx = result.non2xx;
    console.log(
      `ingestion: ${stored} beacons stored in ${DURATION} s = ${Math.round(stored / DURATION)} beacons/s ` +
        `(${Math.round(result.requests.average)} req/s of ${BATCH}, p99 ${result.latency.p99} ms, ${non2xx} non-2xx; target >= 5000 beacons/s)`,
    );

    // 2. The aggregate over ROWS beacons.
    const missing = Math.max(0, ROWS - stored);
    await db.query(
      `insert into analytics_beacons (time, tenant_id, impression_id, kind, asset_id, asset_type, player_tech, browser, os, device_type, played_seconds, video_bitrate)
       select now() - (g % 86400) * interval '1 second', $1::uuid,
              md5(($2::text || (g / 20)::text))::uuid, case when g % 20 = 0 then 'start' else 'heartbeat' end,
              'asset-' || (g % 100), 'Vod', 'hls.js', 'Chrome', 'Linux', 'Desktop', 10, 1500000
       from generate_series(1, $3::int) as g`,
      [tenant.id, randomUUID(), missing],
    );
    await db.query('vacuum analyze analytics_beacons');
    const body = JSON.stringify({ dimension: 'IMPRESSION_ID', groupBy: ['ASSET_ID'], limit: 200 });
    const headers = { 'x-api-key': tenant.apiKey.key, 'x-tenant-id': tenant.id, 'content-type': 'application/json' };
    const plain = `select asset_id, count(distinct impression_id) from analytics_beacons
                   where tenant_id = $1 and kind not like 'ad%' group by asset_id order by asset_id limit 200`;
    const api: number[] = [];
    const sql: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      let t = performance.now();
      const res = await fetch(`${base}/streaming/v1/analytics/queries/count`, { method: 'POST', headers, body });
      const answer = (await res.json()) as { rows: unknown[][] };
      api.push(performance.now() - t);
      if (res.status !== 200 || answer.rows.length !== 100) throw new Error(`queries/count answered ${res.status}: ${JSON.stringify(answer).slice(0, 300)}`);
      t = performance.now();
      await db.query(plain, [tenant.id]);
      sql.push(performance.now() - t);
    }
    const total = Number((await db.query('select count(*) from analytics_beacons')).rows[0].count);
    const [a, s] = [median(api), median(sql)];
    console.log(
      `queries/count IMPRESSION_ID by ASSET_ID over ${total} beacons: API median ${a.toFixed(0)} ms, plain SQL median ${s.toFixed(0)} ms, ` +
        `ratio ${(a / s).toFixed(2)} (target <= 1.5 and API < 1000 ms); runs API ${api.map((x) => x.toFixed(0)).join(' ')}, SQL ${sql.map((x) => x.toFixed(0)).join(' ')}`,
    );
  } finally {
    await db.end().catch(() => {});
    await platform.close();
    await server.query(`drop database if exists ${name} with (force)`);
    await server.end();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
