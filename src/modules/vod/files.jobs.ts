import type { WorkerStarter } from '../../context.ts';
import { expireUpload, expireUploadJob } from './files.service.ts';

/** The abandoned-upload sweeper: each upload's expiry job runs at its deadline. */
export const startFileWorkers: WorkerStarter = async (ctx) => {
  await ctx.jobs.work(expireUploadJob, (data) => expireUpload(ctx, data));
};
