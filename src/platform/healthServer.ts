import Fastify, { type FastifyInstance } from 'fastify';
import { registerErrorHandling } from './errors.ts';
import { registerHealth } from './health.ts';
import { registerMetrics, type Metrics } from './metrics.ts';

/**
 * The HTTP server of a process that serves no API (`worker`, `live`): `/healthz`, `/readyz` and `/metrics` only, on
 * MEDIAPLANE_HEALTH_PORT, so that a container runtime can check it and a scraper read it as it does an API process.
 */
export async function listenForHealth(opts: {
  port: number;
  host: string;
  ping: () => Promise<void>;
  metrics: Metrics;
  adminToken: string;
  metricsToken?: string;
}): Promise<FastifyInstance> {
  const app = Fastify({ logger: false });
  registerErrorHandling(app);
  registerHealth(app, opts.ping);
  registerMetrics(app, opts.metrics, { adminToken: opts.adminToken, metricsToken: opts.metricsToken });
  await app.listen({ port: opts.port, host: opts.host });
  return app;
}
