import type { WebhookConfig } from '../../config.ts';

type RetrySettings = Pick<WebhookConfig, 'retryBaseMs' | 'retryMaxDelayMs' | 'retryPeriodSeconds'>;

/**
 * Wait after the `failures`-th failed attempt in a row: base·2^(failures-1), capped, then "equal jitter" (a random
 * point in the upper half) so that receivers coming back are not hit by every webhook at the same instant.
 */
export function retryDelayMs(failures: number, cfg: RetrySettings, random: () => number = Math.random): number {
  const exp = Math.min(cfg.retryMaxDelayMs, cfg.retryBaseMs * 2 ** Math.min(Math.max(failures, 1) - 1, 40));
  return Math.round(exp / 2 + (random() * exp) / 2);
}

/** True once a run of failures has lasted the whole retry period: the webhook turns `Unhealthy`. */
export const retriesExhausted = (failingSince: Date, now: Date, cfg: RetrySettings): boolean =>
  now.getTime() - failingSince.getTime() >= cfg.retryPeriodSeconds * 1000;
