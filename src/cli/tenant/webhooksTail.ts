import type { Client, ItemOf } from '@mediaplane/sdk';
import { setTimeout as sleep } from 'node:timers/promises';
import { CliError, printJson } from './output.ts';
import { tenantClient, type TenantOptions } from './session.ts';

export interface TailOptions extends TenantOptions {
  webhook?: string;
  count?: string;
  interval?: string;
}

type Delivery = ItemOf<'/notifications/v1/webhook-events'>;

/** One delivery attempt, as printed. */
export interface Attempt {
  time: string;
  eventId: string;
  type: string;
  webhookId: string;
  webhookName?: string;
  responseCode: number;
  status: string;
  responseContent: string;
}

/**
 * `mediaplane webhooks tail`: prints each delivery attempt as the platform makes it, read from the event log
 * (`GET /notifications/v1/webhook-events`, the deliveries with their attempts) every `--interval` ms. Attempts made
 * before it started are not printed. With --json it collects them and prints one JSON array when it stops: after
 * `--count` attempts, or on Ctrl-C.
 */
export async function webhooksTail(opts: TailOptions): Promise<void> {
  const client = tenantClient(opts);
  const count = opts.count === undefined ? Infinity : Number(opts.count);
  const interval = opts.interval === undefined ? 1000 : Number(opts.interval);
  if (!(count > 0 && (Number.isInteger(count) || count === Infinity))) throw new CliError('--count takes a whole number above 0');
  if (!(Number.isInteger(interval) && interval >= 100)) throw new CliError('--interval takes a number of milliseconds, 100 or more');

  const names = new Map<string, string>();
  for await (const w of client.paginate('/notifications/v1/webhook')) names.set(w.id, w.name);
  if (opts.webhook && !names.has(opts.webhook)) throw new CliError(`No webhook ${opts.webhook} in this tenant.`);
  if (names.size === 0) process.stderr.write('This tenant has no webhook yet: deliveries appear once one is created (POST /notifications/v1/webhook).\n');

  // What the log holds already is not printed: the latest page marks its deliveries seen, and older attempts (of a
  // delivery retried later) are left out by their time.
  const seen = new Map<string, number>();
  const before = await recentAttempts(client, opts.webhook, seen, 1);
  const since = before.at(-1)?.time ?? '';
  const printed: Attempt[] = [];
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  if (!opts.json) process.stderr.write(`Waiting for deliveries${opts.webhook ? ` to webhook ${opts.webhook}` : ''} (Ctrl-C to stop)...\n`);
  try {
    while (!stop.signal.aborted && printed.length < count) {
      for (const attempt of await recentAttempts(client, opts.webhook, seen)) {
        if (attempt.time < since) continue;
        attempt.webhookName = names.get(attempt.webhookId);
        printed.push(attempt);
        if (!opts.json) {
          const to = attempt.webhookName ?? attempt.webhookId;
          console.log(`${attempt.time}  ${attempt.type}  ${attempt.eventId}  → ${to}  ${attempt.responseCode || 'no answer'}  ${attempt.status}`);
        }
        if (printed.length >= count) break;
      }
      await sleep(interval, undefined, { signal: stop.signal }).catch(() => {});
    }
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
  if (opts.json) printJson(printed.slice(0, count));
}

/**
 * The attempts not in `seen` yet (deliveries keyed by webhook and event, with how many of their attempts were seen),
 * oldest first; marks them seen. Reads the most recently attempted deliveries, page after page while every one on a
 * page has something new.
 */
async function recentAttempts(client: Client, webhookId: string | undefined, seen: Map<string, number>, maxPages = Infinity): Promise<Attempt[]> {
  const fresh: Attempt[] = [];
  const query = { sort: 'LastSendAttempt', desc: true, statuses: ['Delivered', 'Retrying', 'Failed'], limit: 100, ...(webhookId ? { webhookId } : {}) };
  for (let page = 1; ; page++) {
    const res = await client.request('GET', '/notifications/v1/webhook-events', undefined, { query: { ...query, page } });
    let allNew = res.items.length > 0;
    for (const d of res.items) {
      const key = `${d.webhookId}/${d.id}`;
      const known = seen.get(key) ?? 0;
      if (d.sendAttempts.length <= known) allNew = false;
      for (const a of d.sendAttempts.slice(known)) fresh.push(attemptOf(d, a));
      seen.set(key, Math.max(known, d.sendAttempts.length));
    }
    if (!allNew || !res.hasMore || page >= maxPages) break;
  }
  return fresh.sort((a, b) => a.time.localeCompare(b.time));
}

function attemptOf(d: Delivery, a: Delivery['sendAttempts'][number]): Attempt {
  return {
    time: a.time,
    eventId: d.id,
    type: d.type,
    webhookId: d.webhookId,
    responseCode: a.responseCode,
    status: d.status,
    responseContent: a.responseContent,
  };
}
