import type { FastifyInstance } from 'fastify';
import { validationError } from './errors.ts';

/**
 * Request bodies are JSON. Fastify also parses text/plain by default, which would turn a wrong Content-Type into a
 * confusing "body must be object"; without that parser a wrong type is a 415. An empty body with a JSON
 * Content-Type (many clients send one on DELETE) is no body at all, so body-less operations accept it and the
 * others answer "body: must be object". Strings with NUL characters are refused up front: PostgreSQL cannot store
 * them, and a field-named 400 is clearer than a failed query.
 */
export function registerBodyParsing(app: FastifyInstance): void {
  app.removeContentTypeParser('text/plain');
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = body as string;
    if (text.trim() === '') return done(null, undefined);
    return parseJson(request, text, done);
  });
  app.addHook('preValidation', async (request) => {
    const field = nulField(request.query, '') ?? nulField(request.params, '') ?? nulField(request.body, '');
    if (field !== undefined) throw validationError(field || 'body', 'must not contain NUL (\\u0000) characters');
  });
}

/** The dotted path of the first string (or key) holding a NUL character, or undefined. */
export function nulField(value: unknown, path: string): string | undefined {
  if (typeof value === 'string') return value.includes('\0') ? path : undefined;
  if (value === null || typeof value !== 'object') return undefined;
  const entries = Array.isArray(value) ? value.map((v, i) => [String(i), v] as const) : Object.entries(value);
  for (const [key, v] of entries) {
    const at = path ? `${path}.${key}` : key;
    if (key.includes('\0')) return at;
    const found = nulField(v, at);
    if (found !== undefined) return found;
  }
  return undefined;
}
