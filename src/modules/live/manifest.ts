import type { PlatformModule } from '../../platform/module.ts';
import { livePlayables } from './playable.ts';
import { registerLiveDelivery } from './delivery.ts';
import { LIVE_EVENT_TYPES } from './events.ts';
import { liveChannelRoutes } from './routes.ts';
import { startChannelRunner } from './runner.ts';

/**
 * Live channels: `/live/v1/channels`, their outputs under `/media/live`, and the channel runner of the `live` role
 * (DESIGN.md, "Live"; docs/decisions/live.md).
 */
export const liveModule: PlatformModule = {
  name: 'live',
  routes: async (app, ctx) => {
    await app.register(liveChannelRoutes, { ctx });
    registerLiveDelivery(app, ctx);
  },
  workers: [{ roles: ['live'], start: (ctx) => startChannelRunner(ctx) }],
  playables: [livePlayables],
  eventTypes: LIVE_EVENT_TYPES,
};
