import type { PlatformModule } from '../../platform/module.ts';
import { vodPlayables } from './assets/playable.ts';
import { registerVodDelivery } from './assets/delivery.ts';
import { captionsJob, startCaptionsWorkers } from './assets/captions.ts';
import { chunkJob, stitchJob } from './assets/chunked/parts.ts';
import { startAssetWorkers, transcodeJob } from './assets/jobs.ts';
import { vodAssetRoutes } from './assets/routes.ts';
import { VOD_EVENT_TYPES } from './eventTypes.ts';
import { startFileWorkers } from './files.jobs.ts';
import { importFileJob } from './files.import.ts';
import { fileRoutes } from './files.routes.ts';
import { expireUploadJob } from './files.service.ts';

/** Files (uploads), assets, their transcoded outputs and their delivery under /media/vod. */
export const vodModule: PlatformModule = {
  name: 'vod',
  routes: async (app, ctx) => {
    await app.register(vodAssetRoutes, { ctx });
    registerVodDelivery(app, ctx);
    await app.register(fileRoutes, { ctx });
  },
  jobs: [expireUploadJob, importFileJob, transcodeJob, chunkJob, stitchJob, captionsJob],
  workers: [
    { roles: ['worker'], start: startFileWorkers },
    { roles: ['worker'], start: startAssetWorkers },
    { roles: ['worker'], start: startCaptionsWorkers },
  ],
  playables: [vodPlayables],
  eventTypes: VOD_EVENT_TYPES,
};
