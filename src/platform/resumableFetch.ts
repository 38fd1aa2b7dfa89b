import type http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { DownloadRefusedError, requestGuarded, statusFailure, type GuardOptions } from './download.ts';

export interface ResumableOptions extends GuardOptions {
  maxBytes: number;
  /** Reconnections in a row that bring no byte before the fetch gives up (a reconnection that brings bytes resets it). */
  maxResumes: number;
  /** Wait before the first reconnection, doubled for each further one in a row. */
  resumeDelayMs: number;
  /** Told of each reconnection: the byte it resumes at and why the last connection ended. */
  onResume?: (at: number, reason: string) => void;
}

export interface ResumableSource {
  contentType: string;
  /** The size the server announced (Content-Length), when it did. */
  size: number | undefined;
  /** The body, whole: a connection that drops is resumed with a Range request for the rest. */
  body: AsyncGenerator<Buffer>;
}

/** A strong validator for `If-Range` (a weak ETag may not be used there): the ETag, else the Last-Modified date. */
function validatorOf(res: http.IncomingMessage): string | undefined {
  const etag = res.headers.etag;
  if (etag && !etag.startsWith('W/')) return etag;
  return res.headers['last-modified'];
}

const tooLarge = (max: number) => new DownloadRefusedError(`the file is larger than the import limit of ${max} bytes`);

/**
 * Fetches a tenant-given http(s) URL (`requestGuarded`: the address guard, redirects judged at each hop) as a stream
 * that survives dropped connections: when a connection ends before the whole body arrived (a reset, a stall longer
 * than `timeoutMs`, a chunked body cut off), the URL is asked again, redirects and guard included, for the rest
 * (`Range: bytes=<received>-`, with `If-Range` so that a file changed meanwhile is never spliced onto the old one).
 * A server that answers the whole body again instead (no range support) has the bytes already received skipped. Fails
 * with `DownloadRefusedError` when it cannot succeed (a 4xx, a refused address, larger than `maxBytes`, the file
 * changed), with another error when trying later may (a 5xx, connections that keep dropping).
 */
export async function openResumable(raw: string, opts: ResumableOptions): Promise<ResumableSource> {
  const first = (await requestGuarded(raw, opts)).res;
  if (first.statusCode !== 200) throw statusFailure(first);
  const announced = first.headers['content-length'];
  const size = announced !== undefined && /^\d+$/.test(announced) ? Number(announced) : undefined;
  if (size !== undefined && size > opts.maxBytes) {
    first.destroy();
    throw tooLarge(opts.maxBytes);
  }
  const validator = validatorOf(first);

  /** The rest of the body from byte `at`, from a new connection. */
  async function reopen(at: number): Promise<AsyncIterable<Buffer> & { destroy(): void }> {
    const { res } = await requestGuarded(raw, opts, { range: `bytes=${at}-`, ...(validator ? { 'if-range': validator } : {}) });
    if (res.statusCode === 206) {
      const start = /^bytes (\d+)-/.exec(res.headers['content-range'] ?? '')?.[1];
      if (Number(start) !== at) {
        res.destroy();
        throw new Error(`the server resumed at byte ${start ?? '?'} instead of ${at}`);
      }
      return res;
    }
    if (res.statusCode !== 200) throw statusFailure(res);
    // The whole body again: either the server ignores ranges, or (If-Range) the file is no longer the one begun.
    const now = validatorOf(res);
    if (validator && now !== validator) {
      res.destroy();
      throw new DownloadRefusedError('the file changed on the server while it was being imported');
    }
    return skipping(res, at);
  }

  async function* body(): AsyncGenerator<Buffer> {
    let res: (AsyncIterable<Buffer> & { destroy(): void }) | undefined = first;
    let received = 0;
    let failures = 0;
    try {
      for (;;) {
        try {
          res ??= await reopen(received);
          for await (const chunk of res) {
            received += chunk.length;
            if (received > opts.maxBytes) throw tooLarge(opts.maxBytes);
            failures = 0;
            yield chunk;
          }
          if (size === undefined || received >= size) return;
          throw new Error(`the connection closed after ${received} of ${size} bytes`);
        } catch (e) {
          if (e instanceof DownloadRefusedError) throw e;
          res?.destroy();
          res = undefined;
          const reason = (e as Error).message;
          if (++failures > opts.maxResumes) throw new Error(`the connection dropped ${failures} times in a row at byte ${received}: ${reason}`, { cause: e });
          opts.onResume?.(received, reason);
          await sleep(opts.resumeDelayMs * 2 ** (failures - 1));
        }
      }
    } finally {
      res?.destroy();
    }
  }

  return { contentType: String(first.headers['content-type'] ?? ''), size, body: body() };
}

/** A whole body whose first `skip` bytes were already received from an earlier connection. */
function skipping(res: http.IncomingMessage, skip: number): AsyncIterable<Buffer> & { destroy(): void } {
  return {
    destroy: () => res.destroy(),
    async *[Symbol.asyncIterator]() {
      let left = skip;
      for await (const chunk of res as AsyncIterable<Buffer>) {
        if (left >= chunk.length) {
          left -= chunk.length;
          continue;
        }
        yield left ? chunk.subarray(left) : chunk;
        left = 0;
      }
    },
  };
}
