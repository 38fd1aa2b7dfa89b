import type { Config } from './config.ts';
import type { Database, Db } from './db/client.ts';
import type { JobQueue } from './jobs/queue.ts';
import type { ModuleCatalogue } from './platform/catalogue.ts';
import type { ListCache } from './platform/listCache.ts';
import type { Logger } from './platform/logger.ts';
import type { Metrics } from './platform/metrics.ts';
import type { ObjectStore } from './storage/objectStore.ts';

/** What every module is given: configuration, the database, the job queue, the object store and the logger. */
export interface PlatformContext {
  config: Config;
  database: Database;
  db: Db;
  jobs: JobQueue;
  store: ObjectStore;
  log: Logger;
  /** Rendered list pages, per process (`MEDIAPLANE_LIST_CACHE_MB`); undefined when turned off. */
  listCache?: ListCache;
  /** The Prometheus metrics served at `/metrics`. */
  metrics: Metrics;
  /** What the modules give each other through their manifests, collected at start. */
  catalogue: ModuleCatalogue;
}

/**
 * A module's background work, started on the roles its manifest names. A worker that runs its own loop returns the
 * function that stops it; the platform calls it on close, before the database closes.
 */
export type WorkerStarter = (ctx: PlatformContext) => Promise<void | (() => Promise<void>)>;
