import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ErrorCode } from './errorCodes.ts';

export interface FieldError {
  field: string;
  message: string;
}

/** Every 4xx and 5xx body: `{ status: { code, status, message }, errors? }`. Codes are in `errorCodes.ts` and docs/errors.md. */
export class ApiError extends Error {
  constructor(
    readonly httpStatus: number,
    readonly code: ErrorCode,
    message: string,
    readonly errors?: FieldError[],
  ) {
    super(message);
  }

  body() {
    return {
      status: { code: this.code, status: this.httpStatus, message: this.message },
      ...(this.errors ? { errors: this.errors } : {}),
    };
  }
}

export const validationError = (field: string, message: string) => new ApiError(400, 'validation_failed', `${field}: ${message}`, [{ field, message }]);

export const notFound = (code: ErrorCode, what: string, id: string) => new ApiError(404, code, `${what} ${id} was not found`);
export const unsupportedMediaType = (message = 'Content-Type must be application/json for this operation') =>
  new ApiError(415, 'unsupported_media_type', message);

export const conflict = (code: ErrorCode, message: string) => new ApiError(409, code, message);

type SchemaError = NonNullable<FastifyError['validation']>[number];

/**
 * A field as every error names it, in JavaScript's notation: `transcodedSources[0].fileId`, `metadata["a.b"]`.
 * Numbers are array indexes; a key that is not a plain name is quoted.
 */
export function fieldPath(segments: readonly (string | number)[]): string {
  let path = '';
  for (const s of segments) {
    if (typeof s === 'number') path += `[${s}]`;
    else if (/^[A-Za-z_$][\w$-]*$/.test(s)) path += path ? `.${s}` : s;
    else path += `[${JSON.stringify(s)}]`;
  }
  return path;
}

/** Ajv's instance path (`/transcodedSources/0/fileId`) as segments; digits are read as array indexes. */
function segmentsOf(e: SchemaError): (string | number)[] {
  const segments: (string | number)[] = e.instancePath
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((s) => (/^(0|[1-9]\d*)$/.test(s) ? Number(s) : s));
  const params = e.params as Record<string, unknown>;
  if (e.keyword === 'required' && typeof params.missingProperty === 'string') segments.push(params.missingProperty);
  if (e.keyword === 'additionalProperties' && typeof params.additionalProperty === 'string') segments.push(params.additionalProperty);
  return segments;
}

const TYPE_NAMES: Record<string, string> = {
  string: 'a string',
  integer: 'an integer',
  number: 'a number',
  boolean: 'a boolean (true or false)',
  object: 'an object',
  array: 'an array',
  null: 'null',
};
const FORMAT_NAMES: Record<string, string> = {
  uuid: 'a uuid',
  'date-time': 'an ISO 8601 date-time such as 2024-05-01T12:00:00Z',
  uri: 'a URI',
  email: 'an email address',
};

const plural = (n: unknown, one: string) => `${n} ${one}${n === 1 ? '' : 's'}`;

/** Ajv's terse message ("must be string", "must NOT have fewer than 1 characters") as a sentence a person reads. */
function messageOf(e: SchemaError): string {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- Ajv's params differ by keyword
  const p = e.params as Record<string, any>;
  switch (e.keyword) {
    case 'type': {
      const types: string[] = Array.isArray(p.type) ? p.type : String(p.type).split(',');
      return `must be ${types.map((t) => TYPE_NAMES[t] ?? t).join(' or ')}`;
    }
    case 'required':
      return 'is required';
    case 'additionalProperties':
      return 'is not allowed here';
    case 'enum':
      return `must be one of ${(p.allowedValues as unknown[]).map(String).join(', ')}`;
    case 'const':
      return `must be ${JSON.stringify(p.allowedValue)}`;
    case 'format':
      return `must be ${FORMAT_NAMES[p.format] ?? `in the format ${p.format}`}`;
    case 'pattern':
      return `must match the pattern ${p.pattern}`;
    case 'minLength':
      return p.limit === 1 ? 'must not be empty' : `must be at least ${plural(p.limit, 'character')} long`;
    case 'maxLength':
      return `must be at most ${plural(p.limit, 'character')} long`;
    case 'minimum':
      return `must be at least ${p.limit}`;
    case 'maximum':
      return `must be at most ${p.limit}`;
    case 'exclusiveMinimum':
      return `must be greater than ${p.limit}`;
    case 'exclusiveMaximum':
      return `must be less than ${p.limit}`;
    case 'multipleOf':
      return `must be a multiple of ${p.multipleOf}`;
    case 'minItems':
      return p.limit === 1 ? 'must not be empty' : `must have at least ${plural(p.limit, 'item')}`;
    case 'maxItems':
      return `must have at most ${plural(p.limit, 'item')}`;
    case 'uniqueItems':
      return `must not repeat an item (items ${p.j} and ${p.i} are the same)`;
    case 'minProperties':
      return `must have at least ${p.limit} ${p.limit === 1 ? 'property' : 'properties'}`;
    case 'maxProperties':
      return `must have at most ${p.limit} ${p.limit === 1 ? 'property' : 'properties'}`;
    default:
      return e.message ?? 'is invalid';
  }
}

/** "must be a uuid" and "must be null" read as "must be a uuid or null". */
function eitherOf(messages: string[]): string {
  const unique = [...new Set(messages)];
  if (unique.every((m) => m.startsWith('must be '))) return `must be ${unique.map((m) => m.slice('must be '.length)).join(' or ')}`;
  return unique.join(', or ');
}

/**
 * Fastify's validation errors as `{ field, message }`, one per field and problem. A union (`anyOf`) fails in each of
 * its branches: when every branch fails on the value itself, that is told as one message ("must be a uuid or null");
 * when a branch fails deeper inside the value (an object of the wrong shape), those deeper errors are what is told.
 */
export function fieldErrors(validation: readonly SchemaError[], context?: string): FieldError[] {
  const branchesOf = (u: SchemaError) => validation.filter((e) => e.schemaPath.startsWith(`${u.schemaPath}/`));
  const told = new Set<SchemaError>();
  const reported: SchemaError[] = [];
  const messages = new Map<SchemaError, string>();
  for (const u of validation.filter((e) => e.keyword === 'anyOf' || e.keyword === 'oneOf')) {
    const branches = branchesOf(u);
    branches.forEach((b) => told.add(b));
    // A missing property is an error deeper in the value too: it names its own field.
    const deeper = branches.filter((b) => b.instancePath !== u.instancePath || b.keyword === 'required');
    if (deeper.length) {
      told.add(u);
      deeper.forEach((b) => told.delete(b));
    } else {
      messages.set(u, eitherOf(branches.map(messageOf)));
    }
  }
  for (const e of validation) if (!told.has(e)) reported.push(e);
  const errors: FieldError[] = [];
  for (const e of reported) {
    const field = fieldPath(segmentsOf(e)) || context || 'body';
    const message = messages.get(e) || messageOf(e);
    if (!errors.some((x) => x.field === field && x.message === message)) errors.push({ field, message });
  }
  return errors;
}

/** Maps everything Fastify or a handler can throw to the one error shape; nothing else leaks out. */
export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError | ApiError, request, reply) => {
    if (error instanceof ApiError) return reply.status(error.httpStatus).send(error.body());
    if (error.validation) {
      const errors = fieldErrors(error.validation, error.validationContext);
      const summary = errors.map((e) => `${e.field}: ${e.message}`).join('; ');
      return reply.status(400).send(new ApiError(400, 'validation_failed', summary, errors).body());
    }
    const known = knownFastifyError(error);
    if (known) return reply.status(known.httpStatus).send(known.body());
    request.log.error({ err: error }, 'unhandled error');
    return reply.status(500).send(new ApiError(500, 'internal_error', 'An unexpected error occurred; it has been logged').body());
  });

  app.setNotFoundHandler((request, reply) =>
    reply.status(404).send(new ApiError(404, 'route_not_found', `No operation ${request.method} ${request.url.split('?')[0]}`).body()),
  );
}

/**
 * Errors Fastify raises before a route is matched (a malformed URL escape, an over-long path parameter) bypass the
 * error handler; passed as the `frameworkErrors` option, this gives them the one error shape too.
 */
export function frameworkErrors(error: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  const known = knownFastifyError(error) ?? new ApiError(500, 'internal_error', 'An unexpected error occurred; it has been logged');
  void reply.status(known.httpStatus).send(known.body());
}

/** PostgreSQL refused text it cannot encode (a NUL character): bad input, not a server fault. */
export function isUnstorableText(error: unknown): boolean {
  const pgCode = (error as { cause?: { code?: unknown } }).cause?.code ?? (error as { code?: unknown }).code;
  return pgCode === '22021' || pgCode === '22P05';
}

function knownFastifyError(error: FastifyError): ApiError | undefined {
  if (isUnstorableText(error)) return new ApiError(400, 'validation_failed', 'The request holds characters that cannot be stored (such as NUL)');
  switch (error.code) {
    // The disk (or the user's quota) is full: the server's condition, not the request's, and one that passes.
    case 'ENOSPC':
    case 'EDQUOT':
      return new ApiError(507, 'storage_full', "The server's storage is full; nothing was stored. Try again once space is freed");
    case 'FST_ERR_BAD_URL':
      return new ApiError(400, 'malformed_url', 'The URL holds an invalid percent-encoded sequence');
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return new ApiError(414, 'uri_too_long', 'A path parameter is longer than the server accepts');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return unsupportedMediaType();
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new ApiError(400, 'malformed_body', `The request body could not be parsed: ${error.message}`);
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ApiError(413, 'payload_too_large', 'The request body is larger than the server accepts');
  }
  if (error instanceof SyntaxError || (error.statusCode === 400 && !error.code?.startsWith('FST_ERR'))) {
    return new ApiError(400, 'malformed_body', `The request could not be parsed: ${error.message}`);
  }
  if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) {
    return new ApiError(error.statusCode, 'bad_request', error.message);
  }
  return undefined;
}
