import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Db } from '../../db/client.ts';
import { cachedList, type ListCache } from '../../platform/listCache.ts';
import { withErrors } from '../../platform/schemas.ts';
import * as s from './schemas.ts';
import * as core from './service.ts';

export const coreRoutes: FastifyPluginAsyncTypebox<{ db: Db; listCache?: ListCache }> = async (app, { db, listCache }) => {
  const tags = ['Core'];

  app.get(
    '/core/v1/settings/tenant/:id/status',
    {
      config: { access: 'read', evenWhenBlocked: true },
      schema: {
        tags,
        summary: 'Get tenant status',
        description: "Reads the tenant's status (Active, Blocked, ...) and a message.",
        params: s.TenantStatusParams,
        response: withErrors({ 200: s.TenantStatus }),
      },
    },
    (req) => core.getTenantStatus(db, req.principal.tenantId, req.params.id),
  );

  app.get(
    '/core/v1/settings/tenant/:id',
    {
      config: { access: 'read', evenWhenBlocked: true },
      schema: {
        tags,
        summary: 'Get own tenant',
        description:
          "Not in the spec: the caller's own tenant (id, name, status, message) and the calling key's role and grants, which a client such as the console reads after signing in.",
        params: s.TenantStatusParams,
        response: withErrors({ 200: s.OwnTenant }),
      },
    },
    (req) => core.getOwnTenant(db, req.principal, req.params.id),
  );

  app.get(
    '/core/v1/api-key',
    {
      config: { access: 'manage', listCache: 'core.api-keys' },
      schema: {
        tags,
        summary: 'Get API keys',
        description: "Lists the tenant's API keys (never the keys themselves).",
        querystring: s.ApiKeyListQuery,
        response: withErrors({ 200: s.ApiKeyList }),
      },
    },
    (req, reply) => cachedList(listCache, req, reply, () => core.listApiKeys(db, req.principal.tenantId, req.query)),
  );

  app.post(
    '/core/v1/api-key',
    {
      config: { access: 'manage' },
      schema: {
        tags,
        summary: 'Create API key',
        description: 'Creates an API key with a role; the key is shown only in this answer.',
        body: s.ApiKeyWrite,
        response: withErrors({ 200: s.ApiKeyCreated }),
      },
    },
    (req) => core.createApiKey(db, req.principal.tenantId, req.body.name, req.body.roleType),
  );

  app.get(
    '/core/v1/api-key/:id',
    {
      config: { access: 'manage' },
      schema: {
        tags,
        summary: 'Get single API key',
        description: "Reads one API key's name and role.",
        params: s.ApiKeyParams,
        response: withErrors({ 200: s.ApiKeySingle }),
      },
    },
    (req) => core.getApiKey(db, req.principal.tenantId, req.params.id),
  );

  app.put(
    '/core/v1/api-key/:id',
    {
      config: { access: 'manage' },
      schema: {
        tags,
        summary: 'Update API key',
        description: "Changes an API key's name and role.",
        params: s.ApiKeyParams,
        body: s.ApiKeyWrite,
        response: withErrors({ 200: s.ApiKeyWritten }),
      },
    },
    (req) => core.updateApiKey(db, req.principal.tenantId, req.params.id, req.body.name, req.body.roleType),
  );

  app.delete(
    '/core/v1/api-key/:id',
    {
      config: { access: 'manage' },
      schema: {
        tags,
        summary: 'Delete API key',
        description: 'Deletes an API key; requests with it are refused from then on.',
        params: s.ApiKeyParams,
        response: withErrors({ 204: { type: 'null' } }),
      },
    },
    async (req, reply) => {
      await core.deleteApiKey(db, req.principal.tenantId, req.params.id);
      return reply.status(204).send();
    },
  );
};
