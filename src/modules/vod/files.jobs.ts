import type { WorkerStarter } from '../../context.ts';
import { importFileJob, runImport } from './files.import.ts';
import { expireUpload, expireUploadJob } from './files.service.ts';

/** Imports fetched at once per worker process: they wait on the network, not on the CPU. */
const IMPORT_CONCURRENCY = 4;

/** The abandoned-upload sweeper (each upload's expiry job runs at its deadline) and the imports from URLs. */
export const startFileWorkers: WorkerStarter = async (ctx) => {
  await ctx.jobs.work(expireUploadJob, (data) => expireUpload(ctx, data));
  const stopping = new AbortController();
  const running = new Set<Promise<void>>();
  await ctx.jobs.work(
    importFileJob,
    (data, job) => {
      const run = runImport(ctx, data, job.retryCount, stopping.signal);
      running.add(run);
      return run.finally(() => running.delete(run));
    },
    { concurrency: IMPORT_CONCURRENCY },
  );
  // Before the job queue closes: a running import stops, and its job runs again after the restart.
  return async () => {
    stopping.abort();
    await Promise.allSettled([...running]);
  };
};
