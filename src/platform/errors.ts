import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

export interface FieldError {
  field: string;
  message: string;
}

/** Every 4xx and 5xx body: `{ status: { code, status, message }, errors? }`. Codes are listed in docs/errors.md. */
export class ApiError extends Error {
  constructor(
    readonly httpStatus: number,
    readonly code: string,
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

export const validationError = (field: string, message: string) =>
  new ApiError(400, 'validation_failed', `${field}: ${message}`, [{ field, message }]);

export const notFound = (code: string, what: string, id: string) => new ApiError(404, code, `${what} ${id} was not found`);
export const unsupportedMediaType = () => new ApiError(415, 'unsupported_media_type', 'Content-Type must be application/json for this operation');

export const conflict = (code: string, message: string) => new ApiError(409, code, message);

const CONTEXT_PREFIX: Record<string, string> = { body: '', querystring: '', params: '', headers: '' };

function fieldOf(v: NonNullable<FastifyError['validation']>[number], context?: string): string {
  const params = v.params as Record<string, unknown>;
  const segments = v.instancePath.split('/').filter(Boolean);
  if (typeof params?.missingProperty === 'string') segments.push(params.missingProperty);
  const path = segments.join('.');
  return (context ? CONTEXT_PREFIX[context] ?? '' : '') + (path || context || 'body');
}

/** Maps everything Fastify or a handler can throw to the one error shape; nothing else leaks out. */
export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError | ApiError, request, reply) => {
    if (error instanceof ApiError) return reply.status(error.httpStatus).send(error.body());
    if (error.validation) {
      const errors = error.validation.map((v) => ({ field: fieldOf(v, error.validationContext), message: v.message ?? 'is invalid' }));
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
