/** Waits `ms`, or rejects with the signal's reason as soon as it is aborted. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Exponential backoff with jitter: about `base`, 2×, 4× ... up to `max`, each a random point in its upper half. */
export function backoff(attempt: number, base = 250, max = 10_000): number {
  const ceiling = Math.min(max, base * 2 ** attempt);
  return ceiling / 2 + Math.random() * (ceiling / 2);
}

/** A controller aborted when `parent` is (or already was). */
export function linkedController(parent?: AbortSignal): AbortController {
  const controller = new AbortController();
  if (parent?.aborted) controller.abort(parent.reason);
  else parent?.addEventListener('abort', () => controller.abort(parent.reason), { once: true });
  return controller;
}
