import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyError } from 'fastify';
import formbody from '@fastify/formbody';
import { Type } from 'typebox';
import type { Db } from '../../db/client.ts';
import { ApiError, fieldErrors, isUnstorableText } from '../../platform/errors.ts';
import * as s from './schemas.ts';
import * as admin from './service.ts';

const ref = Type.Ref('Error');
const errors = { 400: ref, 401: ref, 404: ref, 409: ref };
const BASIC_CHALLENGE = 'Basic realm="mediaplane"';

/** The operator's API: tenants and their legacy OAuth clients, guarded by the admin token. */
export const adminRoutes: FastifyPluginAsyncTypebox<{ db: Db }> = async (app, { db }) => {
  const tags = ['Admin'];
  const security = [{ adminToken: [] }];
  const config = { admin: true };

  app.post(
    '/admin/v1/tenants',
    {
      config,
      schema: {
        tags,
        security,
        summary: 'Create tenant',
        description: 'Creates a tenant with its first Admin API key, which is shown only in this answer.',
        body: s.TenantCreate,
        response: { 201: s.TenantCreated, ...errors },
      },
    },
    async (req, reply) => reply.status(201).send(await admin.createTenant(db, req.body.name)),
  );

  app.get(
    '/admin/v1/tenants',
    {
      config,
      schema: {
        tags,
        security,
        summary: 'List tenants',
        description: 'Lists the tenants of this installation (operator token).',
        querystring: s.TenantListQuery,
        response: { 200: s.TenantList, ...errors },
      },
    },
    (req) => admin.listTenants(db, req.query),
  );

  app.get(
    '/admin/v1/tenants/:id',
    {
      config,
      schema: {
        tags,
        security,
        summary: 'Get tenant',
        description: 'Reads one tenant, its status and its channel limit (operator token).',
        params: s.TenantParams,
        response: { 200: s.Tenant, ...errors },
      },
    },
    (req) => admin.getTenant(db, req.params.id),
  );

  app.patch(
    '/admin/v1/tenants/:id',
    {
      config,
      schema: {
        tags,
        security,
        summary: 'Update tenant',
        description: "Changes a tenant's status (Active, Blocked, ...) or channel limit (operator token).",
        params: s.TenantParams,
        body: s.TenantPatch,
        response: { 200: s.Tenant, ...errors },
      },
    },
    (req) => admin.updateTenant(db, req.params.id, req.body),
  );

  app.post(
    '/admin/v1/tenants/:id/oauth-clients',
    {
      config,
      schema: {
        tags,
        security,
        summary: 'Create OAuth client',
        description: 'Creates a client id and secret for the legacy OAuth client-credentials flow; the secret is shown only once.',
        params: s.TenantParams,
        body: s.OAuthClientCreate,
        response: { 201: s.OAuthClientCreated, ...errors },
      },
    },
    async (req, reply) => reply.status(201).send(await admin.createOAuthClient(db, req.params.id, req.body.name, req.body.roleType ?? 'Admin')),
  );
};

/**
 * `POST /oauth/token`: client credentials, answered in RFC 6749's own shapes (§5.1, §5.2), errors included: this
 * scope has its own error handler, so a malformed form is `invalid_request`, never the platform's error body.
 */
export const oauthRoutes: FastifyPluginAsyncTypebox<{ db: Db; ttlSeconds: number }> = async (app, { db, ttlSeconds }) => {
  // Form bodies are accepted here only; every other operation takes JSON.
  await app.register(formbody);
  app.setErrorHandler((error: FastifyError | ApiError, request, reply) => {
    const refusal = oauthRefusal(error);
    if (!refusal) {
      request.log.error({ err: error }, 'unhandled error');
      return reply.status(500).send({ error: 'server_error', error_description: 'An unexpected error occurred; it has been logged' });
    }
    if (refusal.error === 'invalid_client' && /^basic\s/i.test(request.headers.authorization ?? '')) reply.header('www-authenticate', BASIC_CHALLENGE);
    return reply.status(refusal.error === 'invalid_client' ? 401 : 400).send(refusal);
  });

  app.post(
    '/oauth/token',
    {
      schema: {
        tags: ['Auth'],
        summary: 'Get OAuth token',
        description: 'Exchanges a legacy OAuth client id and secret for a bearer access token (RFC 6749 client credentials).',
        security: [],
        consumes: ['application/x-www-form-urlencoded'],
        body: s.TokenForm,
        response: { 200: s.TokenResponse, 400: s.OAuthErrorBody, 401: s.OAuthErrorBody, 500: s.OAuthErrorBody },
      },
    },
    async (req, reply) => {
      const form = { ...(req.body ?? {}) };
      const basic = /^basic\s+(.+)$/i.exec(req.headers.authorization ?? '')?.[1];
      if (basic) {
        // RFC 6749 §2.3.1: id and secret are form-encoded, then joined by the first colon.
        const decoded = Buffer.from(basic, 'base64').toString();
        const colon = decoded.indexOf(':');
        const decode = (v: string) => decodeURIComponent(v.replace(/\+/g, ' '));
        try {
          form.client_id ??= decode(colon < 0 ? decoded : decoded.slice(0, colon));
          form.client_secret ??= decode(colon < 0 ? '' : decoded.slice(colon + 1));
        } catch {
          return reply.status(400).send({ error: 'invalid_request', error_description: 'The Basic credentials are not form-encoded' });
        }
      }
      reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
      try {
        return await admin.issueToken(db, form, ttlSeconds);
      } catch (e) {
        if (!(e instanceof admin.OAuthError)) throw e;
        if (e.error === 'invalid_client' && basic) reply.header('www-authenticate', BASIC_CHALLENGE);
        return reply.status(e.error === 'invalid_client' ? 401 : 400).send({ error: e.error, error_description: e.description });
      }
    },
  );
};

/**
 * What the platform throws before the handler runs (the NUL check, validation, body parsing: our ApiError or
 * Fastify's errors) in RFC 6749's words: a refused authentication is `invalid_client`, any other refusal of the
 * request `invalid_request`; undefined for a server fault.
 */
function oauthRefusal(error: FastifyError | ApiError): OAuthRefusal | undefined {
  if (isUnstorableText(error)) return { error: 'invalid_request', error_description: 'The request holds characters that cannot be stored (such as NUL)' };
  const status = error instanceof ApiError ? error.httpStatus : error.statusCode;
  if (status === undefined || status < 400 || status >= 500) return undefined;
  return { error: status === 401 ? 'invalid_client' : 'invalid_request', error_description: describeRefusal(error) };
}

interface OAuthRefusal {
  error: 'invalid_request' | 'invalid_client';
  error_description: string;
}

function describeRefusal(error: FastifyError | ApiError): string {
  if (error instanceof ApiError) return error.message;
  if (error.validation) {
    const problems = fieldErrors(error.validation, error.validationContext).map((e) => `${e.field} ${e.message}`);
    return `client_id, client_secret and grant_type must each be given once as form fields (${problems.join('; ')})`;
  }
  return `The request could not be read: send application/x-www-form-urlencoded fields (${error.message})`;
}
