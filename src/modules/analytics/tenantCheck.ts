import { eq } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { tenants } from '../../db/tenants.ts';
import { isUuid } from '../../platform/ids.ts';
import { notFound } from '../../platform/errors.ts';

const TTL_MS = 10_000;
const MAX_ENTRIES = 10_000;

/**
 * Whether a tenant of a public player route exists and is Active, remembered for a few seconds per process: beacons
 * arrive many times a second per viewer, and a lookup each would cost more than the beacon. A tenant blocked or
 * deleted is refused within TTL_MS.
 */
export function activeTenants(db: Db): (tenantId: string) => Promise<void> {
  const known = new Map<string, { active: boolean; until: number }>();
  return async (tenantId) => {
    if (!isUuid(tenantId)) throw notFound('tenant_not_found', 'Tenant', tenantId);
    const id = tenantId.toLowerCase();
    let entry = known.get(id);
    if (!entry || entry.until < Date.now()) {
      const [row] = await db.select({ status: tenants.status }).from(tenants).where(eq(tenants.id, id));
      if (known.size >= MAX_ENTRIES) known.clear();
      known.set(id, (entry = { active: row?.status === 'Active', until: Date.now() + TTL_MS }));
    }
    if (!entry.active) throw notFound('tenant_not_found', 'Tenant', tenantId);
  };
}
