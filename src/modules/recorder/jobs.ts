import { defineJob } from '../../jobs/queue.ts';

/** Durable jobs of the Recorder; the handlers are in worker.ts. */
export interface ArchiveJob {
  tenantId: string;
  recordingId: string;
}
export interface OutputJob {
  tenantId: string;
  recordingId: string;
  outputId: string;
}

/** Copies a recorded range to its archive prefix (no encode: seconds even for hours). */
export const archiveJob = defineJob<ArchiveJob>('recorder.archive', { retryLimit: 3, retryDelaySeconds: 5, expireInSeconds: 3600 });
/** Transcodes a recorded range with a preset (the VOD pipeline). */
export const outputJob = defineJob<OutputJob>('recorder.output', { retryLimit: 2, retryDelaySeconds: 5, expireInSeconds: 6 * 3600 });
