import http from 'node:http';
import https from 'node:https';
import { literalBlockedReason } from '../../platform/addressGuard.ts';
import { addressGuard, ALLOW_PRIVATE_SETTING, openLookup } from './urlPolicy.ts';

/** Kept of a receiver's answer in the event log. */
const RESPONSE_CONTENT_MAX = 1024;
/** Read of an answer at most; a longer one is cut off (and its connection dropped). */
const RESPONSE_READ_MAX = 64 * 1024;

export interface SendResult {
  /** The receiver's HTTP status, or 0 when there was none (refused, unreachable, timed out). */
  responseCode: number;
  /** The start of its answer, or why there was none. */
  responseContent: string;
  ok: boolean;
}

export interface SendOptions {
  timeoutMs: number;
  allowPrivate: boolean;
}

// Keep-alive: deliveries to one receiver reuse their connection. The guarded agents check every address they connect to.
const agents = {
  // Open: any address, but `localhost` names still mean loopback (local development).
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- Node's Agent types lookup narrower than dns.lookup's overloads
  open: { http: new http.Agent({ keepAlive: true, lookup: openLookup as any }), https: new https.Agent({ keepAlive: true, lookup: openLookup as any }) },
  guarded: {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- Node's Agent types lookup narrower than dns.lookup's overloads
    http: new http.Agent({ keepAlive: true, lookup: addressGuard as any }),
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- Node's Agent types lookup narrower than dns.lookup's overloads
    https: new https.Agent({ keepAlive: true, lookup: addressGuard as any }),
  },
};

const failure = (responseContent: string): SendResult => ({ responseCode: 0, responseContent, ok: false });

/** POSTs one JSON body. Never throws: every outcome is a result, and only a 200 within the timeout is a success. */
export function postJson(target: string, body: string, headers: Record<string, string>, opts: SendOptions): Promise<SendResult> {
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    return Promise.resolve(failure(`invalid URL ${target}`));
  }
  const reason = opts.allowPrivate ? undefined : literalBlockedReason(url);
  if (reason) return Promise.resolve(failure(`refused: ${reason}; set ${ALLOW_PRIVATE_SETTING} to allow`));
  const secure = url.protocol === 'https:';
  const agent = (opts.allowPrivate ? agents.open : agents.guarded)[secure ? 'https' : 'http'];
  const request = secure ? https.request : http.request;

  return new Promise((resolve) => {
    let settled = false;
    const settle = (r: SendResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(r);
    };
    const req = request(url, {
      method: 'POST',
      agent,
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'user-agent': 'Mediaplane-Webhooks/1', ...headers },
    });
    // One deadline for everything: connecting, the status line and the answer's body.
    const timer = setTimeout(() => {
      settle(failure(`no answer within ${opts.timeoutMs} ms`));
      req.destroy();
    }, opts.timeoutMs);
    req.on('error', (e) => settle(failure(e.message)));
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      const done = () => {
        const content = Buffer.concat(chunks).toString('utf8').slice(0, RESPONSE_CONTENT_MAX);
        const code = res.statusCode ?? 0;
        settle({ responseCode: code, responseContent: content, ok: code === 200 });
      };
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size <= RESPONSE_READ_MAX) chunks.push(chunk);
        else {
          done();
          res.destroy();
        }
      });
      res.on('end', done);
      res.on('error', (e) => settle(failure(e.message)));
    });
    req.end(body);
  });
}
