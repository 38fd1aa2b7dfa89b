import { randomBytes } from 'node:crypto';
import { and, count, eq, gt, lt, or } from 'drizzle-orm';
import type { Db, Queryable } from '../../db/client.ts';
import { collectionVersions } from '../../db/collectionVersions.ts';
import { principalColumns, toPrincipal } from '../../db/principal.ts';
import { tenants } from '../../db/tenants.ts';
import { type Principal, sha256 } from '../../platform/auth.ts';
import { conflict, notFound, validationError } from '../../platform/errors.ts';
import { textSearch } from '../../platform/filters.ts';
import { isUuid, newId } from '../../platform/ids.ts';
import { envelope, orderBy, pageWindow, type PageRequest } from '../../platform/paging.ts';
import { isRoleType } from '../../platform/roles.ts';
import { createApiKey } from '../core/index.ts';
import { oauthClients, oauthTokens } from './tables.ts';

const TENANT_STATUSES = ['Active', 'Blocked', 'Deleted', 'SettingUp', 'Error'] as const;
const DNS_LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

type TenantRow = typeof tenants.$inferSelect;
const presentTenant = (t: TenantRow) => ({
  id: t.id,
  name: t.name,
  status: t.status,
  channelsLimit: t.channelsLimit,
  createDate: t.createDate,
  lastModificationDate: t.lastModificationDate,
});

export async function createTenant(db: Db, name: string) {
  if (!DNS_LABEL.test(name)) throw validationError('name', 'must be a DNS label: lowercase letters, digits and hyphens, 1-63 characters');
  return db.transaction(async (tx) => {
    const id = newId();
    const [row] = await tx.insert(tenants).values({ id, name }).onConflictDoNothing().returning();
    if (!row) throw conflict('tenant_name_taken', `A tenant named "${name}" already exists`);
    const apiKey = await createApiKey(tx, id, 'initial admin key', 'Admin');
    return { ...presentTenant(row), apiKey };
  });
}

const TENANT_SORTS = { CreateDate: tenants.createDate, Name: tenants.name, LastModificationDate: tenants.lastModificationDate };

export async function listTenants(db: Queryable, req: PageRequest) {
  const where = textSearch(req.query, tenants.name);
  const { limit, offset } = pageWindow(req);
  const [rows, [{ total }]] = await Promise.all([
    db
      .select()
      .from(tenants)
      .where(where)
      .orderBy(...orderBy(req, TENANT_SORTS, 'CreateDate', tenants.id))
      .limit(limit)
      .offset(offset),
    db.select({ total: count() }).from(tenants).where(where),
  ]);
  return envelope(rows.map(presentTenant), total, req);
}

/**
 * Only a real UUID is compared with the uuid column (anything else would make PostgreSQL fail); every other string
 * is a name. A DNS label can itself be shaped like a UUID, so such a string is tried as both, the id winning.
 */
async function tenantRow(db: Queryable, idOrName: string): Promise<TenantRow> {
  const wanted = idOrName.toLowerCase();
  const where = isUuid(wanted) ? or(eq(tenants.id, wanted), eq(tenants.name, wanted)) : eq(tenants.name, wanted);
  const rows = await db.select().from(tenants).where(where);
  const row = rows.find((r) => r.id === wanted) ?? rows[0];
  if (!row) throw notFound('tenant_not_found', 'Tenant', idOrName);
  return row;
}

export const getTenant = async (db: Queryable, idOrName: string) => presentTenant(await tenantRow(db, idOrName));

export interface TenantPatch {
  status?: string;
  statusMessage?: string;
  channelsLimit?: number;
}

/**
 * The operator changes a tenant's status and limits, nothing else: other properties (`name`, `id`, dates) are
 * ignored like any unknown one. A name is not renamed: it is the tenant's host (`{name}.{public domain}`) and how
 * the CLI and scripts find it (docs/decisions/platform.md, "Tenants are not renamed").
 */
export async function updateTenant(db: Queryable, idOrName: string, patch: TenantPatch) {
  const { status, statusMessage, channelsLimit } = patch;
  if (status !== undefined && !(TENANT_STATUSES as readonly string[]).includes(status)) {
    throw validationError('status', `must be one of ${TENANT_STATUSES.join(', ')}`);
  }
  const row = await tenantRow(db, idOrName);
  const [updated] = await db
    .update(tenants)
    .set({ status, statusMessage, channelsLimit, lastModificationDate: new Date() })
    .where(eq(tenants.id, row.id))
    .returning();
  return presentTenant(updated);
}

export async function createOAuthClient(db: Queryable, tenantId: string, name: string, roleType: string) {
  if (!isRoleType(roleType)) throw validationError('roleType', 'must be Admin, Editor or Viewer');
  const tenant = await tenantRow(db, tenantId);
  const clientId = newId();
  const clientSecret = randomBytes(32).toString('base64url');
  await db.insert(oauthClients).values({ clientId, tenantId: tenant.id, name, roleType, secretHash: sha256(clientSecret) });
  return { clientId, clientSecret, name, roleType, tenantId: tenant.id };
}

/** The modules a token's scope names, one `<module>:<tenant_id>` each. */
const SCOPE_MODULES = ['cvr', 'live', 'transcoder', 'drm', 'vod', 'kms', 'core', 'streaming', 'cap', 'notifications', 'watermarking'];

export class OAuthError extends Error {
  constructor(
    readonly error: 'invalid_request' | 'invalid_client' | 'unsupported_grant_type',
    readonly description: string,
  ) {
    super(description);
  }
}

/**
 * Control characters (NUL above all, which PostgreSQL cannot even compare) are in no client id or secret we issue,
 * and RFC 7617 forbids them in Basic credentials: such credentials are refused before the database sees them.
 */
// eslint-disable-next-line no-control-regex -- finding control characters is this pattern's job
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/;

export async function issueToken(db: Queryable, form: Record<string, string | undefined>, ttlSeconds: number) {
  const { client_id: clientId, client_secret: secret, grant_type: grantType } = form;
  if (!clientId || !secret || !grantType) throw new OAuthError('invalid_request', 'client_id, client_secret and grant_type are required');
  if (grantType !== 'client_credentials') throw new OAuthError('unsupported_grant_type', 'Only client_credentials is supported');
  if (CONTROL_CHARACTER.test(clientId) || CONTROL_CHARACTER.test(secret)) throw new OAuthError('invalid_client', 'Client authentication failed');
  const [client] = await db
    .select({ tenantId: oauthClients.tenantId, secretHash: oauthClients.secretHash, status: tenants.status })
    .from(oauthClients)
    .innerJoin(tenants, eq(tenants.id, oauthClients.tenantId))
    .where(eq(oauthClients.clientId, clientId));
  if (!client || client.secretHash !== sha256(secret)) throw new OAuthError('invalid_client', 'Client authentication failed');
  const token = randomBytes(32).toString('base64url');
  await db.delete(oauthTokens).where(lt(oauthTokens.expiresAt, new Date()));
  await db.insert(oauthTokens).values({ tokenHash: sha256(token), clientId, expiresAt: new Date(Date.now() + ttlSeconds * 1000) });
  return {
    access_token: token,
    scope: SCOPE_MODULES.map((m) => `${m}:${client.tenantId}`).join(' '),
    expires_in: ttlSeconds,
    token_type: 'Bearer',
  };
}

export async function findPrincipalByToken(db: Queryable, tokenHash: string, collection: string): Promise<Principal | undefined> {
  const [row] = await db
    .select({ ...principalColumns, roleType: oauthClients.roleType })
    .from(oauthTokens)
    .innerJoin(oauthClients, eq(oauthClients.clientId, oauthTokens.clientId))
    .innerJoin(tenants, eq(tenants.id, oauthClients.tenantId))
    .leftJoin(collectionVersions, and(eq(collectionVersions.tenantId, tenants.id), eq(collectionVersions.collection, collection)))
    .where(and(eq(oauthTokens.tokenHash, tokenHash), gt(oauthTokens.expiresAt, new Date())));
  return row ? toPrincipal(row) : undefined;
}
