import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import type { FastifyInstance, FastifyServerOptions, RouteOptions } from 'fastify';

/**
 * Fastify compiles every route's validators (Ajv) and response serializers (fast-json-stringify) when the server
 * starts: about 1.6 s of CPU for this API's ~110 operations, three quarters of a start, before the first request and
 * whichever operations a process will ever serve (a worker serves none of them). Compiled on a route's first use
 * instead, a start costs what the routes used cost; the first call of an operation pays its own compilation (a few
 * milliseconds). A schema that cannot compile fails that operation's first request (with a 500) rather than the
 * start: `test/platform.schemas.test.ts` compiles every one (`compileEveryRoute`).
 */
export function lazily<F extends (...args: never[]) => unknown>(compile: () => F): F & { errors?: unknown; compileNow(): void } {
  let compiled: (F & { errors?: unknown }) | undefined;
  const run = ((...args: Parameters<F>) => {
    compiled ??= compile();
    const result = compiled(...args);
    // Fastify reads a failed validation's reasons from the function it was given.
    run.errors = compiled.errors;
    return result;
  }) as F & { errors?: unknown; compileNow(): void };
  run.compileNow = () => void (compiled ??= compile());
  return run;
}

type SerializerFactory = NonNullable<NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>['buildSerializer']>;

/** Fastify's own serializer compiler (`compilersFactory.buildSerializer`), each route's built on its first answer. */
export const buildSerializer = ((externalSchemas: unknown, serializerOpts: unknown) => {
  const compile = (SerializerSelector as unknown as () => (schemas: unknown, opts: unknown) => (route: unknown) => (data: unknown) => string)()(
    externalSchemas,
    serializerOpts,
  );
  return (route: unknown) => lazily(() => compile(route));
}) as unknown as SerializerFactory;

const routesOf = new WeakMap<FastifyInstance, RouteOptions[]>();

/** Keeps the routes registered from here on, for `compileEveryRoute` (references to their options only). */
export function trackRoutes(app: FastifyInstance): void {
  const routes: RouteOptions[] = [];
  routesOf.set(app, routes);
  app.addHook('onRoute', (route) => void routes.push(route));
}

/**
 * Compiles what a start no longer compiles: every tracked route's validators (params, querystring, headers, body) and
 * response serializers, with the app's shared schemas and options. Throws the first schema that does not compile,
 * naming its route; returns how many were compiled.
 */
export function compileEveryRoute(
  app: FastifyInstance,
  validatorFactory: (schemas: unknown, options: unknown) => (route: object) => { compileNow(): void },
  ajv: unknown,
): number {
  const schemas = app.getSchemas();
  const validator = validatorFactory(schemas, ajv);
  const serializer = (buildSerializer as unknown as (schemas: unknown, opts: unknown) => (route: object) => { compileNow(): void })(schemas, {});
  let compiled = 0;
  for (const route of routesOf.get(app) ?? []) {
    const schema = (route.schema ?? {}) as Record<string, unknown>;
    const where = `${[route.method].flat().join(',')} ${route.url}`;
    try {
      for (const httpPart of ['params', 'querystring', 'headers', 'body'] as const) {
        if (!schema[httpPart]) continue;
        validator({ schema: schema[httpPart], method: route.method, url: route.url, httpPart }).compileNow();
        compiled++;
      }
      for (const [httpStatus, response] of Object.entries((schema.response ?? {}) as Record<string, { content?: Record<string, { schema: unknown }> }>)) {
        // A response given per content type (`content`) has a serializer per type, as Fastify builds them.
        for (const one of response.content ? Object.values(response.content).map((c) => c.schema) : [response]) {
          serializer({ schema: one, method: route.method, url: route.url, httpStatus }).compileNow();
          compiled++;
        }
      }
    } catch (e) {
      throw new Error(`${where}: ${(e as Error).message}`, { cause: e });
    }
  }
  return compiled;
}
