import type { PlatformModule } from '../../platform/module.ts';
import { beaconRoutes } from './beaconRoutes.ts';
import { cmcdObserver } from './cmcd.ts';
import { analyticsRoutes } from './routes.ts';
import { writerOf } from './writer.ts';

/** Player beacons and CMCD data in, the nine `/streaming/v1/analytics` operations out (docs/decisions/analytics.md). */
export const analyticsModule: PlatformModule = {
  name: 'analytics',
  routes: async (app, ctx) => {
    // What is waiting is written before the database closes.
    app.addHook('onClose', () => writerOf(ctx).flush());
    await app.register(beaconRoutes, { ctx, writer: writerOf(ctx) });
    await app.register(analyticsRoutes, { ctx });
  },
  playbackObservers: [
    cmcdObserver((ctx, rows) => {
      writerOf(ctx)
        .write(rows)
        .catch((err) => ctx.log.warn({ err }, 'CMCD data could not be stored'));
    }),
  ],
};
