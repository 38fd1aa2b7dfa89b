import type { PlatformModule } from '../../platform/module.ts';
import { embedRoutes } from './embedRoutes.ts';
import { qrCodeRoutes } from './qrcode.ts';

/** The embeddable player page (`/player/v1`) and the QR codes that open it (docs/decisions/player.md). */
export const playerModule: PlatformModule = {
  name: 'player',
  routes: async (app, ctx) => {
    await app.register(embedRoutes, { ctx });
    await app.register(qrCodeRoutes, { ctx });
  },
};
