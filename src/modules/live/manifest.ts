import type { FastifyInstance } from 'fastify';
import type { PlatformContext, WorkerStarter } from '../../context.ts';
import { registerLiveDelivery } from './delivery.ts';
import { LIVE_EVENT_TYPES } from './events.ts';
import { liveChannelRoutes } from './routes.ts';
import { startChannelRunner } from './runner.ts';

/**
 * The live module: `/live/v1/channels` and `/media/live`, and the channel runner of the `live` role (DESIGN.md,
 * "Live"; docs/decisions/live.md). Shaped as `PlatformModule` (src/platform/module.ts).
 */
export const liveModule = {
  name: 'live',
  routes: async (app: FastifyInstance, ctx: PlatformContext) => {
    await app.register(liveChannelRoutes, { ctx });
    registerLiveDelivery(app, ctx);
  },
  workers: [{ roles: ['live'] as const, start: ((ctx) => startChannelRunner(ctx)) satisfies WorkerStarter }],
  eventTypes: LIVE_EVENT_TYPES,
};
