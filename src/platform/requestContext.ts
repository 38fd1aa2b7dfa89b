import { AsyncLocalStorage } from 'node:async_hooks';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { newId } from './ids.ts';

/**
 * The request a piece of work is done for. Set for the handler of every request that may change something, and for
 * every job run (from the id its payload carries), so that the outbox rows and jobs written meanwhile record it
 * without being handed it: a request's id follows it into the jobs it enqueues, the events it records and the webhook
 * deliveries of those events (docs/decisions/observability.md).
 */
const storage = new AsyncLocalStorage<{ requestId: string }>();

export const currentRequestId = (): string | undefined => storage.getStore()?.requestId;

/** Runs `fn` as part of the work of request `requestId` (none: as part of no request). */
export function withRequestId<T>(requestId: string | undefined, fn: () => T): T {
  return requestId ? storage.run({ requestId }, fn) : fn();
}

/** An `X-Request-Id` a client or proxy sent is kept when it is a plain token; anything else gets a fresh id. */
const GIVEN_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const REQUEST_ID_HEADER = 'x-request-id';

export function requestIdOf(request: { headers: Record<string, string | string[] | undefined> }): string {
  const given = request.headers[REQUEST_ID_HEADER];
  return typeof given === 'string' && GIVEN_ID.test(given) ? given : newId();
}

// Reads cannot enqueue or record anything: they are left out, which keeps the most frequent requests free of it.
const READS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Answers every request with its id, and runs the handlers of writes in its context. */
export function registerRequestIds(app: FastifyInstance): void {
  app.addHook('onRequest', (request, reply, done) => {
    reply.header(REQUEST_ID_HEADER, request.id);
    done();
  });
  // After the body is parsed (its stream events run outside any context): the callback keeps the handler in it.
  app.addHook('preHandler', (request: FastifyRequest, _reply, done) => {
    if (READS.has(request.method)) return done();
    storage.run({ requestId: request.id }, done);
  });
}
