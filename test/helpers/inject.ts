import type { FastifyInstance } from 'fastify';

/** What the tests call to reach a platform: `fetch`'s shape, so a test reads the same with or without a port. */
export type Fetch = (url: string | URL, init?: RequestInit) => Promise<Response>;

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const NO_BODY = new Set([101, 204, 205, 304]);

/**
 * A `fetch` that hands requests for `origin` to `app.inject()` (no socket, no port) and any other URL (an S3
 * endpoint, a webhook receiver) to the real `fetch`. It does what `fetch` does that the platform can see: a string
 * body without a Content-Type is `text/plain;charset=UTF-8`, redirects are followed unless `redirect: 'manual'`.
 * Unlike `fetch`, it lets a test set Host (the tenant-host checks need it).
 */
export function injectFetch(app: FastifyInstance, origin: string): Fetch {
  const send: Fetch = async (input, init = {}) => {
    const url = new URL(String(input));
    if (url.origin !== origin) return fetch(input, init);
    const headers: Record<string, string> = { host: url.host, ...headerRecord(init.headers) };
    const body = init.body ?? undefined;
    if (body !== undefined && body !== null && typeof body !== 'string' && !(body instanceof Uint8Array)) {
      throw new Error('injectFetch: give the body as a string or bytes');
    }
    if (typeof body === 'string' && headers['content-type'] === undefined) headers['content-type'] = 'text/plain;charset=UTF-8';
    const method = (init.method ?? 'GET').toUpperCase();
    const res = await app.inject({ method: method as any, url: url.pathname + url.search, headers, payload: body ?? undefined });

    const location = res.headers.location;
    if (REDIRECTS.has(res.statusCode) && typeof location === 'string' && init.redirect !== 'manual') {
      const keep = res.statusCode === 307 || res.statusCode === 308;
      return send(new URL(location, url), keep ? init : { ...init, method: 'GET', body: undefined });
    }
    const out = new Headers();
    for (const [name, value] of Object.entries(res.headers)) {
      for (const v of [value ?? []].flat()) out.append(name, String(v));
    }
    const payload = NO_BODY.has(res.statusCode) || method === 'HEAD' ? null : res.rawPayload;
    return new Response(payload as Uint8Array<ArrayBuffer> | null, { status: res.statusCode, statusText: res.statusMessage, headers: out });
  };
  return send;
}

/** Header names lower-cased, as Node's HTTP parser gives them to the platform. */
function headerRecord(headers: RequestInit['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  if (!headers) return out;
  const entries = headers instanceof Headers ? [...headers.entries()] : Array.isArray(headers) ? headers : Object.entries(headers);
  for (const [name, value] of entries) out[name.toLowerCase()] = value;
  return out;
}
