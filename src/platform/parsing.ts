// String.prototype.isWellFormed (in Node 20) is newer than the library of our ES2022 target.
/// <reference lib="es2024.string" />
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { fieldPath, unsupportedMediaType, validationError, type FieldError } from './errors.ts';

/**
 * Request bodies are JSON. Fastify also parses text/plain by default, which would turn a wrong Content-Type into a
 * confusing "body: must be an object"; without that parser a wrong type is a 415. An empty body is no body at all,
 * whatever its framing (`Content-Length: 0`, or chunked with no chunk), without Content-Type or with a JSON one (many
 * clients send one on DELETE): body-less operations accept it and the others answer "body: must be an object".
 *
 * Every string and key in the query, path and body is checked before validation: PostgreSQL can store neither a NUL
 * character nor a lone UTF-16 surrogate (JSON's `"\ud800"`, refused by jsonb and by text), and a field-named 400 is
 * clearer than a failed query. Numbers are checked after validation, once Ajv has coerced query strings: it turns
 * `Infinity` and `1e309` into ±Infinity and then skips `minimum`/`maximum` for them.
 */
export function registerBodyParsing(app: FastifyInstance): void {
  app.removeContentTypeParser('text/plain');
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const charset = charsetOf(request.headers['content-type']);
    if (charset !== undefined && !UTF8.includes(charset)) {
      return done(unsupportedMediaType(`JSON bodies must be UTF-8 (RFC 8259); charset=${charset} is not supported`), undefined);
    }
    const text = body as string;
    if (text.trim() === '') return done(null, undefined);
    return parseJson(request, text, done);
  });
  app.addContentTypeParser('*', emptyOrUnsupported);
  // Callback hooks, not async ones: every request runs them, and a promise each is work for nothing (a throw is
  // answered as a rejection would be).
  app.addHook('preValidation', (request, _reply, done) => {
    refuse(request, storableString);
    done();
  });
  app.addHook('preHandler', (request, _reply, done) => {
    refuse(request, finiteNumber);
    done();
  });
}

/** JSON is UTF-8 (RFC 8259); a client that says otherwise would have its text read wrongly, so it is refused. */
const UTF8 = ['utf-8', 'utf8'];

/** The `charset` parameter of a Content-Type, lower-cased; undefined when there is none. */
function charsetOf(contentType: string | undefined): string | undefined {
  const m = /;\s*charset\s*=\s*(?:"([^"]*)"|([^;\s]*))/i.exec(contentType ?? '');
  return m ? (m[1] ?? m[2]).toLowerCase() : undefined;
}

/**
 * A route's `preValidation` hook for an operation whose body is optional as a whole (cancel upload): no body is read
 * as `{}`, so that the schema validates the body when one is given and its defaults apply when none is. No body means
 * none at all or an empty one; a JSON `null` is a body, and not an object (400). The route's schema carries
 * `OPTIONAL_BODY` so that the OpenAPI document says the body is optional (platform/openapi.ts).
 */
export const OPTIONAL_BODY = { 'x-optionalBody': true } as const;

export async function absentBodyAsEmpty(request: FastifyRequest): Promise<void> {
  if (request.body === undefined) request.body = {};
}

/**
 * The parser of every Content-Type but JSON. Fastify also sends here a request without Content-Type that is chunked
 * (it cannot know the body is empty before reading it): an empty one is no body; any other body is a 415. A request
 * no operation matches is left to the 404 answer, whatever it carries.
 */
function emptyOrUnsupported(request: FastifyRequest, payload: NodeJS.ReadableStream, done: (err: Error | null, body?: unknown) => void): void {
  if (request.is404) return done(null, undefined);
  const unsupported = unsupportedMediaType();
  if (request.headers['content-type'] !== undefined) return done(unsupported);
  const settle = (err: Error | null) => {
    payload.removeListener('data', onData).removeListener('end', onEnd).removeListener('error', settle);
    done(err, undefined);
  };
  const onData = (chunk: Buffer | string) => {
    if (chunk.length > 0) settle(unsupported);
  };
  const onEnd = () => settle(null);
  payload.on('data', onData).on('end', onEnd).on('error', settle);
}

/** What a check says of one string, key or number: undefined when it is acceptable, else the message. */
type Check = (value: string | number) => string | undefined;

const storableString: Check = (value) => {
  if (typeof value !== 'string') return undefined;
  if (value.includes('\0')) return 'must not contain NUL (\\u0000) characters';
  if (!value.isWellFormed()) return 'must be well-formed Unicode (no lone UTF-16 surrogate such as \\ud800)';
  return undefined;
};

const finiteNumber: Check = (value) => (typeof value === 'number' && !Number.isFinite(value) ? 'must be a finite number' : undefined);

function refuse(request: FastifyRequest, check: Check): void {
  const found = refusedField(request.query, check) ?? refusedField(request.params, check) ?? refusedField(request.body, check);
  if (found) throw validationError(found.field || 'body', found.message);
}

interface Visit {
  value: unknown;
  /** A property name, or an index in an array. */
  key: string | number;
  parent: Visit | undefined;
}

/**
 * The first string, key or number (in document order) that `check` refuses, with its path (`tags[1]`, `metadata.a`). The walk keeps
 * its own stack: a body nested thousands deep would overflow the call stack of a recursive one. Paths are built only
 * for the field found, from parent links, so that deep nesting costs linear time and memory.
 */
function refusedField(root: unknown, check: Check): FieldError | undefined {
  if (root === undefined || root === null) return undefined;
  const stack: Visit[] = [{ value: root, key: '', parent: undefined }];
  for (let visit = stack.pop(); visit; visit = stack.pop()) {
    const { value, parent } = visit;
    const inObject = parent !== undefined && !Array.isArray(parent.value);
    const message = (inObject ? check(visit.key as string) : undefined) ?? (typeof value === 'string' || typeof value === 'number' ? check(value) : undefined);
    if (message) return { field: pathOf(visit), message };
    if (value === null || typeof value !== 'object') continue;
    const entries: (readonly [string | number, unknown])[] = Array.isArray(value) ? value.map((v, i) => [i, v] as const) : Object.entries(value);
    // Reversed, so that the first entry is the next one popped.
    for (let i = entries.length - 1; i >= 0; i--) stack.push({ value: entries[i][1], key: entries[i][0], parent: visit });
  }
  return undefined;
}

function pathOf(visit: Visit): string {
  const keys: (string | number)[] = [];
  for (let v: Visit | undefined = visit; v?.parent; v = v.parent) keys.push(v.key);
  return fieldPath(keys.reverse());
}
