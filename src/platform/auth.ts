import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { ApiError } from './errors.ts';
import type { Access, RoleType } from './roles.ts';
import { ROLES } from './roles.ts';

export interface Principal {
  tenantId: string;
  tenantName: string;
  tenantStatus: string;
  roleType: RoleType;
  /** The version of the route's `listCache` collection for this tenant, read with the credentials (0: never changed). */
  collectionVersion?: number;
}

/**
 * Finds who is calling; implemented by the module that owns keys and tokens. `collection` is the route's `listCache`
 * collection ('' for none), whose version comes back in the same round trip.
 */
interface Authenticator {
  byApiKey(keyHash: string, collection: string): Promise<Principal | undefined>;
  byBearerToken(tokenHash: string, collection: string): Promise<Principal | undefined>;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Set on every tenant operation: the permission the caller's role needs. */
    access?: Access;
    /** Set on operator routes: guarded by the admin bearer token. */
    admin?: boolean;
    /** The operation still answers a tenant that is not Active (the tenant status operation, which reports it). */
    evenWhenBlocked?: boolean;
  }
  interface FastifyRequest {
    principal: Principal;
  }
}

export const sha256 = (secret: string): string => createHash('sha256').update(secret).digest('hex');

/** The credentials of `Authorization: Bearer <token>`; the scheme name is case-insensitive (RFC 7235). */
export function bearerToken(authorization: string | undefined): string | undefined {
  const m = /^bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
  return m?.[1];
}

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(sha256(a));
  const y = Buffer.from(sha256(b));
  return timingSafeEqual(x, y);
}

export interface AuthOptions {
  authenticator: Authenticator;
  adminToken: string;
  /** Host name of MEDIAPLANE_PUBLIC_URL; `{tenant}.{publicHost}` is a tenant's own host. */
  publicHost: string;
}

/** The tenant label of a request on `{tenant}.{publicHost}`, or undefined on any other host. */
function tenantFromHost(hostHeader: string | undefined, publicHost: string): string | undefined {
  if (!hostHeader) return undefined;
  const host = hostHeader.replace(/:\d+$/, '').toLowerCase();
  const suffix = `.${publicHost.toLowerCase()}`;
  return host.endsWith(suffix) ? host.slice(0, -suffix.length) : undefined;
}

async function authenticateTenant(request: FastifyRequest, opts: AuthOptions, access: Access, evenWhenBlocked: boolean): Promise<void> {
  const collection = request.routeOptions.config.listCache ?? '';
  const apiKey = request.headers['x-api-key'];
  const bearer = bearerToken(request.headers.authorization);
  let principal: Principal | undefined;
  if (typeof apiKey === 'string' && apiKey) {
    principal = await opts.authenticator.byApiKey(sha256(apiKey), collection);
    if (!principal) throw new ApiError(401, 'invalid_api_key', 'The X-Api-Key is unknown or has been deleted');
  } else if (bearer) {
    principal = await opts.authenticator.byBearerToken(sha256(bearer), collection);
    if (!principal) throw new ApiError(401, 'invalid_token', 'The bearer token is unknown or has expired');
  } else {
    throw new ApiError(401, 'missing_credentials', 'Send an X-Api-Key header (or a legacy OAuth bearer token)');
  }
  const tenantId = request.headers['x-tenant-id'];
  if (typeof tenantId !== 'string' || !tenantId) {
    throw new ApiError(400, 'validation_failed', 'X-Tenant-Id: the header is required', [{ field: 'X-Tenant-Id', message: 'is required' }]);
  }
  if (tenantId.toLowerCase() !== principal.tenantId) {
    throw new ApiError(403, 'tenant_mismatch', 'X-Tenant-Id does not match the tenant of the credentials');
  }
  const hostTenant = tenantFromHost(request.headers.host, opts.publicHost);
  if (hostTenant !== undefined && hostTenant !== principal.tenantName) {
    throw new ApiError(403, 'tenant_mismatch', `The host belongs to tenant "${hostTenant}", not to the tenant of the credentials`);
  }
  if (principal.tenantStatus !== 'Active' && !evenWhenBlocked) {
    throw new ApiError(403, 'tenant_blocked', `The tenant is ${principal.tenantStatus}; API calls are refused`);
  }
  if (!ROLES[principal.roleType].grants.includes(access)) {
    throw new ApiError(403, 'forbidden', `The ${principal.roleType} role does not allow this operation (needs ${access})`);
  }
  request.principal = principal;
}

function authenticateAdmin(request: FastifyRequest, opts: AuthOptions): void {
  const token = bearerToken(request.headers.authorization);
  if (!token) throw new ApiError(401, 'missing_credentials', 'Send Authorization: Bearer <admin token>');
  if (!sameSecret(token, opts.adminToken)) throw new ApiError(401, 'invalid_admin_token', 'The admin token is wrong');
}

/** Runs before body parsing so that unauthenticated requests cost no more than a header check and one lookup. */
export const authPlugin = fp<AuthOptions>(async (app: FastifyInstance, opts) => {
  app.decorateRequest('principal', null as unknown as Principal);
  app.addHook('onRequest', async (request) => {
    const config = request.routeOptions.config;
    if (config.admin) return authenticateAdmin(request, opts);
    if (config.access) return authenticateTenant(request, opts, config.access, config.evenWhenBlocked === true);
  });
});
