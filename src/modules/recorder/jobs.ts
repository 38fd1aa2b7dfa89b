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

/**
 * Notified (`pg_notify`) on commit of a change that the Recorder's schedule should see now (a recording created, its
 * source or archive changed): its worker wakes at once rather than at its next pass.
 */
export const RECORDER_CHANNEL = 'mediaplane_recorder';
/**
 * The worker that makes an archive due copies it in that same pass; the queued job is the fallback for a worker that
 * died before it finished (or failed), so it waits this long before it runs (a no-op once the archive is made).
 */
export const ARCHIVE_FALLBACK_S = 60;

/** Copies a recorded range to its archive prefix (no encode: seconds even for hours). */
export const archiveJob = defineJob<ArchiveJob>('recorder.archive', { retryLimit: 3, retryDelaySeconds: 5, expireInSeconds: 3600 });
/** Transcodes a recorded range with a preset (the VOD pipeline). */
export const outputJob = defineJob<OutputJob>('recorder.output', { retryLimit: 2, retryDelaySeconds: 5, expireInSeconds: 6 * 3600 });
