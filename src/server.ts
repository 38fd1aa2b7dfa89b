import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.ts';
import type { Config, ProcessRole } from './config.ts';
import { openDatabase, type Database } from './db/client.ts';
import { lockDataDir } from './db/lock.ts';
import { resolveAdminToken } from './platform/adminToken.ts';
import type { PlatformContext } from './context.ts';
import { JOBS_CHANNEL, JobQueue } from './jobs/queue.ts';
import { listenForCommits } from './platform/wakeup.ts';
import { MODULES } from './modules/index.ts';
import { catalogueOf } from './platform/catalogue.ts';
import { ListCache } from './platform/listCache.ts';
import { platformLogger, type LoggerSetting } from './platform/logger.ts';
import { shutdownStep } from './platform/shutdown.ts';
import { startStorageDeletions } from './platform/storageDeletions.ts';
import { Metrics } from './platform/metrics.ts';
import { openObjectStore } from './storage/open.ts';

export interface Platform {
  app: FastifyInstance;
  database: Database;
  ctx: PlatformContext;
  adminToken: string;
  close(): Promise<void>;
}

/** How long requests in flight get to finish on close before their connections are cut. */
const HTTP_GRACE_MS = 10_000;
/** The most one step of closing (the HTTP server, a worker, the job queue) may take before close goes on without it. */
const STEP_MS = 15_000;

/** Whether a process of this role runs work meant for `roles`: `all` runs every role's. */
const runsRole = (role: Config['role'], roles: readonly ProcessRole[]) => role === 'all' || roles.includes(role);

/** Opens the database (taking the data directory lock for embedded PGlite), migrates it and opens the platform. */
export async function openPlatform(
  config: Config,
  opts: {
    logger?: LoggerSetting;
    onAdminTokenCreated?: (token: string, path: string) => void;
    /** Told what a long start is doing (a first start creates the database). */
    onProgress?: (step: string) => void;
  } = {},
): Promise<Platform> {
  const release = config.databaseUrl ? () => {} : lockDataDir(config.dataDir);
  const { log, http: logRequests } = platformLogger(opts.logger, config.logLevel);
  let database: Database | undefined;
  let jobs: JobQueue | undefined;
  const stopWorkers: (() => Promise<void>)[] = [];
  const stopNames: string[] = [];
  try {
    database = await openDatabase(config);
    const opened = database;
    const metrics = new Metrics();
    // Processes of a deployment start together (compose.yaml, an upgrade): one at a time creates or migrates the schema.
    jobs = await database.exclusively(async () => {
      opts.onProgress?.('Creating the tables...');
      await opened.migrate();
      opts.onProgress?.('Setting up the job queue...');
      const queue = await JobQueue.start(opened, log, metrics);
      try {
        // Every role: the API sends to these queues in its own transactions, workers work them.
        for (const job of MODULES.flatMap((m) => m.jobs ?? [])) await queue.create(job);
      } catch (e) {
        await queue.stop().catch(() => {});
        throw e;
      }
      return queue;
    });
    metrics.readFrom({ jobCounts: () => jobs!.counts(), pool: () => opened.poolUse?.() });
    const store = await openObjectStore(config);
    const listCache = config.listCacheBytes ? new ListCache(config.listCacheBytes) : undefined;
    const ctx: PlatformContext = { config, database, db: database.db, jobs, store, log, listCache, metrics, catalogue: catalogueOf(MODULES) };
    const admin = resolveAdminToken(config.dataDir, config.adminToken);
    if (admin.created && admin.path) opts.onAdminTokenCreated?.(admin.token, admin.path);
    const app = await buildApp(ctx, { adminToken: admin.token, logger: logRequests });
    for (const { module, worker } of MODULES.flatMap((module) => (module.workers ?? []).map((worker) => ({ module, worker })))) {
      if (!runsRole(config.role, worker.roles)) continue;
      const stop = await worker.start(ctx);
      if (stop) {
        stopWorkers.push(stop);
        stopNames.push(`${module.name}/${worker.start.name}`);
      }
    }
    // Files whose rows are gone, left by a process that stopped before deleting them (or written after it did).
    if (runsRole(config.role, ['worker'])) {
      stopWorkers.push(startStorageDeletions(ctx));
      stopNames.push('storage deletions');
    }
    // Workers start a job when the transaction that sent it commits (JOBS_CHANNEL), not at their next poll; the poll
    // covers a missed notification. A process with no workers has nothing to wake.
    if (stopWorkers.length > 0) {
      const stopListening = await listenForCommits(ctx, JOBS_CHANNEL, (name) => jobs!.wake(name || undefined));
      stopWorkers.unshift(stopListening);
      stopNames.unshift('job wake-up');
    }
    const queue = jobs;
    return {
      app,
      database,
      ctx,
      adminToken: admin.token,
      close: async () => {
        queue.beginStop();
        // Requests still running after the grace lose their connection; the app's own onClose hooks still run.
        await shutdownStep(log, 'HTTP server', STEP_MS, async () => {
          const cut = setTimeout(() => app.server.closeAllConnections(), HTTP_GRACE_MS);
          // A keep-alive connection whose answer was still being sent when the close began goes idle afterwards; the
          // server closes idle connections once, at the start, so it would wait the whole grace for it.
          const idle = setInterval(() => app.server.closeIdleConnections(), 100);
          await app.close().finally(() => {
            clearTimeout(cut);
            clearInterval(idle);
          });
        });
        for (const [i, stop] of stopWorkers.entries()) await shutdownStep(log, `worker ${stopNames[i]}`, STEP_MS, stop);
        await shutdownStep(log, 'job queue', STEP_MS, () => queue.stop());
        await shutdownStep(log, 'object store', STEP_MS, () => store.close());
        await opened.close();
        release();
      },
    };
  } catch (e) {
    for (const stop of stopWorkers) await stop().catch(() => {});
    await jobs?.stop().catch(() => {});
    await database?.close().catch(() => {});
    release();
    throw e;
  }
}
