import type { PlatformModule } from '../../platform/module.ts';
import { DRM_EVENT_TYPES } from './eventTypes.ts';
import { drmLicenseRoutes } from './license.routes.ts';
import { drmRoutes } from './routes.ts';

/** DRM: content keys (SPEKE and JSON key server), policies, settings, tokens, the license server and its statistics. */
export const drmModule: PlatformModule = {
  name: 'drm',
  routes: async (app, ctx) => {
    await app.register(drmRoutes, { ctx });
    await app.register(drmLicenseRoutes, { ctx });
  },
  eventTypes: DRM_EVENT_TYPES,
};
