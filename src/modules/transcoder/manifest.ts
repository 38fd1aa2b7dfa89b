import type { PlatformModule } from '../../platform/module.ts';
import { transcoderRoutes } from './routes.ts';

/** The preset catalogue. */
export const transcoderModule: PlatformModule = {
  name: 'transcoder',
  routes: async (app, ctx) => {
    await app.register(transcoderRoutes, { listCache: ctx.listCache });
  },
};
