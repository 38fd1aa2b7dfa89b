import { randomBytes } from 'node:crypto';
import { and, count, eq, ilike, sql } from 'drizzle-orm';
import type { Queryable } from '../../db/client.ts';
import { collectionVersions } from '../../db/collectionVersions.ts';
import { principalColumns, toPrincipal } from '../../db/principal.ts';
import { tenants } from '../../db/tenants.ts';
import { type Principal, sha256 } from '../../platform/auth.ts';
import { ApiError, notFound, validationError } from '../../platform/errors.ts';
import { likePattern } from '../../platform/filters.ts';
import { newId } from '../../platform/ids.ts';
import { envelope, orderBy, pageWindow, type PageRequest } from '../../platform/paging.ts';
import { prepared } from '../../platform/prepared.ts';
import { isRoleType, ROLES, type RoleType } from '../../platform/roles.ts';
import { recordEvent } from '../../platform/events.ts';
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

/**
 * The hottest list of the platform (and the benchmark's): its statements are prepared per shape (sort, direction,
 * search or not), the page and the count run side by side.
 */
export async function listApiKeys(db: Queryable, tenantId: string, req: PageRequest) {
  const order = orderBy(req, SORTS, 'CreatedAt', apiKeys.id);
  const { limit, offset } = pageWindow(req);
  const search = req.query ? 'q' : '';
  const where = () => and(eq(apiKeys.tenantId, sql.placeholder('tenantId')), search ? ilike(apiKeys.name, sql.placeholder('pattern')) : undefined);
  const page = prepared(db, `core_api_keys_${(req.sort ?? 'CreatedAt').toLowerCase()}_${req.desc ? 'desc' : 'asc'}${search}`, (name) =>
    db
      .select({ id: apiKeys.id, name: apiKeys.name, roleType: apiKeys.roleType, createdAt: apiKeys.createdAt })
      .from(apiKeys)
      .where(where())
      .orderBy(...order)
      .limit(sql.placeholder('limit'))
      .offset(sql.placeholder('offset'))
      .prepare(name),
  );
  const total = prepared(db, `core_api_keys_count${search}`, (name) => db.select({ total: count() }).from(apiKeys).where(where()).prepare(name));
  const values = { tenantId, pattern: req.query ? likePattern(req.query) : '', limit, offset };
  const [rows, [{ total: totalCount }]] = await Promise.all([page.execute(values), total.execute(values)]);
  return envelope(rows.map(present), totalCount, req);
}

function present(row: Pick<typeof apiKeys.$inferSelect, 'id' | 'name' | 'roleType' | 'createdAt'>) {
  const role = ROLES[row.roleType as RoleType];
  return { id: row.id, name: row.name, roleName: role.name, roleId: role.id, roleType: role.type, createdAt: row.createdAt };
}

export async function getApiKey(db: Queryable, tenantId: string, id: string) {
  const [row] = await db
    .select()
    .from(apiKeys)
    .where(and(eq(apiKeys.tenantId, tenantId), eq(apiKeys.id, id)));
  if (!row) throw notFound('api_key_not_found', 'API key', id);
  return present(row);
}

export async function updateApiKey(db: Queryable, tenantId: string, id: string, name: string, roleType: string) {
  const role = checkRole(roleType);
  return db.transaction(async (tx) => {
    if (role !== 'Admin') await keepOneAdminKey(tx, tenantId, id);
    const [row] = await tx
      .update(apiKeys)
      .set({ name, roleType: role })
      .where(and(eq(apiKeys.tenantId, tenantId), eq(apiKeys.id, id)))
      .returning();
    if (!row) throw notFound('api_key_not_found', 'API key', id);
    return { id: row.id, name: row.name, roleType: role };
  });
}

export async function deleteApiKey(db: Queryable, tenantId: string, id: string): Promise<void> {
  await db.transaction(async (tx) => {
    await keepOneAdminKey(tx, tenantId, id);
    const [row] = await tx
      .delete(apiKeys)
      .where(and(eq(apiKeys.tenantId, tenantId), eq(apiKeys.id, id)))
      .returning();
    if (!row) throw notFound('api_key_not_found', 'API key', id);
    await recordEvent(tx, tenantId, 'core.apikey.deleted', { id, name: row.name, roleType: row.roleType });
  });
}

/**
 * Keys are managed with keys: a tenant whose last Admin key is deleted or demoted could never manage keys again
 * (the operator API creates tenants, not keys). The tenant row lock serializes two such changes racing each other.
 */
async function keepOneAdminKey(tx: Queryable, tenantId: string, changedKeyId: string): Promise<void> {
  await tx.select({ id: tenants.id }).from(tenants).where(eq(tenants.id, tenantId)).for('update');
  // PostgreSQL compares the ids, as it does when it deletes or updates the key: no spelling of the id can differ.
  const [admins] = await tx
    .select({
      changed: sql<number>`count(*) filter (where ${apiKeys.id} = ${changedKeyId})`.mapWith(Number),
      others: sql<number>`count(*) filter (where ${apiKeys.id} <> ${changedKeyId})`.mapWith(Number),
    })
    .from(apiKeys)
    .where(and(eq(apiKeys.tenantId, tenantId), eq(apiKeys.roleType, 'Admin')));
  if (admins.changed > 0 && admins.others === 0) {
    throw new ApiError(409, 'last_admin_key', "This is the tenant's last Admin key; create another Admin key before deleting or demoting it");
  }
}

/**
 * One indexed lookup per request, never cached, so that a deleted key stops working at once. It runs on every
 * authenticated call, hence a prepared statement; it also reads the version of the route's cached collection.
 */
export async function findPrincipalByApiKey(db: Queryable, keyHash: string, collection: string): Promise<Principal | undefined> {
  const query = prepared(db, 'core_principal_by_api_key', (name) =>
    db
      .select({ ...principalColumns, roleType: apiKeys.roleType })
      .from(apiKeys)
      .innerJoin(tenants, eq(tenants.id, apiKeys.tenantId))
      .leftJoin(collectionVersions, and(eq(collectionVersions.tenantId, tenants.id), eq(collectionVersions.collection, sql.placeholder('collection'))))
      .where(eq(apiKeys.keyHash, sql.placeholder('keyHash')))
      .prepare(name),
  );
  const [row] = await query.execute({ keyHash, collection });
  return row ? toPrincipal(row) : undefined;
}

export async function getTenantStatus(db: Queryable, callerTenantId: string, id: string) {
  // A caller may only ask about its own tenant; any other id is answered like a missing one.
  if (id.toLowerCase() !== callerTenantId) throw notFound('tenant_not_found', 'Tenant', id);
  const [row] = await db.select({ status: tenants.status, message: tenants.statusMessage }).from(tenants).where(eq(tenants.id, callerTenantId));
  if (!row) throw notFound('tenant_not_found', 'Tenant', id);
  return { status: row.status, message: row.message || `The tenant is ${row.status}` };
}

/**
 * The caller's own tenant (id, name, status) and the role of the key that asks (not in the spec): what a client such as
 * the console shows after signing in, and which of its controls the key may use.
 */
export async function getOwnTenant(db: Queryable, principal: Principal, id: string) {
  const tenant = await getTenantStatus(db, principal.tenantId, id);
  const role = ROLES[principal.roleType];
  return { id: principal.tenantId, name: principal.tenantName, ...tenant, roleType: role.type, grants: [...role.grants] };
}
