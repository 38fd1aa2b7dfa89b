export interface UntilOptions {
  /** How long to keep asking before failing. Not a timing threshold: choose it for a loaded machine, not a fast one. */
  timeoutMs?: number;
  /** The pause between two calls of `fn`. */
  everyMs?: number;
  /** What is awaited, for the failure message (a function: read when the wait fails). */
  what?: string | (() => string);
}

/** A waiting time for a child process to start and answer: a loaded CI machine takes tens of seconds. */
export const PROCESS_START_TIMEOUT_MS = 120_000;

/**
 * Calls `fn` until `predicate` holds for its value and returns that value; fails after `timeoutMs` with the last value
 * seen. `fn` throwing fails at once: a caller for whom an error means "not yet" (a port not listening) catches it.
 */
export async function until<T>(
  fn: () => T | Promise<T>,
  predicate: (value: T) => boolean = Boolean,
  { timeoutMs = 10_000, everyMs = 100, what }: UntilOptions = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await fn();
    if (predicate(value)) return value;
    const left = deadline - Date.now();
    if (left <= 0) {
      const awaited = typeof what === 'function' ? what() : what;
      throw new Error(`timed out after ${timeoutMs} ms${awaited ? ` waiting for ${awaited}` : ''}; last value: ${describe(value)}`);
    }
    await new Promise((r) => setTimeout(r, Math.min(everyMs, left)));
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function describe(value: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return text.length > 2000 ? `${text.slice(0, 2000)}…` : text;
}
