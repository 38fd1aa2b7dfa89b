import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import pg from 'pg';
import { until } from '../test/helpers/until.ts';

/**
 * bench api: throughput and p99 latency of two authenticated tenant operations against a bare Fastify route that
 * answers a constant JSON body of the same size, measured side by side in one run, on PostgreSQL and on PGlite.
 * Servers run as their own processes (as in production); the load generator runs here.
 *
 * Then the start-up figures: wall time of CLI commands (`--help`, `tenant list` beside a running server) against
 * `node -e 0`, and the server's time from spawn to a ready /readyz on a new data directory (first start) and on the
 * same one again (restart), with embedded PGlite, the default install.
 *
 * BENCH_DURATION (seconds per measurement, default 6), BENCH_CONNECTIONS (default 10),
 * BENCH_DATABASE_URL (PostgreSQL server to create a scratch database on; default TEST_DATABASE_URL or the local one),
 * BENCH_DATABASES (`postgres,pglite` by default; `postgres` alone to repeat the list figure faster),
 * BENCH_STARTUP (`0` skips the start-up figures), BENCH_CLI_RUNS (runs per CLI command, default 10),
 * BENCH_NODE_FLAGS (flags for the platform's node, such as `--cpu-prof --cpu-prof-dir=/tmp/prof`).
 */
const DURATION = Number(process.env.BENCH_DURATION ?? 6);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const KEYS = 1000;
const TARGET = 0.4;
const root = new URL('..', import.meta.url).pathname;
const CLOCK_TICKS = 100; // USER_HZ, 100 on Linux

interface Measure {
  db: string;
  name: string;
  bytes: number;
  real: Sample;
  bare: Sample;
  /** The bare route plus the one principal lookup every authenticated request makes by design (PostgreSQL only). */
  bound?: Sample;
}

export async function run(): Promise<void> {
  const results: Measure[] = [];
  const pgAdmin = await reachablePostgres();
  if (!pgAdmin) console.log('PostgreSQL not reachable: measuring PGlite only (set BENCH_DATABASE_URL)');
  const wanted = (process.env.BENCH_DATABASES ?? 'postgres,pglite').split(',');
  for (const db of pgAdmin ? ['postgres', 'pglite'] : ['pglite']) if (wanted.includes(db)) results.push(...(await benchDatabase(db, pgAdmin)));
  report(results);
  if (process.env.BENCH_STARTUP !== '0') reportStartup(await startup());
}

async function reachablePostgres(): Promise<string | undefined> {
  const url = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.end();
    return url;
  } catch {
    return undefined;
  }
}

async function benchDatabase(db: string, pgAdmin: string | undefined): Promise<Measure[]> {
  const dataDir = mkdtempSync(join(tmpdir(), 'mediaplane-bench-'));
  const scratch = db === 'postgres' ? await scratchDatabase(pgAdmin!) : undefined;
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  // BENCH_NODE_FLAGS (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`) go to the platform's node.
  const nodeFlags = process.env.BENCH_NODE_FLAGS?.split(' ').filter(Boolean) ?? [];
  const server = start(process.execPath, [...nodeFlags, join(root, 'bin/mediaplane.js'), 'serve'], {
    PORT: String(port),
    HOST: '127.0.0.1',
    MEDIAPLANE_DATA_DIR: dataDir,
    MEDIAPLANE_ADMIN_TOKEN: 'bench-admin-token',
    LOG_LEVEL: 'warn',
    // One tenant sends thousands of requests a second here: the limit stays on (its cost is measured) but is not reached.
    MEDIAPLANE_RATE_LIMIT_PER_MINUTE: '100000000',
    ...(scratch ? { DATABASE_URL: scratch.url } : {}),
  });
  let bare: ChildProcess | undefined;
  let bound: ChildProcess | undefined;
  try {
    await waitFor(`${base}/readyz`);
    const tenant = await seedTenant(base);
    const headers = { 'x-api-key': tenant.key, 'x-tenant-id': tenant.id };
    const ops = [
      { name: 'GET /core/v1/api-key?limit=100', path: '/core/v1/api-key?limit=100', barePath: '/keys' },
      { name: 'GET /transcoder/v1/presets', path: '/transcoder/v1/presets', barePath: '/presets' },
    ];
    // The baseline answers exactly the bodies the platform answers.
    const bodies: Record<string, unknown> = {};
    for (const op of ops) bodies[op.barePath] = await (await fetch(base + op.path, { headers })).json();
    const bodiesFile = join(dataDir, 'bare-bodies.json');
    writeFileSync(bodiesFile, JSON.stringify(bodies));
    bare = start(process.execPath, ['--import', 'tsx', join(root, 'bench/bare-server.ts'), bodiesFile], {});
    const bareBase = (await firstLine(bare)).trim();
    if (scratch) bound = start(process.execPath, ['--import', 'tsx', join(root, 'bench/bare-server.ts'), bodiesFile, scratch.url], {});
    const boundBase = bound && (await firstLine(bound)).trim();

    // The database's backends are the platform's, but for the bound's own (bare-server.ts names them BOUND_APP).
    const serverPids = async () => [server.pid!, ...(scratch ? await scratch.backendPids(false) : [])];
    const out: Measure[] = [];
    for (const op of ops) {
      const targets: Target[] = [
        { url: bareBase + op.barePath, headers: {}, pids: async () => [bare!.pid!] },
        { url: base + op.path, headers, pids: serverPids },
        ...(boundBase ? [{ url: boundBase + op.barePath, headers, pids: async () => [bound!.pid!, ...(await scratch!.backendPids(true))] }] : []),
      ];
      const [bareSample, real, boundSample] = await measureSlices(targets);
      const bytes = JSON.stringify(bodies[op.barePath]).length;
      out.push({ db, name: op.name, bytes, real, bare: bareSample, bound: boundSample });
      console.log(`${db.padEnd(8)} ${op.name.padEnd(32)} ${line(real)} | bare ${line(bareSample)}${boundSample ? ` | bound ${line(boundSample)}` : ''}`);
    }
    return out;
  } finally {
    bare?.kill('SIGTERM');
    bound?.kill('SIGTERM');
    server.kill('SIGTERM');
    await Promise.all([exited(server), bare && exited(bare), bound && exited(bound)]);
    await scratch?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

interface Sample {
  rps: number;
  p99: number;
  /** CPU milliseconds the serving processes spent per request: immune to other load on the machine. */
  cpuMs: number;
  /** Of which the database backends (PostgreSQL only). */
  dbCpuMs: number;
}

interface Target {
  url: string;
  headers: Record<string, string>;
  /** The processes that serve: the server, and the database backends when the database is separate. */
  pids: () => Promise<number[]>;
}

/**
 * Measures the targets (the bare route, the platform, the bound) in alternating one-second slices (the order rotated
 * each round) for BENCH_DURATION seconds each, so that all see the same background load. Measured one after the other
 * for six seconds each, on a machine shared with other work, the figures came from different moments and their ratio
 * moved with whatever else ran (0.15 to 0.55 for the list in consecutive runs).
 */
async function measureSlices(targets: Target[]): Promise<Sample[]> {
  for (const t of targets) await autocannon({ url: t.url, headers: t.headers, connections: CONNECTIONS, duration: 1 }); // warm-up
  const totals = targets.map(() => ({ requests: 0, seconds: 0, cpu: 0, dbCpu: 0, p99s: [] as number[] }));
  const pids = await Promise.all(targets.map((t) => t.pids()));
  for (let round = 0; round < DURATION; round++) {
    for (let k = 0; k < targets.length; k++) {
      const i = (round + k) % targets.length;
      const t = targets[i];
      const cpuBefore = cpuSeconds(pids[i]);
      const dbBefore = cpuSeconds(pids[i].slice(1));
      const r = await autocannon({ url: t.url, headers: t.headers, connections: CONNECTIONS, duration: 1 });
      if (r.non2xx || r.errors || r.timeouts) throw new Error(`${t.url}: ${r.non2xx} non-2xx, ${r.errors} errors, ${r.timeouts} timeouts`);
      totals[i].cpu += cpuSeconds(pids[i]) - cpuBefore;
      totals[i].dbCpu += cpuSeconds(pids[i].slice(1)) - dbBefore;
      totals[i].requests += r.requests.total;
      totals[i].seconds += r.duration;
      totals[i].p99s.push(r.latency.p99);
    }
  }
  return totals.map((x) => ({
    rps: x.requests / x.seconds,
    p99: [...x.p99s].sort((a, b) => a - b)[Math.floor(x.p99s.length / 2)],
    cpuMs: (x.cpu * 1000) / x.requests,
    dbCpuMs: (x.dbCpu * 1000) / x.requests,
  }));
}

/** User + system CPU of these processes so far (and of their children that have exited, with `children`), from /proc (Linux; 0 elsewhere). */
function cpuSeconds(pids: number[], children = false): number {
  let ticks = 0;
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(fields[11]) + Number(fields[12]) + (children ? Number(fields[13]) + Number(fields[14]) : 0);
    } catch {
      // gone or not Linux
    }
  }
  return ticks / CLOCK_TICKS;
}

async function seedTenant(base: string): Promise<{ id: string; key: string }> {
  const res = await fetch(`${base}/admin/v1/tenants`, {
    method: 'POST',
    headers: { authorization: 'Bearer bench-admin-token', 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'bench' }),
  });
  const t = (await res.json()) as any;
  const tenant = { id: t.id as string, key: t.apiKey.key as string };
  let next = 1;
  const worker = async () => {
    while (next < KEYS) {
      const i = next++;
      const r = await fetch(`${base}/core/v1/api-key`, {
        method: 'POST',
        headers: { 'x-api-key': tenant.key, 'x-tenant-id': tenant.id, 'content-type': 'application/json' },
        body: JSON.stringify({ name: `bench key ${String(i).padStart(4, '0')}`, roleType: i % 3 ? 'Viewer' : 'Editor' }),
      });
      if (r.status !== 200) throw new Error(`seeding key ${i}: HTTP ${r.status}`);
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  return tenant;
}

const line = (x: Sample) => `${fmt(x.rps)} req/s, p99 ${x.p99} ms, ${x.cpuMs.toFixed(3)} CPU ms/req${x.dbCpuMs ? ` (database ${x.dbCpuMs.toFixed(3)})` : ''}`;

function report(results: Measure[]): void {
  console.log(`\n${KEYS} keys in the tenant; ${CONNECTIONS} connections, ${DURATION} s per measurement.`);
  console.log('Throughput ratio = platform req/s / bare req/s. CPU ratio = bare CPU per request / platform CPU per request');
  console.log('(server process plus, on PostgreSQL, its database backends): the ratio if CPU were the only limit, whatever else runs.');
  console.log('Bound = the bare route plus the principal lookup by key hash every authenticated request makes (PostgreSQL):');
  console.log("the CPU ratio against it is how much of the platform's cost is not that lookup.\n");
  console.log(
    '| database | operation | body bytes | req/s | p99 ms | CPU ms/req | bare req/s | bare CPU ms/req | bound req/s | bound CPU ms/req | throughput ratio | CPU ratio | CPU ratio to bound |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|---|---|---|---|');
  for (const { db, name, bytes, real, bare, bound } of results) {
    console.log(
      `| ${db} | ${name} | ${bytes} | ${fmt(real.rps)} | ${real.p99} | ${real.cpuMs.toFixed(3)} | ${fmt(bare.rps)} | ${bare.cpuMs.toFixed(3)} | ` +
        `${bound ? fmt(bound.rps) : '-'} | ${bound ? bound.cpuMs.toFixed(3) : '-'} | ` +
        `${(real.rps / bare.rps).toFixed(2)} | ${(bare.cpuMs / real.cpuMs).toFixed(2)} | ${bound ? (bound.cpuMs / real.cpuMs).toFixed(2) : '-'} |`,
    );
  }
  const target = results.find((m) => m.db === 'postgres' && m.name.startsWith('GET /core/v1/api-key'));
  if (target) {
    const ratio = target.real.rps / target.bare.rps;
    console.log(
      `\nTarget (authenticated list on PostgreSQL >= ${TARGET * 100}% of the bare route's throughput): ${(ratio * 100).toFixed(0)}% ${ratio >= TARGET ? 'met' : 'MISSED'}`,
    );
    if (target.bound)
      console.log(`Bound (bare + the principal lookup): ${((target.bound.rps / target.bare.rps) * 100).toFixed(0)}% of the bare route's throughput`);
  }
}

const fmt = (n: number) => Math.round(n).toString();

interface Startup {
  cli: { name: string; medianMs: number; minMs: number }[];
  firstStartMs: number;
  restartMs: number;
  /** CPU the server (and, on a first start, its initdb child) used until ready: what a quiet machine's wall time nears. */
  firstStartCpuMs: number;
  restartCpuMs: number;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Wall time of one run of a command to its exit. */
function timed(args: string[], env: Record<string, string>): Promise<number> {
  const began = performance.now();
  const child = spawn(process.execPath, args, { cwd: root, env: { ...process.env, ...env }, stdio: 'ignore' });
  return new Promise((resolve, reject) =>
    child.on('exit', (code) => (code === 0 ? resolve(performance.now() - began) : reject(new Error(`${args.join(' ')} exited with ${code}`)))),
  );
}

async function startup(): Promise<Startup> {
  const runs = Number(process.env.BENCH_CLI_RUNS ?? 10);
  const dataDir = mkdtempSync(join(tmpdir(), 'mediaplane-bench-start-'));
  const port = await freePort();
  const env = { PORT: String(port), HOST: '127.0.0.1', MEDIAPLANE_DATA_DIR: dataDir, LOG_LEVEL: 'warn' };
  const bin = join(root, 'bin/mediaplane.js');
  const serve = async () => {
    const began = performance.now();
    const server = start(process.execPath, [bin, 'serve'], env);
    server.stdout!.resume();
    await waitFor(`http://127.0.0.1:${port}/readyz`, 180_000);
    return { server, ms: performance.now() - began, cpuMs: cpuSeconds([server.pid!], true) * 1000 };
  };
  try {
    const first = await serve();
    const cli: Startup['cli'] = [];
    for (const [name, args] of [
      ['node -e 0', ['-e', '0']],
      ['mediaplane --help', [bin, '--help']],
      ['mediaplane tenant list (server running)', [bin, 'tenant', 'list']],
    ] as const) {
      await timed([...args], env); // warm the file cache
      const times: number[] = [];
      for (let i = 0; i < runs; i++) times.push(await timed([...args], env));
      cli.push({ name, medianMs: median(times), minMs: Math.min(...times) });
    }
    first.server.kill('SIGTERM');
    await exited(first.server);
    const again = await serve();
    again.server.kill('SIGTERM');
    await exited(again.server);
    return { cli, firstStartMs: first.ms, restartMs: again.ms, firstStartCpuMs: first.cpuMs, restartCpuMs: again.cpuMs };
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

function reportStartup(s: Startup): void {
  const base = s.cli[0].medianMs;
  console.log('\nStart-up (embedded PGlite; wall time, median of the runs):\n');
  console.log('| what | median ms | min ms | over node -e 0 | |');
  console.log('|---|---|---|---|---|');
  for (const c of s.cli) console.log(`| ${c.name} | ${fmt(c.medianMs)} | ${fmt(c.minMs)} | +${fmt(c.medianMs - base)} ms | |`);
  console.log(`| server first start to ready (new data directory) | ${fmt(s.firstStartMs)} | | | CPU ${fmt(s.firstStartCpuMs)} ms`);
  console.log(`| server restart to ready | ${fmt(s.restartMs)} | | | CPU ${fmt(s.restartCpuMs)} ms`);
}

function start(cmd: string, args: string[], env: Record<string, string>): ChildProcess {
  const child = spawn(cmd, args, { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  return child;
}

function firstLine(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (c) => {
      out += c;
      if (out.includes('\n')) resolve(out.split('\n')[0]);
    });
    child.on('exit', (code) => reject(new Error(`exited with ${code} before printing its address`)));
  });
}

function exited(child: ChildProcess): Promise<void> {
  return child.exitCode !== null ? Promise.resolve() : new Promise((resolve) => child.on('exit', () => resolve()));
}

/** Until `url` answers 2xx (a fetch that fails: not listening yet). */
const waitFor = (url: string, timeoutMs = 60_000) =>
  until(
    () =>
      fetch(url).then(
        (r) => r.ok,
        () => false,
      ),
    Boolean,
    { timeoutMs, what: url },
  );

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
    srv.on('error', reject);
  });
}

const BOUND_APP = 'mediaplane-bench-bound';

async function scratchDatabase(adminUrl: string): Promise<{ url: string; backendPids: (bound: boolean) => Promise<number[]>; drop: () => Promise<void> }> {
  const name = `mediaplane_bench_${process.pid}`;
  const sql = async (text: string) => {
    const c = new pg.Client({ connectionString: adminUrl });
    await c.connect();
    await c.query(text);
    await c.end();
  };
  await sql(`drop database if exists ${name} with (force)`);
  await sql(`create database ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const backendPids = async (bound: boolean) => {
    const c = new pg.Client({ connectionString: adminUrl });
    await c.connect();
    const { rows } = await c.query(`select pid from pg_stat_activity where datname = $1 and (application_name = $2) = $3`, [name, BOUND_APP, bound]);
    await c.end();
    return rows.map((r) => r.pid as number);
  };
  return { url: url.toString(), backendPids, drop: () => sql(`drop database if exists ${name} with (force)`) };
}
