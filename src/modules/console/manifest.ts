import type { PlatformModule } from '../../platform/module.ts';
import { consoleRoutes } from './routes.ts';

/** The tenant console at `/console`: static files that call the public API through the SDK (docs/decisions/console.md). */
export const consoleModule: PlatformModule = {
  name: 'console',
  routes: async (app) => {
    await app.register(consoleRoutes);
  },
};
