import type { Config } from './config.ts';
import type { Database, Db } from './db/client.ts';
import type { JobQueue } from './jobs/queue.ts';
import type { ObjectStore } from './storage/objectStore.ts';

/** What every module is given: configuration, the database, the job queue and the object store. */
export interface PlatformContext {
  config: Config;
  database: Database;
  db: Db;
  jobs: JobQueue;
  store: ObjectStore;
}

/**
 * A module's job handlers, started on the `worker` role (and on `all`, the default). A worker that runs its own loop
 * returns the function that stops it; the platform calls it on close, before the database closes.
 */
export type WorkerStarter = (ctx: PlatformContext) => Promise<void | (() => Promise<void>)>;
