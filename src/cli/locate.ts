import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from '../config.ts';
import { lockHolder, lockedMessage } from '../db/lock.ts';
import { storedAdminToken } from '../platform/adminToken.ts';
import { recordedServerPort } from '../platform/serverPort.ts';

/**
 * Where an operator command should act: through the admin API of the server that runs on this data directory
 * (PGlite allows one process only), or on the database directly. Decided from the lock file and one local HTTP probe,
 * before anything heavy is loaded, so that a command beside a running server costs little more than starting Node.
 */
export type Route = { how: 'http'; base: string; token: string; why: string } | { how: 'direct'; newDatabase: boolean };

export async function locate(config: Config): Promise<Route> {
  let base = `http://127.0.0.1:${config.port}`;
  if (config.databaseUrl) return { how: 'direct', newDatabase: false };
  const holder = lockHolder(config.dataDir);
  if (holder !== undefined) {
    // The holder's own port, whatever PORT says here (it may have been started with another).
    base = `http://127.0.0.1:${recordedServerPort(config.dataDir) ?? config.port}`;
    const token = config.adminToken ?? storedAdminToken(config.dataDir);
    if (!token)
      throw new Error(
        `${lockedMessage(config.dataDir, holder)}\nNo admin token in ${config.dataDir}; set MEDIAPLANE_ADMIN_TOKEN to the running server's token.`,
      );
    return { how: 'http', base, token, why: lockedMessage(config.dataDir, holder) };
  }
  const newDatabase = !existsSync(join(config.dataDir, 'pglite', 'PG_VERSION'));
  if (!newDatabase) return { how: 'direct', newDatabase };
  // No database here: before creating an empty one, see whether the user meant a server that runs elsewhere.
  if (await answersHealth(base)) {
    if (config.adminToken) return { how: 'http', base, token: config.adminToken, why: `A Mediaplane server answers at ${base}.` };
    throw new Error(
      `${config.dataDir} holds no Mediaplane database, and the Mediaplane server that answers at ${base} uses another data directory.\n` +
        `Set MEDIAPLANE_DATA_DIR to that server's data directory (or MEDIAPLANE_ADMIN_TOKEN to its admin token) to manage it.`,
    );
  }
  return { how: 'direct', newDatabase };
}

// A refused connection answers at once; the timeout only waits for a server that listens but is slow (a busy machine).
async function answersHealth(base: string): Promise<boolean> {
  try {
    const res = await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(5000) });
    const body = (await res.json()) as { status?: string };
    return res.ok && body?.status === 'ok';
  } catch {
    return false;
  }
}
