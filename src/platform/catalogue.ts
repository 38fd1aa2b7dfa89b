import type { ChannelMarkPlanner } from './channelMarks.ts';
import type { EventType } from './events.ts';
import type { PlatformModule } from './module.ts';
import type { PlayableKind } from './playables.ts';
import type { PlaybackGuard, PlaybackObserver } from './playback.ts';

/**
 * What the running platform's modules contribute to each other through their manifests, collected once at start and
 * carried on the PlatformContext (`ctx.catalogue`): a module reads another's contribution without importing it, and
 * two platforms in one process (test files share their worker's modules) each have their own.
 */
export interface ModuleCatalogue {
  /** The webhook event-type catalogue: every type some module records, in the order the modules list them. */
  eventTypes: readonly EventType[];
  /** The streaming catalogue's kinds (`platform/playables.ts`). */
  playables: readonly PlayableKind[];
  /** Run on every media request (`platform/playback.ts`). */
  playbackGuards: readonly PlaybackGuard[];
  playbackObservers: readonly PlaybackObserver[];
  /** Plans the marks of a watermark-protected live channel (`platform/channelMarks.ts`); at most one module gives it. */
  channelMarks?: ChannelMarkPlanner;
}

export function catalogueOf(modules: readonly PlatformModule[]): ModuleCatalogue {
  const playables = modules.flatMap((m) => m.playables ?? []);
  const seen = new Set<string>();
  for (const k of playables) {
    if (seen.has(k.type)) throw new Error(`two modules register the playable kind ${k.type}`);
    seen.add(k.type);
  }
  const planners = modules.flatMap((m) => (m.channelMarks ? [m.channelMarks] : []));
  if (planners.length > 1) throw new Error('two modules plan the marks of watermarked live channels');
  return {
    eventTypes: [...new Set(modules.flatMap((m) => m.eventTypes ?? []))] as EventType[],
    playables,
    playbackGuards: modules.flatMap((m) => m.playbackGuards ?? []),
    playbackObservers: modules.flatMap((m) => m.playbackObservers ?? []),
    channelMarks: planners[0],
  };
}
