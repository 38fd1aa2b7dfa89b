import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { PlatformContext } from './context.ts';
import { authPlugin } from './platform/auth.ts';
import { clientErrorHandler, registerHostRequirement } from './platform/clientErrors.ts';
import { frameworkErrors, registerErrorHandling } from './platform/errors.ts';
import { registerBackup } from './platform/backupRoute.ts';
import { registerHealth } from './platform/health.ts';
import { registerIdSpelling } from './platform/ids.ts';
import { registerMetrics } from './platform/metrics.ts';
import { registerOpenApi } from './platform/openapi.ts';
import { registerBodyDrain } from './platform/bodyDrain.ts';
import { registerBodyParsing } from './platform/parsing.ts';
import { registerResponseCheck } from './platform/responseCheck.ts';
import { registerRateLimit } from './platform/rateLimit.ts';
import { registerRequestIds, requestIdOf } from './platform/requestContext.ts';
import { buildSerializer, trackRoutes } from './platform/lazyCompile.ts';
import { ajvOptions, buildValidator } from './platform/validation.ts';
import { ErrorBody } from './platform/schemas.ts';
import { findPrincipalByToken } from './modules/admin/service.ts';
import { findPrincipalByApiKey } from './modules/core/service.ts';
import { MODULES } from './modules/index.ts';
import { FsObjectStore } from './storage/fsStore.ts';
import { storageRoutes } from './storage/routes.ts';

export interface AppOptions {
  adminToken: string;
  /** Log requests through `ctx.log` (off by default: tests and benchmarks). */
  logger?: boolean;
}

/**
 * The HTTP side: platform plugins first, then each module's routes. Authentication asks the two modules that own
 * principals (admin: OAuth bearer tokens, core: API keys) directly: it is the platform's, not a per-module hook.
 */
export async function buildApp(ctx: PlatformContext, { adminToken, logger = false }: AppOptions): Promise<FastifyInstance> {
  const { config, database, db } = ctx;
  const app = Fastify({
    ...(logger ? { loggerInstance: ctx.log as FastifyBaseLogger } : { logger: false }),
    // The id of a request follows it into the jobs and webhook deliveries it causes (platform/requestContext.ts).
    genReqId: requestIdOf,
    logController: new LogController({ requestIdLogLabel: 'requestId' }),
    trustProxy: true,
    // Checked against Content-Length before a byte of the body is read (and as a chunked body arrives).
    bodyLimit: config.bodyLimitBytes,
    frameworkErrors,
    clientErrorHandler,
    // Node would answer a Host-less HTTP/1.1 request itself, with an empty 400; registerHostRequirement does, in our shape.
    http: { requireHostHeader: false },
    // Fastify's default (100) would answer 414 for ids the spec allows (event ids up to 128 characters); schemas limit them.
    routerOptions: { maxParamLength: 512 },
    // Query and path strings are coerced to the schema's types; JSON bodies are not (platform/validation.ts).
    ajv: ajvOptions,
    schemaController: { compilersFactory: { buildValidator, buildSerializer } },
  }).withTypeProvider<TypeBoxTypeProvider>();

  trackRoutes(app);
  app.addSchema(ErrorBody);
  registerErrorHandling(app);
  registerHostRequirement(app);
  registerBodyParsing(app);
  // The rest of a refused body is read before the refusal is sent: up to 4 times the limit (16 MiB at least), for
  // MEDIAPLANE_BODY_DRAIN_SECONDS (10 s).
  registerBodyDrain(app, { maxBytes: Math.max(16 * 1024 * 1024, 4 * config.bodyLimitBytes), maxMs: config.bodyDrainMs });
  if (config.responseCheck) registerResponseCheck(app);
  registerIdSpelling(app);
  registerRequestIds(app);
  await registerOpenApi(app, config.publicUrl.origin);
  await app.register(authPlugin, {
    adminToken,
    publicHost: config.publicUrl.hostname,
    authenticator: {
      byApiKey: (hash, collection) => findPrincipalByApiKey(db, hash, collection),
      byBearerToken: (hash, collection) => findPrincipalByToken(db, hash, collection),
    },
  });
  registerHealth(app, database.ping);
  registerMetrics(app, ctx.metrics, { adminToken, metricsToken: config.metricsToken });
  await registerRateLimit(app, {
    max: config.rateLimitPerMinute,
    windowMs: 60_000,
    shared: database.kind === 'postgres' ? db : undefined,
  });
  registerBackup(app, ctx);

  if (ctx.store instanceof FsObjectStore) await app.register(storageRoutes, { store: ctx.store });
  for (const module of MODULES) await module.routes?.(app, ctx);
  return app;
}
