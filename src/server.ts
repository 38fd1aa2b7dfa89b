import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.ts';
import type { Config } from './config.ts';
import { openDatabase, type Database } from './db/client.ts';
import { lockDataDir } from './db/lock.ts';
import { resolveAdminToken } from './platform/adminToken.ts';

export interface Platform {
  app: FastifyInstance;
  database: Database;
  adminToken: string;
  close(): Promise<void>;
}

/** Opens the database (taking the data directory lock for embedded PGlite), migrates it and opens the platform. */
export async function openPlatform(config: Config, opts: { logger?: boolean | object; onAdminTokenCreated?: (token: string, path: string) => void } = {}): Promise<Platform> {
  const release = config.databaseUrl ? () => {} : lockDataDir(config.dataDir);
  let database: Database | undefined;
  try {
    database = await openDatabase(config);
    await database.migrate();
    const admin = resolveAdminToken(config.dataDir, config.adminToken);
    if (admin.created && admin.path) opts.onAdminTokenCreated?.(admin.token, admin.path);
    const app = await buildApp({ config, database, adminToken: admin.token, logger: opts.logger });
    const db = database;
    return {
      app,
      database,
      adminToken: admin.token,
      close: async () => {
        await app.close();
        await db.close();
        release();
      },
    };
  } catch (e) {
    await database?.close().catch(() => {});
    release();
    throw e;
  }
}
