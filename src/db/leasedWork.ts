import { mkdir, rm } from 'node:fs/promises';

/**
 * What a worker does while it holds a row's lease (lease.ts) for a long piece of work (an output's encode, a part of
 * it, the stitch of its parts): the lease is renewed as the work goes, the work is aborted when the process stops, the
 * row is given back when the work throws for the queue to retry, and the work's directory is removed whatever happens.
 * The caller claims the row before and says, through the functions below, which row and what giving it back means.
 */
export interface LeasedWork {
  /** The lease's length; it is renewed three times per length, so one renewal lost to a slow database does not lose it. */
  leaseMs: number;
  /** Renews the lease while this worker holds it; a failed renewal is left to the next one. */
  renew: () => PromiseLike<unknown>;
  /** Gives the row back when the work throws and the queue retries it (released, or handed to the owner it came from). */
  giveBack: () => PromiseLike<unknown>;
  /** The process is shutting down: the work is aborted, and what it throws then is retried, never a permanent failure. */
  stopping: AbortSignal;
  /** The work's own directory: emptied before the work, removed after it. */
  workDir: string;
  /** A failure no retry cures (`isPermanent`): `fail` records it, and the job ends without a retry. */
  isPermanent: (e: unknown) => boolean;
  fail: (e: Error) => Promise<void>;
}

/** Runs `work` under the lease of `w`; its signal aborts when the process stops or the work ends. */
export async function workUnderLease(w: LeasedWork, work: (signal: AbortSignal) => Promise<void>): Promise<void> {
  // Handed over by the queue as the process began to stop (its abort event has fired already): given back, not begun.
  if (w.stopping.aborted) {
    await Promise.resolve(w.giveBack()).catch(() => {});
    throw w.stopping.reason;
  }
  const heartbeat = setInterval(() => void Promise.resolve(w.renew()).catch(() => {}), w.leaseMs / 3);
  const abort = new AbortController();
  const stop = () => abort.abort();
  w.stopping.addEventListener('abort', stop);
  try {
    await rm(w.workDir, { recursive: true, force: true });
    await mkdir(w.workDir, { recursive: true });
    await work(abort.signal);
  } catch (e) {
    if (w.isPermanent(e) && !w.stopping.aborted) return w.fail(e as Error);
    await Promise.resolve(w.giveBack()).catch(() => {});
    throw e;
  } finally {
    w.stopping.removeEventListener('abort', stop);
    clearInterval(heartbeat);
    abort.abort();
    await rm(w.workDir, { recursive: true, force: true }).catch(() => {});
  }
}
