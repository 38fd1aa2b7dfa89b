import { timingSafeEqual, createHash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { bearerToken } from './auth.ts';
import { ApiError } from './errors.ts';

/** Connections of the database pool, when there is one (PostgreSQL). */
interface PoolUse {
  total: number;
  idle: number;
  waiting: number;
}

export interface MetricsSources {
  /** Jobs per queue and state, read when metrics are scraped. */
  jobCounts?: () => Promise<{ queue: string; state: string; count: number }[]>;
  pool?: () => PoolUse | undefined;
}

const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * The platform's Prometheus metrics, in a registry of its own (several platforms can run in one process: tests).
 * Counters on hot paths are cheap (a label child is looked up once per route, method and status); what needs the
 * database (jobs by state, pool use) is read only when `/metrics` is scraped.
 */
export class Metrics {
  readonly registry = new Registry();
  private sources: MetricsSources = {};

  readonly httpDuration = new Histogram({
    name: 'mediaplane_http_request_duration_seconds',
    help: 'HTTP requests by route pattern, method and status, with their latency',
    labelNames: ['method', 'route', 'status_code'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });

  /** Set by the live runner after each pass: the channels this process runs, by whether their encoder is connected. */
  private readonly liveChannels = new Gauge({
    name: 'mediaplane_live_channels',
    help: 'Live channels this process runs, by input: connected (the encoder is on air) or lost (the input-loss slate or colour plays)',
    labelNames: ['input'] as const,
    registers: [this.registry],
  });

  readonly jobsRun = new Counter({
    name: 'mediaplane_jobs_run_total',
    help: 'Jobs this process ran, by queue and outcome (completed, failed, or stopped with the process; a failed or stopped job may be retried)',
    labelNames: ['queue', 'outcome'] as const,
    registers: [this.registry],
  });

  readonly transcodeSeconds = new Histogram({
    name: 'mediaplane_transcode_seconds',
    help: 'Wall time of finished transcodes (one output), by preset',
    labelNames: ['preset'] as const,
    buckets: [1, 2, 5, 10, 30, 60, 120, 300, 600, 1800, 3600],
    registers: [this.registry],
  });

  readonly transcodeSpeed = new Histogram({
    name: 'mediaplane_transcode_speed_ratio',
    help: 'Seconds of media transcoded per second of wall time (1 is real time), by preset',
    labelNames: ['preset'] as const,
    buckets: [0.25, 0.5, 1, 2, 4, 8, 16, 32, 64],
    registers: [this.registry],
  });

  readonly uploadBytes = new Counter({
    name: 'mediaplane_upload_bytes_total',
    help: 'Bytes of file uploads completed',
    registers: [this.registry],
  });

  readonly webhookDeliveries = new Counter({
    name: 'mediaplane_webhook_deliveries_total',
    help: 'Webhook delivery attempts, by outcome (delivered: a 200 in time; failed: anything else)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  readonly webhookLag = new Histogram({
    name: 'mediaplane_webhook_delivery_lag_seconds',
    help: 'Time from an event to its successful delivery (retries included)',
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 3600, 86400],
    registers: [this.registry],
  });

  private readonly httpChildren = new Map<string, { observe(v: number): void }>();

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: 'mediaplane_' });
    // prom-client calls collect() with its own `this`: the gauge reads this registry's sources through `self`.
    // eslint-disable-next-line @typescript-eslint/no-this-alias
    const self = this;
    new Gauge({
      name: 'mediaplane_jobs',
      help: 'Jobs in the queue, by queue and state (created, retry, active, completed, cancelled, failed)',
      labelNames: ['queue', 'state'] as const,
      registers: [this.registry],
      async collect() {
        this.reset();
        for (const r of (await self.sources.jobCounts?.()) ?? []) this.set({ queue: r.queue, state: r.state }, r.count);
      },
    });
    new Gauge({
      name: 'mediaplane_db_pool_connections',
      help: 'Database pool connections, by state (total, idle, waiting: requests queued for a connection)',
      labelNames: ['state'] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        const use = self.sources.pool?.();
        if (!use) return;
        this.set({ state: 'total' }, use.total);
        this.set({ state: 'idle' }, use.idle);
        this.set({ state: 'waiting' }, use.waiting);
      },
    });
  }

  /** What is read at scrape time; given once the database and queue are open. */
  readFrom(sources: MetricsSources): void {
    this.sources = sources;
  }

  setLiveChannels(connected: number, lost: number): void {
    this.liveChannels.set({ input: 'connected' }, connected);
    this.liveChannels.set({ input: 'lost' }, lost);
  }

  /** One finished HTTP request; `route` is the route's pattern (`/vod/v1/assets/:id`), never the raw URL. */
  observeHttp(method: string, route: string, status: number, seconds: number): void {
    const key = `${method} ${route} ${status}`;
    let child = this.httpChildren.get(key);
    if (!child) {
      child = this.httpDuration.labels(method, route, String(status));
      this.httpChildren.set(key, child);
    }
    child.observe(seconds);
  }
}

const digest = (s: string) => createHash('sha256').update(s).digest();

/**
 * `GET /metrics` in the Prometheus text format, for the operator: `Authorization: Bearer` with the admin token or
 * MEDIAPLANE_METRICS_TOKEN (so that a scraper need not hold the admin token). Every request is measured by route.
 */
export function registerMetrics(app: FastifyInstance, metrics: Metrics, tokens: { adminToken: string; metricsToken?: string }): void {
  const accepted = [tokens.adminToken, tokens.metricsToken].filter((t): t is string => !!t).map(digest);
  app.addHook('onResponse', (request, reply, done) => {
    // Requests no route matched share one label: raw URLs would let any client grow the series without bound.
    const route = request.is404 ? 'unmatched' : (request.routeOptions.url ?? 'unmatched');
    metrics.observeHttp(request.method, route, reply.statusCode, reply.elapsedTime / 1000);
    done();
  });
  app.get('/metrics', { schema: { hide: true } }, async (request, reply) => {
    const token = bearerToken(request.headers.authorization);
    if (!token) throw new ApiError(401, 'missing_credentials', 'Send Authorization: Bearer <admin or metrics token>');
    const given = digest(token);
    if (!accepted.some((a) => timingSafeEqual(a, given)))
      throw new ApiError(401, 'invalid_metrics_token', 'The token is neither the admin token nor MEDIAPLANE_METRICS_TOKEN');
    const body = await metrics.registry.metrics();
    return reply.header('content-type', metrics.registry.contentType).header('cache-control', 'no-store').send(body);
  });
}
