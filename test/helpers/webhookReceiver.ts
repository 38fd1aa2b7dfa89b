import { createHmac } from 'node:crypto';
import http, { type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  body: string;
  json: any;
  headers: IncomingHttpHeaders;
  /** Arrival, `Date.now()`. */
  at: number;
}

/** What the receiver does with the n-th request (0-based): answer with a status (and body), or never answer. */
export type Behaviour = (req: Received, n: number) => { status: number; body?: string } | 'hang';

/** A real HTTP server on a local port that records every webhook request it gets. */
export class WebhookReceiver {
  readonly received: Received[] = [];
  behaviour: Behaviour = () => ({ status: 200, body: 'ok' });
  /** Requests whose connection is still open (a hanging answer keeps it open until the sender gives up). */
  openRequests = 0;
  private waiters: (() => void)[] = [];

  private constructor(
    private readonly server: http.Server,
    readonly url: string,
  ) {}

  static async start(path = '/hook'): Promise<WebhookReceiver> {
    // eslint-disable-next-line prefer-const -- assigned after the server that closes over it is made
    let self!: WebhookReceiver;
    const server = http.createServer((req, res) => {
      self.openRequests++;
      res.on('close', () => self.openRequests--);
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const r: Received = { body, json: safeJson(body), headers: req.headers, at: Date.now() };
        const n = self.received.push(r) - 1;
        const answer = self.behaviour(r, n);
        if (answer !== 'hang') res.writeHead(answer.status, { 'content-type': 'text/plain' }).end(answer.body ?? '');
        for (const w of self.waiters.splice(0)) w();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    self = new WebhookReceiver(server, `http://127.0.0.1:${port}${path}`);
    return self;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** Requests whose body has this event type (and, optionally, concern this object id). */
  ofType(type: string, dataId?: string): Received[] {
    return this.received.filter((r) => r.json?.type === type && (dataId === undefined || r.json?.data?.id === dataId));
  }

  /** Resolves once `predicate` holds over what was received; fails after `timeoutMs`. */
  async waitFor(predicate: (received: Received[]) => boolean, timeoutMs = 10_000): Promise<Received[]> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate(this.received)) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`receiver: condition not met within ${timeoutMs} ms; got ${this.received.length} requests`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, Math.min(left, 200));
        this.waiters.push(() => (clearTimeout(t), resolve()));
      });
    }
    return this.received;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

function safeJson(s: string): any {
  try {
    return JSON.parse(s);
  } catch {
    return undefined;
  }
}

/** Both signatures as an independent receiver computes them (spec: hex HMAC of the body; Standard Webhooks). */
export function expectedSignatures(secret: string, r: Received) {
  const id = r.headers['webhook-id'] as string;
  const ts = r.headers['webhook-timestamp'] as string;
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  return {
    svc: createHmac('sha256', secret).update(r.body).digest('hex'),
    standard: `v1,${createHmac('sha256', key).update(`${id}.${ts}.${r.body}`).digest('base64')}`,
  };
}
