import { backoff, sleep } from './abort.ts';
import { errorFromResponse, MediaplaneError } from './errors.ts';
import type { ApiPath, BodyOf, ItemOf, ListPath, Method, QueryOf, QueryValue, ResponseOf } from './types.ts';
import { uploadFile, type UploadOptions, type UploadResult } from './upload.ts';
import { waitForAsset, waitForRecording, type Asset, type Recording, type WaitOptions } from './wait.ts';

/** What the SDK reads of an answer: a `fetch` Response has it all. */
export interface HttpResponse {
  readonly ok: boolean;
  readonly status: number;
  readonly headers: { get(name: string): string | null };
  text(): Promise<string>;
  readonly body?: { cancel(): Promise<void> } | null;
}

/** The SDK's transport: the global `fetch`, or one of the caller's (`nodeFetch` from `@mediaplane/sdk/node`, a test's). */
export type FetchLike = (url: string, init: RequestInit) => Promise<HttpResponse>;

export interface ClientOptions {
  /** Where the platform answers, e.g. `https://media.example.org` (a path prefix is kept). */
  baseUrl: string;
  /** The tenant's id, sent as `X-Tenant-Id`. */
  tenantId: string;
  /** An API key of the tenant, sent as `X-Api-Key`. */
  apiKey: string;
  /** The `fetch` to use (default: the global one; in Node, `nodeFetch` of `@mediaplane/sdk/node` starts faster). */
  fetch?: FetchLike;
  /**
   * How many times a request is sent again after `429 rate_limited` (after its `Retry-After`) or, for reads and
   * idempotent writes (GET, PUT, DELETE), after a network error or a 502, 503 or 504. Default 2.
   */
  retries?: number;
}

export interface RequestOptions<Q = Record<string, QueryValue>> {
  /** Query parameters; an array is sent as repeated parameters (`statuses=A&statuses=B`). */
  query?: Q;
  /** Values for the `{name}` placeholders of a path template: `request('GET', '/vod/v1/assets/{id}', undefined, { params: { id } })`. */
  params?: Record<string, string | number>;
  signal?: AbortSignal;
}

export interface Client {
  readonly baseUrl: string;
  readonly tenantId: string;
  /**
   * Calls one operation and answers its parsed JSON body (`undefined` when it has none). Types follow the method and
   * the path (a template like `/vod/v1/assets/{id}` or a filled-in path like `` `/vod/v1/assets/${id}` ``). An answer
   * that is not a success throws a `MediaplaneError` with the API's `status`, `code` and `message`.
   */
  request<M extends Method, P extends ApiPath<M>>(method: M, path: P, body?: BodyOf<M, P>, options?: RequestOptions<QueryOf<M, P>>): Promise<ResponseOf<M, P>>;
  /** Every item of a list operation, page after page (`limit` per page, 100 unless the query says). */
  paginate<P extends ListPath>(path: P, query?: QueryOf<'GET', P>, options?: { signal?: AbortSignal }): AsyncIterableIterator<ItemOf<P>>;
  /** Uploads a file (a path in Node, a `Blob` or `File` anywhere) in parallel parts; answers its `fileId` and `fileKey`. */
  uploadFile(source: string | Blob, options?: UploadOptions): Promise<UploadResult>;
  /** Polls an asset until it is `Available` (answers it) or `Error` (throws `ProcessingFailedError` with its `errorMessage`). */
  waitForAsset(id: string, options?: WaitOptions<Asset>): Promise<Asset>;
  /** Polls a recording until it is `Available` or `Error`, as `waitForAsset` does. */
  waitForRecording(id: string, options?: WaitOptions<Recording>): Promise<Recording>;
}

const IDEMPOTENT = new Set(['GET', 'HEAD', 'PUT', 'DELETE']);
const RETRIED_STATUSES = new Set([502, 503, 504]);
/** The longest `Retry-After` honoured; a longer one is thrown as the 429 it is. */
const MAX_RETRY_AFTER_MS = 60_000;

export function createClient(options: ClientOptions): Client {
  const { tenantId, apiKey, retries = 2 } = options;
  if (!options.baseUrl) throw new TypeError('createClient: baseUrl is required');
  if (!tenantId || !apiKey) throw new TypeError('createClient: tenantId and apiKey are required');
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  const send: FetchLike = options.fetch ?? ((url, init) => globalThis.fetch(url, init));

  async function request(method: Method, path: string, body?: unknown, opts: RequestOptions = {}): Promise<unknown> {
    const url = baseUrl + fillPath(path, opts.params) + queryString(opts.query);
    const init: RequestInit = {
      method,
      headers: { 'x-api-key': apiKey, 'x-tenant-id': tenantId, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      body: body !== undefined ? JSON.stringify(body) : undefined,
      signal: opts.signal,
    };
    for (let attempt = 0; ; attempt++) {
      let res: HttpResponse;
      try {
        res = await send(url, init);
      } catch (e) {
        if (opts.signal?.aborted) throw opts.signal.reason;
        if (attempt < retries && IDEMPOTENT.has(method)) {
          await sleep(backoff(attempt), opts.signal);
          continue;
        }
        const cause = e instanceof Error ? ((e.cause as Error | undefined)?.message ?? e.message) : String(e);
        throw new MediaplaneError(0, 'network_error', `${method} ${url}: no answer (${cause})`);
      }
      if (res.ok) return parseBody(res);
      if (attempt < retries && (res.status === 429 || (RETRIED_STATUSES.has(res.status) && IDEMPOTENT.has(method)))) {
        const wait = res.status === 429 ? retryAfterMs(res) : backoff(attempt);
        if (wait <= MAX_RETRY_AFTER_MS) {
          await res.body?.cancel().catch(() => {});
          await sleep(wait, opts.signal);
          continue;
        }
      }
      throw await errorFromResponse(res);
    }
  }

  async function* paginate(path: string, query: Record<string, QueryValue> = {}, opts: { signal?: AbortSignal } = {}) {
    for (let page = Number(query.page ?? 1); ; page++) {
      const res = (await request('GET', path, undefined, { query: { limit: 100, ...query, page }, signal: opts.signal })) as {
        items: unknown[];
        hasMore: boolean;
      };
      yield* res.items;
      if (!res.hasMore || res.items.length === 0) return;
    }
  }

  const client = {
    baseUrl,
    tenantId,
    request,
    paginate,
    uploadFile: (source: string | Blob, o?: UploadOptions) => uploadFile(client as unknown as Client, send, source, o),
    waitForAsset: (id: string, o?: WaitOptions<Asset>) => waitForAsset(client as unknown as Client, id, o),
    waitForRecording: (id: string, o?: WaitOptions<Recording>) => waitForRecording(client as unknown as Client, id, o),
  };
  return client as unknown as Client;
}

/** Fills `{name}` placeholders from `params`; a placeholder left without a value is a programming error. */
function fillPath(path: string, params: Record<string, string | number> = {}): string {
  return path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    if (params[name] === undefined) throw new TypeError(`request: no value for {${name}} in ${path} (options.params.${name})`);
    return encodeURIComponent(String(params[name]));
  });
}

function queryString(query: object = {}): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined || value === null) continue;
    for (const v of Array.isArray(value) ? value : [value]) search.append(name, String(v));
  }
  const text = search.toString();
  return text ? `?${text}` : '';
}

async function parseBody(res: HttpResponse): Promise<unknown> {
  const text = await res.text();
  if (!text) return undefined;
  return (res.headers.get('content-type') ?? '').includes('json') ? JSON.parse(text) : text;
}

function retryAfterMs(res: HttpResponse): number {
  const header = res.headers.get('retry-after');
  if (header && /^\d+$/.test(header.trim())) return Number(header) * 1000;
  const date = header ? Date.parse(header) : NaN;
  return Number.isNaN(date) ? 1000 : Math.max(0, date - Date.now());
}
