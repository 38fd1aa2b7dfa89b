import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import { pipeline } from 'node:stream/promises';
import { guardedLookup, literalBlockedReason } from './addressGuard.ts';

export interface DownloadOptions {
  /** Reach private, loopback and link-local addresses too (local development, tests). */
  allowPrivate: boolean;
  /** The setting that allows private addresses, named in refusals. */
  setting: string;
  maxBytes: number;
  timeoutMs: number;
}

/** A download that cannot succeed as asked (refused address, 4xx, too large), as opposed to one worth trying again. */
export class DownloadRefusedError extends Error {}

const MAX_REDIRECTS = 3;

/**
 * Fetches a tenant-given http(s) URL into `path`, through the same address guard as webhook deliveries, following a
 * few redirects (each hop guarded), within a size and time limit. Answers the response's content type.
 */
export async function downloadToFile(raw: string, path: string, opts: DownloadOptions): Promise<string> {
  let url = new URL(raw);
  for (let hop = 0; ; hop++) {
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new DownloadRefusedError(`${url.protocol} URLs are not fetched`);
    const reason = opts.allowPrivate ? undefined : literalBlockedReason(url);
    if (reason) throw new DownloadRefusedError(`refused: ${reason}; set ${opts.setting} to allow`);
    const res = await get(url, opts);
    const location = res.headers.location;
    if (res.statusCode && res.statusCode >= 300 && res.statusCode < 400 && location) {
      res.resume();
      if (hop >= MAX_REDIRECTS) throw new DownloadRefusedError(`more than ${MAX_REDIRECTS} redirects`);
      url = new URL(location, url);
      continue;
    }
    if (res.statusCode !== 200) {
      res.resume();
      const message = `the server answered ${res.statusCode}`;
      throw res.statusCode && res.statusCode < 500 ? new DownloadRefusedError(message) : new Error(message);
    }
    if (Number(res.headers['content-length']) > opts.maxBytes) {
      res.destroy();
      throw new DownloadRefusedError(`larger than ${opts.maxBytes} bytes`);
    }
    let size = 0;
    try {
      await pipeline(
        res,
        async function* (chunks: AsyncIterable<Buffer>) {
          for await (const chunk of chunks) {
            size += chunk.length;
            if (size > opts.maxBytes) throw new DownloadRefusedError(`larger than ${opts.maxBytes} bytes`);
            yield chunk;
          }
        },
        createWriteStream(path),
      );
    } catch (e) {
      await rm(path, { force: true });
      throw e;
    }
    return String(res.headers['content-type'] ?? '');
  }
}

function get(url: URL, opts: DownloadOptions): Promise<http.IncomingMessage> {
  const client = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- Node's request options type lookup narrower than dns.lookup's overloads
    const req = client.get(url, { timeout: opts.timeoutMs, ...(opts.allowPrivate ? {} : { lookup: guardedLookup(opts.setting) as any }) }, resolve);
    req.on('timeout', () => req.destroy(new Error(`no answer within ${opts.timeoutMs} ms`)));
    req.on('error', (e) =>
      reject(e.name === 'BlockedAddressError' || (e as NodeJS.ErrnoException).code === 'EADDRBLOCKED' ? new DownloadRefusedError(e.message) : e),
    );
  });
}
