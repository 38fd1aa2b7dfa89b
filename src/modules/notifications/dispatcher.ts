import type { WebhookConfig } from '../../config.ts';
import type { PlatformContext } from '../../context.ts';
import type { Db } from '../../db/client.ts';
import type { Metrics } from '../../platform/metrics.ts';
import { newId } from '../../platform/ids.ts';
import type { Logger } from '../../platform/logger.ts';
import { sendEvent } from './delivery.ts';
import * as store from './deliveryStore.ts';
import { EVENTS_CHANNEL, NOTIFY_INTERVAL_MS } from '../../platform/events.ts';
import { retriesExhausted, retryDelayMs } from './retry.ts';
import { signingSecrets } from './secrets.ts';
import type { SigningSecrets } from './signing.ts';
import type { SendAttempt } from './tables.ts';

type Success = { seq: number; attempt: SendAttempt };
import { listenForCommits } from '../../platform/wakeup.ts';

const FAN_OUT_BATCH = 1000;
const DELIVERY_BATCH = 100;
/** A webhook with a steady stream gives its slot back this often, so that waiting webhooks get their turn. */
const MAX_DRAIN_MS = 10_000;
const SECRET_CACHE_MAX = 10_000;
/** A rotation notifies every dispatcher; this bounds how long a missed notification (a reconnect) goes unnoticed. */
const SECRET_TTL_MS = 60_000;
/** While sending, the lease is renewed this often (it lasts at least 4 timeouts, see `leaseMs`). */
const RENEW_AFTER_MS = 1000;
/** A slow receiver's successes are recorded at least this often (else at the end of each batch). */
const RECORD_EVERY_MS = 1000;
/** Successes recorded within this many milliseconds of each other, across webhooks, share one statement. */
const RECORD_GATHER_MS = 5;
/** After any activity the dispatcher polls this often for a while: writers notify at most every NOTIFY_INTERVAL_MS. */
const HOT_POLL_MS = 50;
const HOT_PERIOD_MS = NOTIFY_INTERVAL_MS * 5;

/**
 * Turns outbox events into deliveries and sends them: in parallel across webhooks (up to `concurrency` per process),
 * in order per webhook (one process holds a webhook's lease while it sends). Woken by LISTEN/NOTIFY when events
 * commit, and by a poll for retries that come due and in case a notification was missed.
 */
class WebhookDispatcher {
  private readonly owner = newId();
  private readonly inFlight = new Map<string, Promise<void>>();
  /** Per tenant, until when they may be used: dropped on a rotation's notification, else re-read every SECRET_TTL_MS. */
  private readonly secrets = new Map<string, { secrets: SigningSecrets; until: number }>();
  private readonly successes: SuccessRecorder;
  private readonly leaseMs: number;
  private running = false;
  private pending = false;
  private hotUntil = 0;
  /** The earliest retry this process scheduled: it wakes up for it rather than at the next poll. */
  private nextRetry = Infinity;
  private wake: (() => void) | undefined;
  private loop: Promise<void> | undefined;
  private unlisten: (() => Promise<void>) | undefined;

  constructor(
    private readonly db: Db,
    private readonly cfg: WebhookConfig,
    private readonly log: Logger,
    private readonly metrics?: Metrics,
  ) {
    // Renewed every RENEW_AFTER_MS while sending, so one attempt (at most one timeout) never outlives it.
    this.leaseMs = Math.max(10_000, cfg.timeoutMs * 4);
    this.successes = new SuccessRecorder(db);
  }

  async start(ctx: PlatformContext): Promise<void> {
    if (ctx.database.kind === 'pglite') await store.releaseAllLeases(this.db);
    this.running = true;
    this.unlisten = await listenForCommits(ctx, EVENTS_CHANNEL, (payload) => {
      // A rotation, or a reconnection after which one may have been missed: sign with what the database holds now.
      if (payload !== '') this.secrets.clear();
      this.poke();
    });
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.poke();
    await this.loop;
    await Promise.allSettled(this.inFlight.values());
    await store.releaseLeases(this.db, this.owner).catch(() => {});
    await this.unlisten?.();
  }

  /** Asks for a look at the outbox and the webhooks now. */
  poke(): void {
    this.pending = true;
    this.hotUntil = Date.now() + HOT_PERIOD_MS;
    this.wake?.();
  }

  private async run(): Promise<void> {
    while (this.running) {
      this.pending = false;
      try {
        await this.tick();
      } catch (e) {
        if (this.running) this.log.error({ err: e }, 'webhook dispatcher pass failed');
      }
      if (!this.pending && this.running) {
        await new Promise<void>((resolve) => {
          const now = Date.now();
          const poll = now < this.hotUntil ? HOT_POLL_MS : this.cfg.pollMs;
          const timer = setTimeout(resolve, Math.max(0, Math.min(poll, this.nextRetry - now)));
          this.wake = () => (clearTimeout(timer), resolve());
        });
        this.wake = undefined;
      }
    }
  }

  private async tick(): Promise<void> {
    if (this.nextRetry <= Date.now()) this.nextRetry = Infinity;
    let picked: number;
    do {
      picked = await store.fanOut(this.db, FAN_OUT_BATCH);
      if (picked > 0) this.hotUntil = Date.now() + HOT_PERIOD_MS;
    } while (picked === FAN_OUT_BATCH && this.running);
    const free = this.cfg.concurrency - this.inFlight.size;
    if (free <= 0 || !this.running) return;
    const claimed = await store.claimWebhooks(this.db, this.owner, free, DELIVERY_BATCH, this.leaseMs, [...this.inFlight.keys()]);
    for (const { webhook, deliveries } of claimed) {
      const work = this.drain(webhook, deliveries)
        .catch((err) => this.log.error({ err, webhookId: webhook.id }, 'delivering to a webhook failed'))
        .finally(() => {
          // A full dispatcher claimed nothing on its last look: look again now that a slot is free.
          const wasFull = this.inFlight.size >= this.cfg.concurrency;
          this.inFlight.delete(webhook.id);
          if (wasFull) this.poke();
        });
      this.inFlight.set(webhook.id, work);
    }
  }

  /**
   * Sends a leased webhook's deliveries in order until none is left, one fails, or its turn is over. Successes are
   * recorded together (at the end, or every RECORD_EVERY_MS for a slow receiver). The lease is renewed as it goes,
   * which also notices a webhook disabled, deleted or given a new URL meanwhile.
   */
  private async drain(leased: store.LeasedWebhook, first: store.PendingDelivery[]): Promise<void> {
    const started = Date.now();
    let w: store.LeasedWebhook | undefined = leased;
    let renewed = started;
    let recorded = started;
    let batch = first;
    const done: Success[] = [];
    // Until successes are recorded their deliveries look pending: the webhook is not given back before that.
    const record = async () => {
      await this.successes.record(done.splice(0));
      recorded = Date.now();
    };
    try {
      for (;;) {
        for (const d of batch) {
          if (!this.running) return;
          if (Date.now() - renewed > RENEW_AFTER_MS) {
            renewed = Date.now();
            w = await store.renewLease(this.db, leased.id, this.owner, this.leaseMs);
            if (!w) return;
          }
          const secrets = await this.secretsOf(w.tenantId);
          const { ok, attempt } = await sendEvent(w.url, secrets, d.event, this.cfg, {
            log: this.log.child({ webhookId: leased.id, tenantId: leased.tenantId }),
            metrics: this.metrics,
          });
          if (ok) {
            if (leased.failingSince) await store.clearFailures(this.db, leased);
            done.push({ seq: d.seq, attempt });
            if (Date.now() - recorded > RECORD_EVERY_MS) await record();
            continue;
          }
          await record();
          await this.recordFailure(leased, d.seq, attempt);
          return;
        }
        // A short batch emptied the queue; anything newer comes with the next fan-out, which claims the webhook again.
        if (batch.length < DELIVERY_BATCH) return;
        await record();
        if (Date.now() - started > MAX_DRAIN_MS) return this.poke();
        batch = await store.nextDeliveries(this.db, leased.id, batch.at(-1)!.seq, DELIVERY_BATCH);
      }
    } finally {
      await record();
    }
  }

  private async recordFailure(w: store.LeasedWebhook, seq: number, attempt: SendAttempt): Promise<void> {
    const now = new Date(attempt.time);
    const failingSince = w.failingSince ?? now;
    if (retriesExhausted(failingSince, now, this.cfg)) {
      await store.recordFailure(this.db, w, seq, attempt, { exhausted: true, failingSince });
      return;
    }
    const retryAt = Date.now() + retryDelayMs(w.failureCount + 1, this.cfg);
    await store.recordFailure(this.db, w, seq, attempt, { exhausted: false, failingSince, retryAt: new Date(retryAt) });
    this.nextRetry = Math.min(this.nextRetry, retryAt);
  }

  private async secretsOf(tenantId: string): Promise<SigningSecrets> {
    const cached = this.secrets.get(tenantId);
    if (cached && cached.until > Date.now()) return cached.secrets;
    const secrets = await signingSecrets(this.db, tenantId);
    if (this.secrets.size >= SECRET_CACHE_MAX) this.secrets.clear();
    // An overlap that ends sooner than the TTL ends the cached pair with it.
    this.secrets.set(tenantId, { secrets, until: Math.min(Date.now() + SECRET_TTL_MS, secrets.previousExpiresAt?.getTime() ?? Infinity) });
    return secrets;
  }
}

/**
 * Records the successes of all webhooks of a process together: those that come within a few milliseconds of each
 * other share one statement. `record` resolves once its successes are written.
 */
class SuccessRecorder {
  private queue: Success[] = [];
  private waiting: { resolve: () => void; reject: (e: unknown) => void }[] = [];
  private timer: NodeJS.Timeout | undefined;
  private flushing = false;

  constructor(private readonly db: Db) {}

  record(successes: Success[]): Promise<void> {
    if (!successes.length) return Promise.resolve();
    this.queue.push(...successes);
    return new Promise((resolve, reject) => {
      this.waiting.push({ resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (!this.timer && !this.flushing) this.timer = setTimeout(() => void this.flush(), RECORD_GATHER_MS);
  }

  private async flush(): Promise<void> {
    this.timer = undefined;
    this.flushing = true;
    const [batch, waiting] = [this.queue, this.waiting];
    [this.queue, this.waiting] = [[], []];
    try {
      await store.recordSuccesses(this.db, batch);
      for (const w of waiting) w.resolve();
    } catch (e) {
      for (const w of waiting) w.reject(e);
    } finally {
      this.flushing = false;
      if (this.queue.length) this.schedule();
    }
  }
}

/** The worker starter (notifications manifest): runs the dispatcher until the platform closes. */
export async function startWebhookDispatcher(ctx: PlatformContext): Promise<() => Promise<void>> {
  const dispatcher = new WebhookDispatcher(ctx.db, ctx.config.webhooks, ctx.log, ctx.metrics);
  await dispatcher.start(ctx);
  return () => dispatcher.stop();
}
