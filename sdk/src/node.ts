// `@mediaplane/sdk/node`: a `fetch` for Node over node:http and node:https, for `createClient({ fetch: nodeFetch })`.
// Node's own fetch (undici) compiles its WebAssembly HTTP parser on its first request, which costs a short-lived
// process (a CLI command) several hundred milliseconds of CPU; node:http's parser is built in. It sends and reads
// what the SDK does: string, byte, Blob and stream bodies, the answer's status, headers and text.
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import type { FetchLike, HttpResponse } from './client.ts';

export const nodeFetch: FetchLike = async (url, init = {}) => {
  const target = new URL(url);
  if (target.protocol !== 'http:' && target.protocol !== 'https:') throw new TypeError(`nodeFetch: ${target.protocol} URLs are not supported`);
  // node:https (TLS and its crypto) is loaded only for an https URL.
  const send = target.protocol === 'https:' ? (await import('node:https')).request : httpRequest;
  return new Promise<HttpResponse>((resolve, reject) => {
    const req = send(target, { method: init.method ?? 'GET', headers: headerRecord(init.headers), signal: init.signal ?? undefined }, (res) =>
      resolve(answer(res)),
    );
    req.once('error', reject);
    const body = init.body;
    if (body === undefined || body === null) req.end();
    else if (typeof body === 'string' || body instanceof Uint8Array) req.end(body);
    else if (body instanceof Blob || body instanceof ReadableStream) {
      const stream = Readable.fromWeb((body instanceof Blob ? body.stream() : body) as NodeReadableStream);
      stream.once('error', (e) => req.destroy(e));
      stream.pipe(req);
    } else reject(new TypeError('nodeFetch: the body must be a string, bytes, a Blob or a ReadableStream'));
  });
};

// Never names the global Headers (nor Response): touching them loads undici, which this transport is here to avoid.
function headerRecord(headers: RequestInit['headers']): Record<string, string> {
  if (!headers) return {};
  if (Array.isArray(headers)) return Object.fromEntries(headers);
  if (typeof (headers as Headers).entries === 'function') return Object.fromEntries((headers as Headers).entries());
  return headers as Record<string, string>;
}

function answer(res: IncomingMessage): HttpResponse {
  const status = res.statusCode ?? 0;
  return {
    status,
    ok: status >= 200 && status < 300,
    headers: {
      get: (name) => {
        const value = res.headers[name.toLowerCase()];
        return value === undefined ? null : Array.isArray(value) ? value.join(', ') : String(value);
      },
    },
    async text() {
      const chunks: Buffer[] = [];
      for await (const chunk of res) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks).toString('utf8');
    },
    // Read to the end and dropped, so that the connection goes back to the agent's pool.
    body: { cancel: async () => void res.resume() },
  };
}
