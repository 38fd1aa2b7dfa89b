import type { Config } from '../config.ts';
import { DataDirLockedError } from '../db/lock.ts';
import { storedAdminToken } from '../platform/adminToken.ts';
import * as admin from '../modules/admin/service.ts';
import { withDatabase } from './database.ts';

type Tenant = Awaited<ReturnType<typeof admin.getTenant>>;
export interface AdminClient {
  createTenant(name: string): Promise<Awaited<ReturnType<typeof admin.createTenant>>>;
  listTenants(): Promise<Tenant[]>;
  updateTenant(idOrName: string, patch: { status?: string }): Promise<Tenant>;
}

/**
 * Runs operator commands directly on the database; when a running server holds the embedded database,
 * the same commands go through its admin API instead (PGlite allows one process only).
 */
export async function adminClient(config: Config, run: (client: AdminClient) => Promise<void>): Promise<void> {
  try {
    await withDatabase(config, ({ db }) =>
      run({
        createTenant: (name) => admin.createTenant(db, name),
        listTenants: async () => (await admin.listTenants(db, { limit: 1000 })).items,
        updateTenant: (id, patch) => admin.updateTenant(db, id, patch),
      }),
    );
  } catch (e) {
    if (!(e instanceof DataDirLockedError)) throw e;
    await run(httpClient(config, e.message));
  }
}

function httpClient(config: Config, lockMessage: string): AdminClient {
  const base = `http://127.0.0.1:${config.port}/admin/v1/tenants`;
  const call = async (path: string, method: string, body?: unknown) => {
    // Never generate a token here: the running server would not know it.
    const token = config.adminToken ?? storedAdminToken(config.dataDir);
    if (!token) throw new Error(`No admin token in ${config.dataDir}; set MEDIAPLANE_ADMIN_TOKEN to the running server's token.`);
    let res: Response;
    try {
      res = await fetch(base + path, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
    } catch {
      throw new Error(`${lockMessage}\nIts admin API does not answer at ${base} either; if it listens on another port, set PORT to it.`);
    }
    const json = (await res.json().catch(() => undefined)) as any;
    if (!res.ok) throw new Error(json?.status?.message ?? `The admin API answered HTTP ${res.status}`);
    return json;
  };
  return {
    createTenant: (name) => call('', 'POST', { name }),
    listTenants: async () => (await call('?limit=1000', 'GET')).items,
    updateTenant: (id, patch) => call(`/${encodeURIComponent(id)}`, 'PATCH', patch),
  };
}
