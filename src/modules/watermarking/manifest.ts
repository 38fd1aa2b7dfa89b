import type { PlatformModule } from '../../platform/module.ts';
import { channelWatermark } from './channels.ts';
import { WATERMARKING_EVENT_TYPES } from './eventTypes.ts';
import { watermarkingFileRoutes } from './files.routes.ts';
import { detectJob, prepareJob, startWatermarkingWorkers } from './jobs.ts';
import { redirectorRoutes } from './redirector.routes.ts';
import { watermarkingRoutes } from './routes.ts';

/** A/B forensic watermarking: prepared assets, sessions, the redirector, suspect files and detection. */
export const watermarkingModule: PlatformModule = {
  name: 'watermarking',
  routes: async (app, ctx) => {
    await app.register(watermarkingRoutes, { ctx });
    await app.register(redirectorRoutes, { ctx });
    await app.register(watermarkingFileRoutes, { ctx });
  },
  jobs: [prepareJob, detectJob],
  workers: [{ roles: ['worker'], start: startWatermarkingWorkers }],
  eventTypes: WATERMARKING_EVENT_TYPES,
  // Live asks for a watermarked channel's marks through the platform (platform/channelMarks.ts): live imports nothing here.
  channelMarks: (ctx, c) => channelWatermark(ctx, c.tenantId, c.channelId, c.title, c.ladder, c.segmentSeconds, c.rungCount),
};
