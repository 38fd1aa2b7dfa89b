import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Db } from '../../db/client.ts';
import * as s from './schemas.ts';
import * as admin from './service.ts';

const ref = Type.Ref('Error');
const errors = { 400: ref, 401: ref, 404: ref, 409: ref };

/** The operator's API: tenants and their legacy OAuth clients, guarded by the admin token. */
export const adminRoutes: FastifyPluginAsyncTypebox<{ db: Db }> = async (app, { db }) => {
  const tags = ['Admin'];
  const config = { admin: true };

  app.post('/admin/v1/tenants', {
    config,
    schema: { tags, summary: 'Create tenant (with its first Admin API key)', body: s.TenantCreate, response: { 201: s.TenantCreated, ...errors } },
  }, async (req, reply) => reply.status(201).send(await admin.createTenant(db, req.body.name)));

  app.get('/admin/v1/tenants', {
    config,
    schema: { tags, summary: 'List tenants', querystring: s.TenantListQuery, response: { 200: s.TenantList, ...errors } },
  }, (req) => admin.listTenants(db, req.query));

  app.get('/admin/v1/tenants/:id', {
    config,
    schema: { tags, summary: 'Get tenant', params: s.TenantParams, response: { 200: s.Tenant, ...errors } },
  }, (req) => admin.getTenant(db, req.params.id));

  app.patch('/admin/v1/tenants/:id', {
    config,
    schema: { tags, summary: 'Update tenant (status, channelsLimit)', params: s.TenantParams, body: s.TenantPatch, response: { 200: s.Tenant, ...errors } },
  }, (req) => admin.updateTenant(db, req.params.id, req.body));

  app.post('/admin/v1/tenants/:id/oauth-clients', {
    config,
    schema: { tags, summary: 'Create a legacy OAuth client', params: s.TenantParams, body: s.OAuthClientCreate, response: { 201: s.OAuthClientCreated, ...errors } },
  }, async (req, reply) =>
    reply.status(201).send(await admin.createOAuthClient(db, req.params.id, req.body.name, req.body.roleType ?? 'Admin')));
};

/** `POST /oauth/token`: client credentials, answered in RFC 6749's own shapes (§5.1, §5.2). */
export const oauthRoutes: FastifyPluginAsyncTypebox<{ db: Db; ttlSeconds: number }> = async (app, { db, ttlSeconds }) => {
  app.post('/oauth/token', {
    schema: {
      tags: ['Auth'],
      summary: 'Legacy OAuth client-credentials token',
      consumes: ['application/x-www-form-urlencoded'],
      body: s.TokenForm,
      response: { 200: s.TokenResponse, 400: s.OAuthErrorBody, 401: s.OAuthErrorBody },
    },
  }, async (req, reply) => {
    const form = { ...(req.body ?? {}) };
    const basic = req.headers.authorization?.match(/^Basic (.+)$/)?.[1];
    if (basic) {
      const [id, secret] = Buffer.from(basic, 'base64').toString().split(':');
      form.client_id ??= decodeURIComponent(id ?? '');
      form.client_secret ??= decodeURIComponent(secret ?? '');
    }
    reply.header('cache-control', 'no-store');
    try {
      return await admin.issueToken(db, form, ttlSeconds);
    } catch (e) {
      if (!(e instanceof admin.OAuthError)) throw e;
      return reply.status(e.error === 'invalid_client' ? 401 : 400).send({ error: e.error, error_description: e.description });
    }
  });
};
