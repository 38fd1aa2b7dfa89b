import type { PlatformModule } from '../../platform/module.ts';
import { CORE_EVENT_TYPES } from './eventTypes.ts';
import { coreRoutes } from './routes.ts';

/** API keys and roles. */
export const coreModule: PlatformModule = {
  name: 'core',
  routes: async (app, ctx) => {
    await app.register(coreRoutes, { db: ctx.db, listCache: ctx.listCache });
  },
  eventTypes: CORE_EVENT_TYPES,
};
