import type { WorkerStarter } from '../../context.ts';
import { defineJob } from '../../jobs/queue.ts';
import { runDetection, type DetectJob } from './detection.ts';
import { runPrepare, type PrepareJob } from './prepare.ts';

/** Encoding both variants: retried after a crash; the handler starts again from an empty work directory. */
export const prepareJob = defineJob<PrepareJob>('watermarking.prepare', { retryLimit: 2, retryDelaySeconds: 5, expireInSeconds: 6 * 3600 });
/** Reading a suspect file's marks. */
export const detectJob = defineJob<DetectJob>('watermarking.detect', { retryLimit: 2, retryDelaySeconds: 5, expireInSeconds: 3600 });

export const startWatermarkingWorkers: WorkerStarter = async (ctx) => {
  await ctx.jobs.work(prepareJob, (job) => runPrepare(ctx, job), { concurrency: ctx.config.transcodeConcurrency });
  await ctx.jobs.work(detectJob, (job) => runDetection(ctx, job), { concurrency: 2 });
};
