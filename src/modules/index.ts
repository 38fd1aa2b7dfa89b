import type { PlatformModule } from '../platform/module.ts';
import { setPlayableKinds } from '../platform/playables.ts';
import { setPlaybackHooks } from '../platform/playback.ts';
import { adminModule } from './admin/manifest.ts';
import { analyticsModule } from './analytics/manifest.ts';
import { coreModule } from './core/manifest.ts';
import { drmModule } from './drm/manifest.ts';
import { liveModule } from './live/manifest.ts';
import { notificationsModule } from './notifications/manifest.ts';
import { playerModule } from './player/manifest.ts';
import { recorderModule } from './recorder/manifest.ts';
import { transcoderModule } from './transcoder/manifest.ts';
import { streamingModule } from './streaming/manifest.ts';
import { vodModule } from './vod/manifest.ts';
import { watermarkingModule } from './watermarking/manifest.ts';

/** Every module the platform runs. A new module is a folder with a `manifest.ts` and one line here. */
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
];

/** The kinds of playable things (streaming catalogue) and the media delivery hooks, set at start. */
export function setModuleCatalogues(modules: readonly PlatformModule[] = MODULES): void {
  setPlayableKinds(modules.flatMap((m) => m.playables ?? []));
  setPlaybackHooks({ guards: modules.flatMap((m) => m.playbackGuards ?? []), observers: modules.flatMap((m) => m.playbackObservers ?? []) });
}

/** The webhook event-type catalogue: every type some module records. */
export const moduleEventTypes = (modules: readonly PlatformModule[] = MODULES): string[] => modules.flatMap((m) => m.eventTypes ?? []);
