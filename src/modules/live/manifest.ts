import type { PlatformModule } from '../../platform/module.ts';
import { eventPlayables } from './events/playable.ts';
import { livePlayables } from './playable.ts';
import { registerLiveDelivery } from './delivery.ts';
import { LIVE_EVENT_TYPES } from './events.ts';
import { liveEventRoutes } from './events/routes.ts';
import { startEventScheduler } from './events/scheduler.ts';
import { liveChannelRoutes } from './routes.ts';
import { startChannelRunner } from './runner/channelRunner.ts';

/**
 * Live channels: `/live/v1/channels`, their outputs under `/media/live`, the channel runner of the `live` role, and
 * events scheduled on channels (`/live/v1/events`) with their scheduler (DESIGN.md, "Live"; docs/decisions/live.md).
 */
export const liveModule: PlatformModule = {
  name: 'live',
  routes: async (app, ctx) => {
    await app.register(liveChannelRoutes, { ctx });
    await app.register(liveEventRoutes, { ctx });
    registerLiveDelivery(app, ctx);
  },
  workers: [
    { roles: ['live'], start: (ctx) => startChannelRunner(ctx) },
    // The events scheduler lives with the channels it starts and stops (docs/decisions/live.md, "Events").
    { roles: ['live'], start: startEventScheduler },
  ],
  playables: [livePlayables, eventPlayables],
  eventTypes: LIVE_EVENT_TYPES,
};
