import type { FastifyInstance } from 'fastify';
import type { ProcessRole } from '../config.ts';
import type { PlatformContext, WorkerStarter } from '../context.ts';
import type { JobDefinition } from '../jobs/queue.ts';
import type { ChannelMarkPlanner } from './channelMarks.ts';
import type { PlayableKind } from './playables.ts';
import type { PlaybackGuard, PlaybackObserver } from './playback.ts';

/**
 * One module, as the platform sees it; `src/modules/index.ts` lists them all. app.ts registers the routes, server.ts
 * creates the job queues and starts the workers, drizzle-kit finds the tables (`tables.ts`, `*.tables.ts`) itself,
 * the webhook event-type catalogue is the union of `eventTypes`, the streaming catalogue the union of `playables`, and
 * media delivery runs every `playbackGuards` and `playbackObservers`; the live runner asks `channelMarks` which rungs
 * of a watermarked channel to mark (`platform/catalogue.ts` collects what modules give each other).
 */
export interface PlatformModule {
  name: string;
  /** Registers the module's routes. */
  routes?: (app: FastifyInstance, ctx: PlatformContext) => Promise<void>;
  /** Queues created at start on every role: the API sends to them in its own transactions. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a list of jobs of different payloads
  jobs?: readonly JobDefinition<any>[];
  /** Background work, started by each process whose role is listed (and by `all`). */
  workers?: readonly { roles: readonly ProcessRole[]; start: WorkerStarter }[];
  /** The `<module>.<object>.<change>` event types this module records; also declare them to `EventTypes`. */
  eventTypes?: readonly string[];
  /** What this module has that a player can play, for the streaming catalogue (`platform/playables.ts`). */
  playables?: readonly PlayableKind[];
  /** Checks on every media request (`platform/playback.ts`): may refuse it. */
  playbackGuards?: readonly PlaybackGuard[];
  /** Sees every admitted media request (`platform/playback.ts`). */
  playbackObservers?: readonly PlaybackObserver[];
  /** Plans the marks of a watermark-protected live channel (`platform/channelMarks.ts`); one module at most. */
  channelMarks?: ChannelMarkPlanner;
}
