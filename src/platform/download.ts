import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import { pipeline } from 'node:stream/promises';
import { guardedLookup, literalBlockedReason } from './addressGuard.ts';

export interface GuardOptions {
  /** Reach private, loopback and link-local addresses too (local development, tests). */
  allowPrivate: boolean;
  /** The setting that allows private addresses, named in refusals. */
  setting: string;
  /** A connection that brings nothing for this long (no answer, or a body that stalls) is dropped. */
  timeoutMs: number;
}

export interface DownloadOptions extends GuardOptions {
  maxBytes: number;
}

/** A download that cannot succeed as asked (refused address, 4xx, too large), as opposed to one worth trying again. */
export class DownloadRefusedError extends Error {}

const MAX_REDIRECTS = 3;

/**
 * Requests a tenant-given http(s) URL through the same address guard as webhook deliveries, following a few redirects
 * (each hop judged again: its scheme, an address literal, and the addresses its name resolves to on connect). Answers
 * the first response that is not a redirect, unread, and the URL that gave it. `headers` go with every hop.
 */
export async function requestGuarded(
  raw: string | URL,
  opts: GuardOptions,
  headers: Record<string, string> = {},
): Promise<{ res: http.IncomingMessage; url: URL }> {
  let url = new URL(raw);
  for (let hop = 0; ; hop++) {
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new DownloadRefusedError(`${url.protocol} URLs are not fetched`);
    const reason = opts.allowPrivate ? undefined : literalBlockedReason(url);
    if (reason) throw new DownloadRefusedError(`refused: ${reason}; set ${opts.setting} to allow`);
    const res = await get(url, opts, headers);
    const location = res.headers.location;
    if (!(res.statusCode && res.statusCode >= 300 && res.statusCode < 400 && location)) return { res, url };
    res.resume();
    if (hop >= MAX_REDIRECTS) throw new DownloadRefusedError(`more than ${MAX_REDIRECTS} redirects`);
    url = new URL(location, url);
  }
}

/** The refusal or failure an answer other than `expected` stands for: a 4xx cannot succeed, a 5xx may later. */
export function statusFailure(res: http.IncomingMessage): Error {
  res.resume();
  const message = `the server answered ${res.statusCode}${res.statusMessage ? ` ${res.statusMessage}` : ''}`;
  return res.statusCode && res.statusCode < 500 ? new DownloadRefusedError(message) : new Error(message);
}

/**
 * Fetches a tenant-given http(s) URL into `path` (`requestGuarded`), within a size and time limit. Answers the
 * response's content type.
 */
export async function downloadToFile(raw: string, path: string, opts: DownloadOptions): Promise<string> {
  const { res } = await requestGuarded(raw, opts);
  if (res.statusCode !== 200) throw statusFailure(res);
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

function get(url: URL, opts: GuardOptions, headers: Record<string, string>): Promise<http.IncomingMessage> {
  const client = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- Node's request options type lookup narrower than dns.lookup's overloads
    const req = client.get(url, { headers, timeout: opts.timeoutMs, ...(opts.allowPrivate ? {} : { lookup: guardedLookup(opts.setting) as any }) }, resolve);
    req.on('timeout', () => req.destroy(new Error(`no answer within ${opts.timeoutMs} ms`)));
    req.on('error', (e) =>
      reject(e.name === 'BlockedAddressError' || (e as NodeJS.ErrnoException).code === 'EADDRBLOCKED' ? new DownloadRefusedError(e.message) : e),
    );
  });
}
