import type { FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';

/** `/openapi.json` is generated from the route schemas; `/docs` is the interactive UI over it. */
export async function registerOpenApi(app: FastifyInstance, publicUrl: string): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Mediaplane — Media Platform API',
        version: '1.0.0',
        description:
          'Every tenant operation takes `X-Api-Key` and `X-Tenant-Id`. Errors share one shape: ' +
          '`{ status: { code, status, message }, errors? }`; codes are listed in docs/errors.md.',
      },
      servers: [{ url: publicUrl }],
      components: {
        securitySchemes: {
          apiKey: { type: 'apiKey', in: 'header', name: 'X-Api-Key' },
          tenantId: { type: 'apiKey', in: 'header', name: 'X-Tenant-Id' },
          bearer: { type: 'http', scheme: 'bearer', description: 'A legacy OAuth access token from POST /oauth/token' },
          adminToken: { type: 'http', scheme: 'bearer', description: 'The operator token (MEDIAPLANE_ADMIN_TOKEN)' },
        },
      },
      // Tenant operations: an API key, or a legacy OAuth token in its place; X-Tenant-Id either way.
      security: [
        { apiKey: [], tenantId: [] },
        { bearer: [], tenantId: [] },
      ],
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}
