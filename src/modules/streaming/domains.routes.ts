import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { PlatformContext } from '../../context.ts';
import { withErrors } from '../../platform/schemas.ts';
import { addDomain, deleteDomain, listDomains } from './domains.ts';

const NoBody = Type.Unsafe<undefined>({ type: 'null', description: 'no body' });

export const AllowedDomain = Type.Object({
  playerDomainId: Type.String(),
  analyticsDomainId: Type.String(),
  url: Type.String(),
});

export const domainRoutes: FastifyPluginAsyncTypebox<{ ctx: PlatformContext }> = async (app, { ctx }) => {
  const tags = ['Streaming domains'];

  app.get(
    '/streaming/v1/domains',
    {
      config: { access: 'read' },
      schema: {
        tags,
        summary: 'List allowed domains',
        description: "The domains whose pages may play the tenant's media and embed its player; none means any page may.",
        response: withErrors({ 200: Type.Array(AllowedDomain) }),
      },
    },
    (req) => listDomains(ctx, req.principal.tenantId),
  );

  app.post(
    '/streaming/v1/domains',
    {
      config: { access: 'manage' },
      schema: {
        tags,
        summary: 'Add allow domain',
        description:
          'Allows pages of a domain (`example.com`, `https://www.example.com`, `*.example.com` for its subdomains) to play the media. Once a tenant has one, media requests and embeds from pages of other domains are refused (403 `origin_not_allowed`).',
        body: Type.Object({ url: Type.String({ minLength: 1, maxLength: 2048 }) }),
        response: withErrors({ 200: AllowedDomain, 409: Type.Ref('Error') }),
      },
    },
    (req) => addDomain(ctx, req.principal.tenantId, req.body.url),
  );

  app.delete(
    '/streaming/v1/domains',
    {
      config: { access: 'manage' },
      schema: {
        tags,
        summary: 'Delete allow domain',
        description: 'Removes the allowed domain named by `playerDomainId` or `analyticsDomainId`.',
        querystring: Type.Object({
          playerDomainId: Type.Optional(Type.String({ maxLength: 64 })),
          analyticsDomainId: Type.Optional(Type.String({ maxLength: 64 })),
        }),
        response: withErrors({ 200: NoBody }),
      },
    },
    async (req, reply) => {
      await deleteDomain(ctx, req.principal.tenantId, req.query);
      return reply.status(200).send();
    },
  );
};
