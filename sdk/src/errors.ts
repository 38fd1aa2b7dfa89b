/** A field the API refused, as its validation errors name it. */
export interface FieldError {
  field: string;
  message: string;
}

/**
 * An answer of the API that is not a success, with the API's own error shape
 * (`{ status: { code, status, message }, errors? }`): `status` is the HTTP status, `code` the stable error code
 * (docs/errors.md), `message` the API's message for developers. A request that got no answer at all (the server
 * cannot be reached) has `status` 0 and the code `network_error`.
 */
export class MediaplaneError extends Error {
  override name = 'MediaplaneError';
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly errors: FieldError[] = [],
    /** The request's `X-Request-Id`: quote it to the operator, who finds it in the logs. */
    readonly requestId?: string,
  ) {
    super(message);
  }
}

/** An asset or a recording whose processing ended in `Error`; `message` is its `errorMessage`. */
export class ProcessingFailedError extends Error {
  override name = 'ProcessingFailedError';
  constructor(
    readonly kind: 'asset' | 'recording',
    readonly id: string,
    message: string,
    /** The asset or recording as last read. */
    readonly resource: unknown,
  ) {
    super(message);
  }
}

/** Builds the error for a response that is not a success, from the error shape when the body has it. */
export async function errorFromResponse(res: {
  status: number;
  headers: { get(name: string): string | null };
  text(): Promise<string>;
}): Promise<MediaplaneError> {
  const text = await res.text().catch(() => '');
  let body: { status?: { code?: unknown; message?: unknown }; errors?: unknown } | undefined;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  const status = body?.status;
  const requestId = res.headers.get('x-request-id') ?? undefined;
  if (status && typeof status.code === 'string' && typeof status.message === 'string') {
    const errors = Array.isArray(body?.errors) ? (body.errors as FieldError[]) : [];
    return new MediaplaneError(res.status, status.code, status.message, errors, requestId);
  }
  const excerpt = text.trim().slice(0, 200);
  return new MediaplaneError(res.status, 'http_error', `HTTP ${res.status}${excerpt ? `: ${excerpt}` : ''}`, [], requestId);
}
