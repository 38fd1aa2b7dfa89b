import type { PlatformModule } from '../../platform/module.ts';
import { streamingAssetRoutes } from './assets.routes.ts';
import { domainRoutes } from './domains.routes.ts';
import { STREAMING_EVENT_TYPES } from './eventTypes.ts';
import { framesJob, startFrameWorkers } from './frames.ts';
import { imageRoutes } from './images.routes.ts';
import { mediaClockRoutes } from './clock.routes.ts';
import { registerImageDelivery } from './media.routes.ts';
import { startSessionSweep } from './sessions.ts';
import { STREAMING_GUARDS } from './guards.ts';
import { settingsRoutes } from './settings.routes.ts';
import { registerThumbnailDelivery } from './thumbnails.ts';
import { tokenRoutes } from './tokens.routes.ts';

/**
 * Streaming (spec part 2, "Streaming"): the player-facing catalogue over every module's playables
 * (`platform/playables.ts`), chapters, tags, images and frames, settings and playback tokens, allowed domains; its
 * guards check every media request (`platform/playback.ts`). See docs/decisions/streaming.md.
 */
export const streamingModule: PlatformModule = {
  name: 'streaming',
  routes: async (app, ctx) => {
    await app.register(streamingAssetRoutes, { ctx });
    await app.register(imageRoutes, { ctx });
    registerImageDelivery(app, ctx);
    registerThumbnailDelivery(app, ctx);
    await app.register(mediaClockRoutes);
    await app.register(domainRoutes, { ctx });
    await app.register(settingsRoutes, { ctx });
    await app.register(tokenRoutes, { ctx });
  },
  jobs: [framesJob],
  workers: [
    { roles: ['worker'], start: startFrameWorkers },
    { roles: ['worker'], start: startSessionSweep },
  ],
  playbackGuards: STREAMING_GUARDS,
  eventTypes: STREAMING_EVENT_TYPES,
};
