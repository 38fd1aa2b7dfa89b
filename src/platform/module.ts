import type { FastifyInstance } from 'fastify';
import type { PlatformContext, WorkerStarter } from '../context.ts';
import type { JobDefinition } from '../jobs/queue.ts';
import type { PlayableKind } from './playables.ts';
import type { PlaybackGuard, PlaybackObserver } from './playback.ts';

/**
 * What a process runs: `api` (HTTP), `worker` (jobs and sweepers), `live` (live channels). `all` (config) runs every
 * role in one process. Named apart from `platform/roles.ts`'s `Role`, the access roles of API keys.
 */
export const PROCESS_ROLES = ['api', 'worker', 'live'] as const;
export type ProcessRole = (typeof PROCESS_ROLES)[number];

/**
 * One module, as the platform sees it; `src/modules/index.ts` lists them all. app.ts registers the routes, server.ts
 * creates the job queues and starts the workers, drizzle-kit finds the tables (`tables.ts`, `*.tables.ts`) itself,
 * the webhook event-type catalogue is the union of `eventTypes`, the streaming catalogue the union of `playables`, and
 * media delivery runs every `playbackGuards` and `playbackObservers`.
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
}
