import type { PlatformContext, WorkerStarter } from '../../context.ts';
import type { JobSpec } from '../../jobs/queue.ts';
import { EXPIRE_UPLOAD_JOB, expireUpload, type ExpireUploadJob } from './files.service.ts';

const expireUploadSpec = (ctx: PlatformContext): JobSpec<ExpireUploadJob> => ({
  name: EXPIRE_UPLOAD_JOB,
  handler: (data) => expireUpload(ctx, data),
  retryLimit: 10,
  retryDelaySeconds: 60,
});

/** Creates the queues the files API sends to; every role calls it, because the API enqueues the expiry at start. */
export async function defineFileJobs(ctx: PlatformContext): Promise<void> {
  await ctx.jobs.define(expireUploadSpec(ctx));
}

/** The abandoned-upload sweeper: each upload's expiry job runs at its deadline. */
export const startFileWorkers: WorkerStarter = async (ctx) => {
  await ctx.jobs.work(expireUploadSpec(ctx));
};
