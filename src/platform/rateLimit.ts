import type { FastifyInstance, FastifyRequest } from 'fastify';
import rateLimit from '@fastify/rate-limit';
import { sql } from 'drizzle-orm';
import type { Db } from '../db/client.ts';
import { rateLimitCounts } from '../db/rateLimits.ts';
import { ApiError } from './errors.ts';

export interface RateLimitOptions {
  /** Requests per tenant per window; 0 turns rate limiting off. */
  max: number;
  windowMs: number;
  /** Counts shared by every process on this database (PostgreSQL); undefined counts in this process only. */
  shared?: Db;
}

type IncrCallback = (err: Error | null, result: { current: number; ttl: number }) => void;

interface Count {
  window: number;
  /** This process's requests not yet added to the shared row. */
  unsent: number;
  /** The shared row's count when this process last synced (its own requests sent so far included). */
  shared: number;
}

/** How often a process adds its requests to the shared counts and reads everyone else's. */
const SYNC_MS = 1000;

/**
 * A `@fastify/rate-limit` store shared through PostgreSQL that keeps the database off the request path: each request
 * counts in memory, and once a second the process adds its counts to the shared rows and reads back every process's
 * total. A tenant spread over n processes can thus exceed its limit by at most what n processes take in one second;
 * one process alone is exact. Windows are fixed and numbered from the epoch, so `Retry-After` is the same everywhere.
 */
function sharedStore(db: Db, instances: Set<{ close(): Promise<void> }>) {
  return class SharedRateLimitStore {
    private readonly counts = new Map<string, Count>();
    private syncing: Promise<void> | undefined;
    private readonly timer: NodeJS.Timeout;
    private windowMs = 60_000;

    constructor() {
      this.timer = setInterval(() => void this.sync(), SYNC_MS);
      this.timer.unref();
      instances.add(this);
    }

    incr(key: string, cb: IncrCallback, timeWindow: number): void {
      this.windowMs = timeWindow;
      const now = Date.now();
      const window = Math.floor(now / timeWindow);
      let c = this.counts.get(key);
      if (!c || c.window !== window) this.counts.set(key, (c = { window, unsent: 0, shared: 0 }));
      c.unsent += 1;
      cb(null, { current: c.shared + c.unsent, ttl: (window + 1) * timeWindow - now });
    }

    child(): this {
      return this;
    }

    /** Adds this process's counts to the shared rows and takes their totals back; drops rows of past windows. */
    sync(): Promise<void> {
      this.syncing ??= this.syncOnce().finally(() => (this.syncing = undefined));
      return this.syncing;
    }

    close(): Promise<void> {
      clearInterval(this.timer);
      return this.sync();
    }

    private async syncOnce(): Promise<void> {
      const current = Math.floor(Date.now() / this.windowMs);
      const sending: { key: string; window: number; count: number }[] = [];
      for (const [key, c] of this.counts) {
        if (c.window < current) this.counts.delete(key);
        else if (c.unsent) sending.push({ key, window: c.window, count: c.unsent });
      }
      if (!sending.length) return;
      for (const s of sending) this.counts.get(s.key)!.unsent -= s.count;
      try {
        const result = await db.execute(sql`
          with added as (
            insert into ${rateLimitCounts} (key, "window", count)
            select key, "window", count from jsonb_to_recordset(${JSON.stringify(sending)}::jsonb) as v(key text, "window" bigint, count int)
            on conflict (key, "window") do update set count = ${rateLimitCounts}.count + excluded.count
            returning key, "window", count
          ), dropped as (
            delete from ${rateLimitCounts} where "window" < ${current - 1}
          )
          select key, "window"::float8 as "window", count from added`);
        for (const r of (result as unknown as { rows: { key: string; window: number; count: number }[] }).rows) {
          const c = this.counts.get(r.key);
          if (c && c.window === Number(r.window)) c.shared = r.count;
        }
      } catch {
        // The database is away: give the counts back to the next sync; meanwhile each process limits on its own.
        for (const s of sending) {
          const c = this.counts.get(s.key);
          if (c && c.window === s.window) c.unsent += s.count;
        }
      }
    }
  };
}

/**
 * Limits each tenant's requests to its operations (after authentication, keyed by tenant), answering `429
 * rate_limited` in the one error shape with `Retry-After`. Operator routes, health, and presigned media and part
 * URLs are not counted. Register before the routes it covers.
 */
export async function registerRateLimit(app: FastifyInstance, opts: RateLimitOptions): Promise<void> {
  if (opts.max === 0) return;
  const instances = new Set<{ close(): Promise<void> }>();
  const store = opts.shared ? sharedStore(opts.shared, instances) : undefined;
  // The last counts go to the database before it closes.
  app.addHook('onClose', async () => void (await Promise.all([...instances].map((i) => i.close()))));
  await app.register(rateLimit, {
    global: true,
    max: opts.max,
    timeWindow: opts.windowMs,
    // Auth (an onRequest hook of the whole app) has run when this route-level hook does.
    hook: 'onRequest',
    keyGenerator: (req: FastifyRequest) => req.principal?.tenantId ?? '',
    allowList: (req: FastifyRequest) => !req.principal,
    ...(store ? { store } : {}),
    errorResponseBuilder: (_req, ctx) =>
      new ApiError(429, 'rate_limited', `More than ${ctx.max} requests in ${opts.windowMs / 1000} s for this tenant; retry in ${ctx.after}`),
  });
}

/**
 * The `config.rateLimit` of a public route (no API key, so no principal to key on): `max` requests per minute per
 * `keyOf(request)`, counted in the same store as the tenants' operations (shared on PostgreSQL), under a key of its
 * own. Has effect only when rate limiting is on (`MEDIAPLANE_RATE_LIMIT_PER_MINUTE` not 0).
 */
export const publicRouteLimit = (max: number, keyOf: (req: FastifyRequest) => string) =>
  max === 0
    ? false
    : {
        max,
        timeWindow: 60_000,
        keyGenerator: keyOf,
        allowList: () => false,
        errorResponseBuilder: (_req: FastifyRequest, ctx: { max: number; after: string }) =>
          new ApiError(429, 'rate_limited', `More than ${ctx.max} requests in 60 s for this tenant; retry in ${ctx.after}`),
      };
