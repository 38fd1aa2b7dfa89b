import type { Config } from '../config.ts';
import { DataDirLockedError } from '../db/lock.ts';
import { openPlatform } from '../server.ts';
import { resolveAdminToken } from '../platform/adminToken.ts';
import * as admin from '../modules/admin/service.ts';

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
  let platform;
  try {
    platform = await openPlatform(config);
  } catch (e) {
    if (!(e instanceof DataDirLockedError)) throw e;
    return run(httpClient(config));
  }
  const { db } = platform.database;
  try {
    await run({
      createTenant: (name) => admin.createTenant(db, name),
      listTenants: async () => (await admin.listTenants(db, { limit: 1000 })).items,
      updateTenant: (id, patch) => admin.updateTenant(db, id, patch),
    });
  } finally {
    await platform.close();
  }
}

function httpClient(config: Config): AdminClient {
  const { token } = resolveAdminToken(config.dataDir, config.adminToken);
  const base = `http://127.0.0.1:${config.port}/admin/v1/tenants`;
  const call = async (path: string, method: string, body?: unknown) => {
    const res = await fetch(base + path, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const json = (await res.json()) as any;
    if (!res.ok) throw new Error(json?.status?.message ?? `HTTP ${res.status}`);
    return json;
  };
  return {
    createTenant: (name) => call('', 'POST', { name }),
    listTenants: async () => (await call('?limit=1000', 'GET')).items,
    updateTenant: (id, patch) => call(`/${encodeURIComponent(id)}`, 'PATCH', patch),
  };
}
