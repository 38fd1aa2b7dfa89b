import { randomBytes } from 'node:crypto';
import { and, count, eq } from 'drizzle-orm';
import type { Queryable } from '../../db/client.ts';
import { tenants } from '../../db/tenants.ts';
import { type Principal, sha256 } from '../../platform/auth.ts';
import { notFound, validationError } from '../../platform/errors.ts';
import { textSearch } from '../../platform/filters.ts';
import { newId } from '../../platform/ids.ts';
import { envelope, orderBy, pageWindow, type PageRequest } from '../../platform/paging.ts';
import { isRoleType, ROLES, type RoleType } from '../../platform/roles.ts';
import { recordEvent } from '../notifications/events.ts';
import { apiKeys } from './tables.ts';

export interface CreatedApiKey {
  id: string;
  name: string;
  roleType: RoleType;
  /** The secret, shown once. */
  key: string;
}

const generateKey = () => `mpk_${randomBytes(32).toString('base64url')}`;

function checkRole(roleType: string): RoleType {
  if (!isRoleType(roleType)) throw validationError('roleType', `must be one of ${Object.keys(ROLES).join(', ')}`);
  return roleType;
}

export async function createApiKey(db: Queryable, tenantId: string, name: string, roleType: string): Promise<CreatedApiKey> {
  const role = checkRole(roleType);
  const key = generateKey();
  const id = newId();
  await db.transaction(async (tx) => {
    await tx.insert(apiKeys).values({ id, tenantId, name, roleType: role, keyHash: sha256(key) });
    await recordEvent(tx, tenantId, 'core.apikey.created', { id, name, roleType: role });
  });
  return { id, name, roleType: role, key };
}

const SORTS = { CreatedAt: apiKeys.createdAt, CreateDate: apiKeys.createdAt, Name: apiKeys.name, RoleName: apiKeys.roleType };

export async function listApiKeys(db: Queryable, tenantId: string, req: PageRequest) {
  const where = and(eq(apiKeys.tenantId, tenantId), textSearch(req.query, apiKeys.name));
  const order = orderBy(req, SORTS, 'CreatedAt', apiKeys.id);
  const { limit, offset } = pageWindow(req);
  const [rows, [{ total }]] = await Promise.all([
    db.select().from(apiKeys).where(where).orderBy(...order).limit(limit).offset(offset),
    db.select({ total: count() }).from(apiKeys).where(where),
  ]);
  return envelope(rows.map(present), total, req);
}

function present(row: typeof apiKeys.$inferSelect) {
  const role = ROLES[row.roleType as RoleType];
  return { id: row.id, name: row.name, roleName: role.name, roleId: role.id, roleType: role.type, createdAt: row.createdAt };
}

export async function getApiKey(db: Queryable, tenantId: string, id: string) {
  const [row] = await db.select().from(apiKeys).where(and(eq(apiKeys.tenantId, tenantId), eq(apiKeys.id, id)));
  if (!row) throw notFound('api_key_not_found', 'API key', id);
  return present(row);
}

export async function updateApiKey(db: Queryable, tenantId: string, id: string, name: string, roleType: string) {
  const role = checkRole(roleType);
  const [row] = await db
    .update(apiKeys)
    .set({ name, roleType: role })
    .where(and(eq(apiKeys.tenantId, tenantId), eq(apiKeys.id, id)))
    .returning();
  if (!row) throw notFound('api_key_not_found', 'API key', id);
  return { id: row.id, name: row.name, roleType: role };
}

export async function deleteApiKey(db: Queryable, tenantId: string, id: string): Promise<void> {
  await db.transaction(async (tx) => {
    const [row] = await tx.delete(apiKeys).where(and(eq(apiKeys.tenantId, tenantId), eq(apiKeys.id, id))).returning();
    if (!row) throw notFound('api_key_not_found', 'API key', id);
    await recordEvent(tx, tenantId, 'core.apikey.deleted', { id, name: row.name, roleType: row.roleType });
  });
}

/** One indexed lookup per request: the key hash with its tenant. */
export async function findPrincipalByApiKey(db: Queryable, keyHash: string): Promise<Principal | undefined> {
  const [row] = await db
    .select({ tenantId: tenants.id, tenantName: tenants.name, tenantStatus: tenants.status, roleType: apiKeys.roleType })
    .from(apiKeys)
    .innerJoin(tenants, eq(tenants.id, apiKeys.tenantId))
    .where(eq(apiKeys.keyHash, keyHash));
  return row ? { ...row, roleType: row.roleType as RoleType } : undefined;
}

export async function getTenantStatus(db: Queryable, callerTenantId: string, id: string) {
  // A caller may only ask about its own tenant; any other id is answered like a missing one.
  if (id.toLowerCase() !== callerTenantId) throw notFound('tenant_not_found', 'Tenant', id);
  const [row] = await db.select({ status: tenants.status, message: tenants.statusMessage }).from(tenants).where(eq(tenants.id, callerTenantId));
  if (!row) throw notFound('tenant_not_found', 'Tenant', id);
  return { status: row.status, message: row.message || `The tenant is ${row.status}` };
}
