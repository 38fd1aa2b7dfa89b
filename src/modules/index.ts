import type { PlatformModule } from '../platform/module.ts';
import { adminModule } from './admin/index.ts';
import { analyticsModule } from './analytics/index.ts';
import { consoleModule } from './console/index.ts';
import { coreModule } from './core/index.ts';
import { drmModule } from './drm/index.ts';
import { liveModule } from './live/index.ts';
import { notificationsModule } from './notifications/index.ts';
import { playerModule } from './player/index.ts';
import { recorderModule } from './recorder/index.ts';
import { transcoderModule } from './transcoder/index.ts';
import { streamingModule } from './streaming/index.ts';
import { vodModule } from './vod/index.ts';
import { watermarkingModule } from './watermarking/index.ts';

/**
 * Every module the platform runs. A new module is a folder with a `manifest.ts`, its front door `index.ts` (exporting
 * the manifest and whatever other modules may use) and one line here.
 */
export const MODULES: readonly PlatformModule[] = [
  adminModule,
  coreModule,
  transcoderModule,
  vodModule,
  liveModule,
  streamingModule,
  notificationsModule,
  drmModule,
  analyticsModule,
  playerModule,
  recorderModule,
  watermarkingModule,
  consoleModule,
];
