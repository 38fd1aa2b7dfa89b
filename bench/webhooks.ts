/**
 * Webhook delivery: N events (default 10,000) over R tenants, each with one webhook to its own local receiver
 * (default 10). Latency is from the commit of the event's transaction to the receiver sending its 200; both clocks
 * are this process's. Phases:
 *   steady  events committed at a fixed rate (--rate, default 500/s): latency under a normal load
 *   burst   events committed as fast as 16 connections can: delivery throughput
 * Baseline, same receivers: the same number of signed POSTs sent directly (one sequential sender per receiver).
 *
 *   npm run bench -- webhooks [--db postgres|pglite] [--events 10000] [--receivers 10] [--rate 500]
 * PostgreSQL: BENCH_DATABASE_URL or TEST_DATABASE_URL (a fresh database is created on that server and dropped).
 */
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { loadConfig } from '../src/config.ts';
import { createTenant } from '../src/modules/admin/service.ts';
import { recordEvent } from '../src/platform/events.ts';
import { createWebhook, getSignatureSecret } from '../src/modules/notifications/service.ts';
import { signatureHeaders } from '../src/modules/notifications/signing.ts';
import { openPlatform, type Platform } from '../src/server.ts';

interface Receiver {
  url: string;
  /** event id → time of the 200 (performance.now()). */
  answered: Map<string, number>;
  duplicates: number;
  close(): Promise<void>;
}

async function startReceiver(): Promise<Receiver> {
  const answered = new Map<string, number>();
  const self = { answered, duplicates: 0 } as Receiver;
  const server = http.createServer({ keepAlive: true }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const id = (req.headers['webhook-id'] as string) ?? JSON.parse(Buffer.concat(chunks).toString()).id;
      res.writeHead(200).end();
      if (answered.has(id)) self.duplicates++;
      else answered.set(id, performance.now());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  self.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  self.close = () => new Promise((resolve) => (server.closeAllConnections(), server.close(() => resolve())));
  return self;
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

interface PhaseResult {
  phase: string;
  events: number;
  /** Events committed per second by the producer (the offered load). */
  committedPerSecond?: number;
  lost: number;
  duplicates: number;
  seconds: number;
  perSecond: number;
  p50: number;
  p99: number;
  max: number;
}

function summarize(phase: string, committed: Map<string, number>, receivers: Receiver[], started: number): PhaseResult {
  const latencies: number[] = [];
  let lost = 0;
  let last = started;
  const answeredAt = new Map<string, number>();
  for (const r of receivers) for (const [id, at] of r.answered) answeredAt.set(id, at);
  for (const [id, at] of committed) {
    const done = answeredAt.get(id);
    if (done === undefined) lost++;
    else {
      latencies.push(done - at);
      last = Math.max(last, done);
    }
  }
  latencies.sort((a, b) => a - b);
  const seconds = (last - started) / 1000;
  return {
    phase,
    events: committed.size,
    lost,
    duplicates: receivers.reduce((n, r) => n + r.duplicates, 0),
    seconds: round(seconds),
    perSecond: Math.round(latencies.length / seconds),
    p50: round(percentile(latencies, 50)),
    p99: round(percentile(latencies, 99)),
    max: round(latencies.at(-1) ?? NaN),
  };
}

const round = (n: number) => Math.round(n * 10) / 10;

async function waitAll(receivers: Receiver[], ids: Iterable<string>, timeoutMs: number): Promise<void> {
  const wanted = [...ids];
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (wanted.every((id) => receivers.some((r) => r.answered.has(id)))) return;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Commits `n` events, one per transaction, on `concurrency` connections, at `rate` per second (0: as fast as possible). */
async function produce(platform: Platform, tenants: string[], n: number, rate: number, concurrency: number): Promise<Map<string, number>> {
  const committed = new Map<string, number>();
  const start = performance.now();
  let next = 0;
  const worker = async () => {
    for (;;) {
      const i = next++;
      if (i >= n) return;
      if (rate > 0) {
        const due = start + (i * 1000) / rate;
        const wait = due - performance.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      }
      const tenantId = tenants[i % tenants.length];
      const id = await platform.ctx.db.transaction((tx) => recordEvent(tx, tenantId, 'vod.asset.updated', { id: `asset-${i}`, seq: i }));
      committed.set(id, performance.now());
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return committed;
}

/** The floor: the same signed POSTs sent straight to the receivers, one sequential sender per receiver. */
async function baseline(receivers: Receiver[], secret: string, n: number): Promise<PhaseResult> {
  const agent = new http.Agent({ keepAlive: true });
  const sent = new Map<string, number>();
  for (const r of receivers) r.duplicates = 0;
  const started = performance.now();
  const perReceiver = Math.ceil(n / receivers.length);
  await Promise.all(
    receivers.map(async (r, k) => {
      for (let i = 0; i < perReceiver; i++) {
        const id = `baseline-${k}-${i}`;
        const body = JSON.stringify({ id, type: 'vod.asset.updated', data: { id: `asset-${i}` } });
        const headers = { 'content-type': 'application/json', ...signatureHeaders(secret, id, body) };
        sent.set(id, performance.now());
        await new Promise<void>((resolve, reject) => {
          const req = http.request(r.url, { method: 'POST', agent, headers }, (res) => res.resume().on('end', resolve));
          req.on('error', reject);
          req.end(body);
        });
      }
    }),
  );
  agent.destroy();
  return summarize('baseline (direct POST)', sent, receivers, started);
}

async function storageFor(kind: 'pglite' | 'postgres') {
  const dataDir = mkdtempSync(join(tmpdir(), 'mediaplane-bench-'));
  if (kind === 'pglite') return { dataDir, databaseUrl: '', drop: async () => rmSync(dataDir, { recursive: true, force: true }) };
  const server = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
  if (!server) throw new Error('--db postgres needs BENCH_DATABASE_URL or TEST_DATABASE_URL');
  const name = `mediaplane_bench_${process.pid}`;
  const admin = new pg.Client({ connectionString: server });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(server);
  url.pathname = `/${name}`;
  return {
    dataDir,
    databaseUrl: url.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: server });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export async function run(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: { db: { type: 'string' }, events: { type: 'string' }, receivers: { type: 'string' }, rate: { type: 'string' } },
  });
  const kind = (values.db ?? (process.env.BENCH_DATABASE_URL || process.env.TEST_DATABASE_URL ? 'postgres' : 'pglite')) as 'pglite' | 'postgres';
  const n = Number(values.events ?? 10_000);
  const receiverCount = Number(values.receivers ?? 10);
  const rate = Number(values.rate ?? 500);

  const storage = await storageFor(kind);
  const receivers = await Promise.all(Array.from({ length: receiverCount }, startReceiver));
  const config = loadConfig({
    ...process.env,
    DATABASE_URL: storage.databaseUrl,
    MEDIAPLANE_DATA_DIR: storage.dataDir,
    MEDIAPLANE_ADMIN_TOKEN: 'bench',
    MEDIAPLANE_WEBHOOK_ALLOW_PRIVATE: 'true',
  });
  const platform = await openPlatform(config);
  try {
    const tenants: string[] = [];
    for (const [k, r] of receivers.entries()) {
      const t = await createTenant(platform.ctx.db, `bench-${process.pid}-${k}`);
      await createWebhook(
        platform.ctx.db,
        config.webhooks,
        t.id,
        { name: `bench ${k}`, url: r.url, eventTypes: ['vod.asset.updated'] },
        platform.ctx.catalogue.eventTypes,
      );
      tenants.push(t.id);
    }
    const { secret } = await getSignatureSecret(platform.ctx.db, tenants[0]);
    const results: PhaseResult[] = [await baseline(receivers, secret, n)];

    for (const [phase, phaseRate, concurrency] of [
      [`steady ${rate}/s`, rate, 8],
      ['burst', 0, 16],
    ] as const) {
      for (const r of receivers) r.duplicates = 0;
      const started = performance.now();
      const committed = await produce(platform, tenants, n, phaseRate, concurrency);
      const committedPerSecond = Math.round(n / ((performance.now() - started) / 1000));
      await waitAll(receivers, committed.keys(), 300_000);
      results.push({ ...summarize(phase, committed, receivers, started), committedPerSecond });
    }

    const base = results[0];
    console.log(`\nwebhooks on ${kind}: ${n} events to ${receiverCount} receivers (one tenant and webhook each), latency commit → receiver's 200\n`);
    // A steady phase delivers what it is offered, so only the burst's rate compares with the baseline's.
    console.log('| phase | events | committed/s | lost | duplicates | seconds | delivered/s | p50 ms | p99 ms | max ms | p50 vs baseline | rate vs baseline |');
    console.log('|---|---|---|---|---|---|---|---|---|---|---|---|');
    for (const r of results) {
      console.log(
        `| ${r.phase} | ${r.events} | ${r.committedPerSecond ?? '-'} | ${r.lost} | ${r.duplicates} | ${r.seconds} | ${r.perSecond} | ${r.p50} | ${r.p99} | ${r.max} | ×${round(r.p50 / base.p50)} | ${r.phase.startsWith('steady') ? '-' : `×${round(r.perSecond / base.perSecond)}`} |`,
      );
    }
    console.log(JSON.stringify({ bench: 'webhooks', db: kind, events: n, receivers: receiverCount, results }));
    if (results.some((r) => r.lost > 0)) process.exitCode = 1;
  } finally {
    await platform.close();
    await Promise.all(receivers.map((r) => r.close()));
    await storage.drop();
  }
}
