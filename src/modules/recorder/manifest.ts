import type { PlatformModule } from '../../platform/module.ts';
import { recordingPlayables } from './playable.ts';
import { registerRecordingDelivery } from './delivery.ts';
import { RECORDER_EVENT_TYPES } from './eventTypes.ts';
import { archiveJob, outputJob } from './jobs.ts';
import { recordingRoutes } from './routes.ts';
import { startRecorderWorkers } from './worker.ts';

/**
 * The Recorder: `/cvr/v1/recordings`, ranges of a live channel's timeline copied into recordings with catch-up,
 * archives and transcoded outputs, served under `/media/recordings` (docs/decisions/recorder.md).
 */
export const recorderModule: PlatformModule = {
  name: 'recorder',
  routes: async (app, ctx) => {
    await app.register(recordingRoutes, { ctx });
    registerRecordingDelivery(app, ctx);
  },
  jobs: [archiveJob, outputJob],
  workers: [{ roles: ['worker'], start: startRecorderWorkers }],
  eventTypes: RECORDER_EVENT_TYPES,
  playables: [recordingPlayables],
};
