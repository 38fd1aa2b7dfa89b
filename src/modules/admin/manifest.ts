import type { PlatformModule } from '../../platform/module.ts';
import { adminRoutes, oauthRoutes } from './routes.ts';

/** Tenants and their legacy OAuth clients: the operator's API. */
export const adminModule: PlatformModule = {
  name: 'admin',
  routes: async (app, ctx) => {
    await app.register(adminRoutes, { db: ctx.db });
    await app.register(oauthRoutes, { db: ctx.db, ttlSeconds: ctx.config.oauthTokenTtlSeconds });
  },
};
