import type { FastifyInstance, RouteOptions } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { strictBodySchema } from './strictBodies.ts';

/** `list_vod_assets` from "List VOD assets": the spec's own operation names, in the snake case of its module index. */
const operationIdOf = (summary: string): string =>
  summary
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_|_$/g, '');

interface DocumentedSchema {
  hide?: boolean;
  summary?: string;
  description?: string;
  tags?: string[];
  operationId?: string;
}

/**
 * Every documented route states its operation: a summary in the spec's words, a one-line description and its
 * module's tag. A route without them is refused when it is registered, so a new module cannot ship an operation that
 * generators and readers cannot name. The `operationId` follows from the summary unless the route gives one.
 */
function documentRoute(route: RouteOptions, operationIds: Map<string, string>, tags: Set<string>): void {
  const schema = route.schema as DocumentedSchema | undefined;
  if (!schema || schema.hide) return;
  const methods = [route.method].flat();
  // Fastify's automatic HEAD twin of a GET shares its schema; swagger leaves it out of the document.
  if (methods.length === 1 && methods[0] === 'HEAD') return;
  const name = `${methods.join(',')} ${route.url}`;
  const missing = (['summary', 'description'] as const).filter((k) => !schema[k]?.trim());
  if (!schema.tags?.length) missing.push('tags' as never);
  if (missing.length) throw new Error(`route ${name} has no ${missing.join(', ')}: every operation is documented (src/platform/openapi.ts)`);
  schema.operationId ??= operationIdOf(schema.summary!);
  const other = operationIds.get(schema.operationId);
  if (other && other !== name) throw new Error(`routes ${other} and ${name} both have the operationId ${schema.operationId}`);
  operationIds.set(schema.operationId, name);
  for (const t of schema.tags!) tags.add(t);
}

type Paths = Record<string, Record<string, { requestBody?: { required?: boolean }; 'x-optionalBody'?: boolean }>>;

/**
 * @fastify/swagger marks every request body required (Fastify asks for one when a route has a body schema); an
 * operation that reads no body as `{}` (platform/parsing.ts, OPTIONAL_BODY) says so instead.
 */
function optionalBodies(paths: Paths): void {
  for (const item of Object.values(paths ?? {})) {
    for (const op of Object.values(item)) {
      if (!op || typeof op !== 'object' || !op['x-optionalBody']) continue;
      delete op['x-optionalBody'];
      if (op.requestBody) op.requestBody.required = false;
    }
  }
}

/** `/openapi.json` is generated from the route schemas; `/docs` is the interactive UI over it. */
export async function registerOpenApi(app: FastifyInstance, publicUrl: string): Promise<void> {
  const operationIds = new Map<string, string>();
  const tags = new Set<string>();
  app.addHook('onRoute', (route) => documentRoute(route, operationIds, tags));
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Mediaplane — Media Platform API',
        version: '1.0.0',
        description:
          'Every tenant operation takes `X-Api-Key` and `X-Tenant-Id`. Errors share one shape: ' +
          '`{ status: { code, status, message }, errors? }`; codes are listed in docs/errors.md. Besides the statuses ' +
          'each operation lists, any operation may answer 413 (body too large), 414 (path parameter too long), 415 ' +
          '(Content-Type), 429 (rate limit), 500, 503 and 507 (storage full).',
        license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
        // The operator of this installation answers for it; MEDIAPLANE_PUBLIC_URL is where they serve it.
        contact: { name: 'Mediaplane operator', url: publicUrl },
      },
      servers: [{ url: publicUrl.replace(/\/+$/, '') }],
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
    // Request bodies as the validator takes them: strict objects (platform/strictBodies.ts).
    transform: ({ schema, url }) => {
      const body = (schema as { body?: unknown } | undefined)?.body;
      return { schema: body === undefined ? schema : ({ ...schema, body: strictBodySchema(body, false) } as typeof schema), url };
    },
    // One tag per module, listed once at the top in order of name.
    transformObject: (documents) => {
      const { openapiObject } = documents as { openapiObject: Record<string, unknown> };
      optionalBodies(openapiObject.paths as Paths);
      return { ...openapiObject, tags: [...tags].sort().map((name) => ({ name, description: `${name} operations` })) };
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}
