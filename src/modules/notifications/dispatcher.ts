import type { WebhookConfig } from '../../config.ts';
import type { PlatformContext } from '../../context.ts';
import type { Db } from '../../db/client.ts';
import { newId } from '../../platform/ids.ts';
import { sendEvent } from './delivery.ts';
import * as store from './deliveryStore.ts';
import { EVENTS_CHANNEL } from './events.ts';
import { retriesExhausted, retryDelayMs } from './retry.ts';
import { signingSecret } from './secrets.ts';
import { listenForCommits } from './wakeup.ts';

const FAN_OUT_BATCH = 1000;
const DELIVERY_BATCH = 100;
/** A webhook with a steady stream gives its slot back this often, so that waiting webhooks get their turn. */
const MAX_DRAIN_MS = 10_000;
const SECRET_CACHE_MAX = 10_000;

/**
 * Turns outbox events into deliveries and sends them: in parallel across webhooks (up to `concurrency` per process),
 * in order per webhook (one process holds a webhook's lease while it sends). Woken by LISTEN/NOTIFY when events
 * commit, and by a poll for retries that come due and in case a notification was missed.
 */
export class WebhookDispatcher {
  private readonly owner = newId();
  private readonly inFlight = new Map<string, Promise<void>>();
  private readonly secrets = new Map<string, string>();
  private readonly leaseMs: number;
  private running = false;
  private pending = false;
  private wake: (() => void) | undefined;
  private loop: Promise<void> | undefined;
  private unlisten: (() => Promise<void>) | undefined;

  constructor(
    private readonly db: Db,
    private readonly cfg: WebhookConfig,
  ) {
    // Long enough for several attempts; renewed before each attempt that might outlive it.
    this.leaseMs = Math.max(10_000, cfg.timeoutMs * 4);
  }

  async start(ctx: PlatformContext): Promise<void> {
    if (ctx.database.kind === 'pglite') await store.releaseAllLeases(this.db);
    this.running = true;
    this.unlisten = await listenForCommits(ctx, EVENTS_CHANNEL, () => this.poke());
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.poke();
    await this.loop;
    await Promise.allSettled(this.inFlight.values());
    await this.unlisten?.();
  }

  /** Asks for a look at the outbox and the webhooks now. */
  poke(): void {
    this.pending = true;
    this.wake?.();
  }

  private async run(): Promise<void> {
    while (this.running) {
      this.pending = false;
      try {
        await this.tick();
      } catch (e) {
        if (this.running) console.error('[webhooks] dispatcher:', (e as Error).message);
      }
      if (!this.pending && this.running) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, this.cfg.pollMs);
          this.wake = () => (clearTimeout(timer), resolve());
        });
        this.wake = undefined;
      }
    }
  }

  private async tick(): Promise<void> {
    while ((await store.fanOut(this.db, FAN_OUT_BATCH)) === FAN_OUT_BATCH && this.running);
    const free = this.cfg.concurrency - this.inFlight.size;
    if (free <= 0 || !this.running) return;
    const ids = await store.claimWebhooks(this.db, this.owner, free, this.leaseMs, [...this.inFlight.keys()]);
    for (const id of ids) {
      const work = this.drain(id).finally(() => {
        this.inFlight.delete(id);
        this.poke();
      });
      this.inFlight.set(id, work);
    }
  }

  /** Sends a leased webhook's deliveries in order until none is left, one fails, or its turn is over. */
  private async drain(id: string): Promise<void> {
    const started = Date.now();
    try {
      let leaseEnd = Date.now() + this.leaseMs;
      let w = await store.renewLease(this.db, id, this.owner, this.leaseMs);
      while (w && this.running && Date.now() - started < MAX_DRAIN_MS) {
        const batch = await store.nextDeliveries(this.db, id, DELIVERY_BATCH);
        if (!batch.length) return;
        for (const d of batch) {
          if (!this.running) return;
          if (leaseEnd - Date.now() < this.cfg.timeoutMs + 5000) {
            leaseEnd = Date.now() + this.leaseMs;
            w = await store.renewLease(this.db, id, this.owner, this.leaseMs);
            if (!w) return;
          }
          const secret = await this.secret(w.tenantId);
          const { ok, attempt } = await sendEvent(w.url, secret, d.event, this.cfg);
          if (ok) {
            await store.recordSuccess(this.db, w, d.seq, attempt);
            continue;
          }
          const now = new Date(attempt.time);
          const failingSince = w.failingSince ?? now;
          await store.recordFailure(
            this.db,
            w,
            d.seq,
            attempt,
            retriesExhausted(failingSince, now, this.cfg)
              ? { exhausted: true, failingSince }
              : { exhausted: false, failingSince, retryAt: new Date(Date.now() + retryDelayMs(w.failureCount + 1, this.cfg)) },
          );
          return;
        }
        leaseEnd = Date.now() + this.leaseMs;
        w = await store.renewLease(this.db, id, this.owner, this.leaseMs);
      }
    } catch (e) {
      console.error(`[webhooks] delivering to webhook ${id}:`, (e as Error).message);
    } finally {
      await store.releaseLease(this.db, id, this.owner).catch(() => {});
    }
  }

  private async secret(tenantId: string): Promise<string> {
    let secret = this.secrets.get(tenantId);
    if (!secret) {
      secret = await signingSecret(this.db, tenantId);
      if (this.secrets.size >= SECRET_CACHE_MAX) this.secrets.clear();
      this.secrets.set(tenantId, secret);
    }
    return secret;
  }
}

/** The worker starter (src/server.ts WORKERS): runs the dispatcher until the platform closes. */
export async function startWebhookDispatcher(ctx: PlatformContext): Promise<() => Promise<void>> {
  const dispatcher = new WebhookDispatcher(ctx.db, ctx.config.webhooks);
  await dispatcher.start(ctx);
  return () => dispatcher.stop();
}
