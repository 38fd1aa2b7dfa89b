import type { PlatformModule } from '../../platform/module.ts';
import { beaconRoutes } from './beaconRoutes.ts';
import { analyticsRoutes } from './routes.ts';
import { BeaconWriter } from './writer.ts';

/** Player beacons in, the nine `/streaming/v1/analytics` operations out (docs/decisions/analytics.md). */
export const analyticsModule: PlatformModule = {
  name: 'analytics',
  routes: async (app, ctx) => {
    const writer = new BeaconWriter(ctx.db);
    // What is waiting is written before the database closes.
    app.addHook('onClose', () => writer.flush());
    await app.register(beaconRoutes, { ctx, writer });
    await app.register(analyticsRoutes, { ctx });
  },
};
