import type { Principal } from '../platform/auth.ts';
import type { RoleType } from '../platform/roles.ts';
import { collectionVersions } from './collectionVersions.ts';
import { tenants } from './tenants.ts';

/** What every credentials lookup (API key, OAuth token) reads besides the role: the tenant and a collection version. */
export const principalColumns = {
  tenantId: tenants.id,
  tenantName: tenants.name,
  tenantStatus: tenants.status,
  collectionVersion: collectionVersions.version,
};

export function toPrincipal(row: {
  tenantId: string;
  tenantName: string;
  tenantStatus: string;
  roleType: string;
  collectionVersion: number | null;
}): Principal {
  return { ...row, roleType: row.roleType as RoleType, collectionVersion: row.collectionVersion ?? 0 };
}
