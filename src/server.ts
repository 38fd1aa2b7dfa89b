import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.ts';
import type { Config } from './config.ts';
import { openDatabase, type Database } from './db/client.ts';
import { lockDataDir } from './db/lock.ts';
import { resolveAdminToken } from './platform/adminToken.ts';
import type { PlatformContext, WorkerStarter } from './context.ts';
import { JobQueue } from './jobs/queue.ts';
import { startWebhookDispatcher } from './modules/notifications/dispatcher.ts';
import { startEventRetention } from './modules/notifications/retention.ts';
import { openObjectStore } from './storage/open.ts';
import { startFileWorkers } from './modules/vod/files.jobs.ts';
import { startAssetWorkers } from './modules/vod/assets/jobs.ts';

/** Each module's workers; a module with job handlers adds its starter here. */
const WORKERS: WorkerStarter[] = [startWebhookDispatcher, startEventRetention, startFileWorkers, startAssetWorkers];

export interface Platform {
  app: FastifyInstance;
  database: Database;
  ctx: PlatformContext;
  adminToken: string;
  close(): Promise<void>;
}

/** Opens the database (taking the data directory lock for embedded PGlite), migrates it and opens the platform. */
export async function openPlatform(config: Config, opts: { logger?: boolean | object; onAdminTokenCreated?: (token: string, path: string) => void } = {}): Promise<Platform> {
  const release = config.databaseUrl ? () => {} : lockDataDir(config.dataDir);
  let database: Database | undefined;
  let jobs: JobQueue | undefined;
  const stopWorkers: (() => Promise<void>)[] = [];
  try {
    database = await openDatabase(config);
    await database.migrate();
    jobs = await JobQueue.start(database);
    const store = await openObjectStore(config);
    const ctx: PlatformContext = { config, database, db: database.db, jobs, store };
    const admin = resolveAdminToken(config.dataDir, config.adminToken);
    if (admin.created && admin.path) opts.onAdminTokenCreated?.(admin.token, admin.path);
    const app = await buildApp(ctx, { adminToken: admin.token, logger: opts.logger });
    if (config.role !== 'api') {
      for (const start of WORKERS) {
        const stop = await start(ctx);
        if (stop) stopWorkers.push(stop);
      }
    }
    const db = database;
    const queue = jobs;
    return {
      app,
      database,
      ctx,
      adminToken: admin.token,
      close: async () => {
        await app.close();
        for (const stop of stopWorkers) await stop();
        await queue.stop();
        await store.close();
        await db.close();
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
