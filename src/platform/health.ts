import type { FastifyInstance } from 'fastify';
import { ApiError } from './errors.ts';

export function registerHealth(app: FastifyInstance, ping: () => Promise<void>): void {
  const hide = { schema: { hide: true } };
  app.get('/healthz', hide, async () => ({ status: 'ok' }));
  app.get('/readyz', hide, async () => {
    try {
      await ping();
    } catch {
      throw new ApiError(503, 'database_unreachable', 'The database does not answer');
    }
    return { status: 'ok', database: 'ok' };
  });
}
