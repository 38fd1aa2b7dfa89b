import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import { migrate as migratePg } from 'drizzle-orm/node-postgres/migrator';
import { dumpPglite } from './pgliteBackup.ts';
import { initPgliteDir } from './pgliteInit.ts';
/** The query builder; tables are imported where they are used (nothing reads `db.query`), so no schema is attached. */
export type Db = PgDatabase<PgQueryResultHKT>;
/** A transaction handle; service functions take `Db | Tx` so they compose inside one transaction. */
type Tx = Parameters<Parameters<Db['transaction']>[0]>[0];
export type Queryable = Db | Tx;

export interface Database {
  db: Db;
  kind: 'pglite' | 'postgres';
  /** Raw SQL for libraries that bring their own queries (pg-boss). */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- pg-boss's own executeSql type
  executeSql(text: string, params?: unknown[]): Promise<{ rows: any[] }>;
  migrate(): Promise<void>;
  /**
   * Runs `setUp` while no other process on this database runs its own: a start's schema work (migrations, the job
   * queue's tables and queues) is not safe to run twice at once, and a deployment starts its processes together.
   */
  exclusively<T>(setUp: () => Promise<T>): Promise<T>;
  ping(): Promise<void>;
  /** Embedded PGlite only: a gzipped tar of the data directory, consistent while the database is in use (pgliteBackup.ts). */
  dumpDataDir?(): Promise<Buffer>;
  close(): Promise<void>;
  /** Connections of the pool (PostgreSQL); PGlite has one connection and no pool. */
  poolUse?(): { total: number; idle: number; waiting: number };
}

const migrationsFolder = new URL('../../migrations', import.meta.url).pathname;
// Any constants work; they only have to be the same for every Mediaplane process on one database.
const MIGRATION_LOCK_KEY = 727_100_001;
const START_LOCK_KEY = 727_100_002;

export async function openDatabase(opts: { databaseUrl?: string; dataDir: string; databasePoolSize?: number }): Promise<Database> {
  return opts.databaseUrl ? openPostgres(opts.databaseUrl, opts.databasePoolSize ?? 10) : openPglite(join(opts.dataDir, 'pglite'));
}

async function openPglite(dir: string): Promise<Database> {
  mkdirSync(dir, { recursive: true });
  await initPgliteDir(dir);
  const client = await PGlite.create(dir);
  const db = drizzlePglite({ client }) as unknown as Db;
  return {
    db,
    kind: 'pglite',
    // PGlite's query() refuses multi-statement SQL, which pg-boss sends without parameters.
    executeSql: async (text, params) => (params?.length ? client.query(text, params) : { rows: (await client.exec(text)).at(-1)?.rows ?? [] }),
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- drizzle's PGlite migrator wants its own database type
    migrate: () => migratePglite(db as any, { migrationsFolder }),
    // One process has the embedded database (the data directory's lock): nothing to wait for.
    exclusively: (setUp) => setUp(),
    ping: async () => void (await client.query('select 1')),
    dumpDataDir: () => dumpPglite(client),
    close: () => client.close(),
  };
}

async function openPostgres(url: string, poolSize: number): Promise<Database> {
  const pool = new pg.Pool({ connectionString: url, max: poolSize });
  // An idle client that loses its connection must not crash the process; the pool replaces it.
  pool.on('error', () => {});
  const db = drizzlePg({ client: pool }) as unknown as Db;
  return {
    db,
    kind: 'postgres',
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- node-postgres' query parameters type
    executeSql: (text, params) => pool.query(text, params as any[]),
    migrate: async () => {
      // Several processes may start together against one database: migrate one at a time.
      const conn = await pool.connect();
      try {
        await conn.query('select pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
        await migratePg(drizzlePg({ client: conn }), { migrationsFolder });
      } finally {
        await conn.query('select pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch(() => {});
        conn.release();
      }
    },
    exclusively: async (setUp) => {
      // The lock is held by a connection of its own, outside the pool, so that `setUp` has the whole pool (and
      // `migrate`, under its own key); ending that session releases it, whatever happened.
      const lock = new pg.Client({ connectionString: url });
      lock.on('error', () => {});
      await lock.connect();
      try {
        await lock.query('select pg_advisory_lock($1)', [START_LOCK_KEY]);
        return await setUp();
      } finally {
        await lock.end().catch(() => {});
      }
    },
    ping: async () => void (await pool.query('select 1')),
    close: () => pool.end(),
    poolUse: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
  };
}
