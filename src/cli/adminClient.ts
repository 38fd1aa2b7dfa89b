import type { Config } from '../config.ts';
import type * as admin from '../modules/admin/service.ts';
import { locate } from './locate.ts';

type Tenant = Awaited<ReturnType<typeof admin.getTenant>>;
type CreatedTenant = Awaited<ReturnType<typeof admin.createTenant>>;
export interface AdminClient {
  createTenant(name: string): Promise<CreatedTenant>;
  listTenants(): Promise<Tenant[]>;
  updateTenant(idOrName: string, patch: { status?: string }): Promise<Tenant>;
}

/**
 * Runs operator commands through the admin API of the server that holds the embedded database, or directly on the
 * database when none does (PGlite allows one process only). The database code is loaded only in the second case.
 */
export async function adminClient(config: Config, run: (client: AdminClient) => Promise<void>): Promise<void> {
  const route = await locate(config);
  if (route.how === 'http') return run(httpClient(route.base, route.token, route.why));
  if (route.newDatabase) console.error(`No database in ${config.dataDir} yet and no server running: creating a new, empty one there.`);
  const [service, { withDatabase }] = await Promise.all([import('../modules/admin/service.ts'), import('./database.ts')]);
  await withDatabase(config, ({ db }) =>
    run({
      createTenant: (name) => service.createTenant(db, name),
      listTenants: async () => (await service.listTenants(db, { limit: 1000 })).items,
      updateTenant: (id, patch) => service.updateTenant(db, id, patch),
    }),
  );
}

function httpClient(base: string, token: string, why: string): AdminClient {
  const call = async (path: string, method: string, body?: unknown) => {
    let res: Response;
    try {
      res = await fetch(`${base}/admin/v1/tenants${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
    } catch {
      throw new Error(`${why}\nIts admin API does not answer at ${base} either; if it listens on another port, set PORT to it.`);
    }
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the admin API answers JSON of several shapes; callers read the fields they asked for
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
