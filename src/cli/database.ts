import type { Config } from '../config.ts';
import { openDatabase, type Database } from '../db/client.ts';
import { lockDataDir } from '../db/lock.ts';

/**
 * Opens the database alone, migrated, for a one-off command: no job queue, no workers, no admin token (a command
 * must not start processing jobs, nor create the token that the server prints on its first start).
 * Throws DataDirLockedError when a running server holds the embedded database.
 */
export async function withDatabase<T>(config: Config, run: (database: Database) => Promise<T>): Promise<T> {
  const release = config.databaseUrl ? () => {} : lockDataDir(config.dataDir);
  let database: Database | undefined;
  try {
    database = await openDatabase(config);
    await database.migrate();
    return await run(database);
  } finally {
    await database?.close();
    release();
  }
}
