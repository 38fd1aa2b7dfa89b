import { execFile } from 'node:child_process';
import { request } from 'node:http';
import { promisify } from 'node:util';
import { connect } from 'node:net';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerBodyDrain } from '../src/platform/bodyDrain.ts';
import { registerErrorHandling } from '../src/platform/errors.ts';
import { describeEachDb, startPlatform, type TestPlatform, type TestTenant } from './helpers/platform.ts';

/**
 * What a raw HTTP/1.1 client got for one request: the response's first bytes, or the socket error instead. Like many
 * clients (Python's, curl's without Expect), it reads only once it has written the whole request.
 */
function rawRequest(port: number, head: string, body: Buffer): Promise<{ response: string; error?: string }> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let response = '';
    let settled = false;
    const settle = (error?: string) => {
      if (settled) return;
      settled = true;
      socket.destroy();
      resolve({ response, error });
    };
    socket.setTimeout(60_000, () => settle('timeout'));
    socket.on('data', (c) => {
      response += c.toString('latin1');
      // The whole answer (headers and the small JSON body) is in: no need to wait for the close.
      const end = response.indexOf('\r\n\r\n');
      const length = /content-length:\s*(\d+)/i.exec(response);
      if (end >= 0 && length && response.length >= end + 4 + Number(length[1])) settle();
    });
    // A write after the server stopped reading fails with EPIPE or ECONNRESET; only the answer (or its absence) counts.
    socket.on('error', (e: NodeJS.ErrnoException) => settle(e.code ?? e.message));
    socket.on('end', () => settle());
    socket.pause();
    socket.on('connect', () => {
      socket.write(head);
      socket.write(body, () => socket.resume());
    });
  });
}

/** node:http's client, as an application uses it: the answer's status, or the error it got instead. */
function httpRequest(port: number, headers: Record<string, string>, body: Buffer): Promise<string> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, method: 'POST', path: '/core/v1/api-key', headers, agent: false }, (res) => {
      res.resume();
      resolve(String(res.statusCode));
    });
    req.setTimeout(60_000, () => req.destroy(new Error('timeout')));
    req.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
    // In 64 KiB writes, as a client streaming a file does: the server's answer comes while it is still sending.
    for (let at = 0; at < body.length; at += 65536) req.write(body.subarray(at, at + 65536));
    req.end();
  });
}

/**
 * Issue 25, item 7: a JSON body over MEDIAPLANE_BODY_LIMIT_KB, sent at once without `Expect: 100-continue`, is answered
 * 413 on every attempt; the server no longer closes the connection under a client that is still sending (which made
 * the client's TCP stack see a reset and drop the answer).
 */
describeEachDb('A 413 every client can read', (kind) => {
  let p: TestPlatform;
  let t: TestTenant;
  let port: number;
  beforeAll(async () => {
    p = await startPlatform(kind);
    t = await p.createTenant();
    port = Number(new URL(p.baseUrl).port);
  }, 120_000);
  afterAll(() => p?.stop());

  // 2 MB as in the report; 12 MB too, more than loopback's socket buffers take in at once, so that the client is
  // still sending when the answer comes even on this machine.
  for (const mb of [2, 12]) {
    it(`answers 413 to each of 60 requests with a ${mb} MB JSON body (raw sockets and node:http)`, async () => {
      const body = Buffer.from(JSON.stringify({ name: 'x'.repeat(mb * 1024 * 1024) }));
      const head =
        `POST /core/v1/api-key HTTP/1.1\r\nHost: localhost\r\nx-api-key: ${t.key}\r\nx-tenant-id: ${t.id}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`;
      const outcomes: string[] = [];
      for (let i = 0; i < 30; i++) {
        const { response, error } = await rawRequest(port, head, body);
        outcomes.push(response.startsWith('HTTP/1.1 413') ? '413' : `${response.split('\r\n')[0] || '(no answer)'} ${error ?? ''}`.trim());
      }
      const headers = { 'x-api-key': t.key, 'x-tenant-id': t.id, 'content-type': 'application/json', 'content-length': String(body.length) };
      for (let i = 0; i < 30; i++) outcomes.push(await httpRequest(port, headers, body));
      const failures = outcomes.filter((o) => o !== '413');
      expect(failures, `${failures.length} of ${outcomes.length} attempts got no 413`).toEqual([]);
    });
  }

  it('still answers afterwards, the body-limit answer in the documented shape', async () => {
    const res = await t.json('POST', '/core/v1/api-key', { name: 'x'.repeat(2 * 1024 * 1024) });
    expect(res.status).toBe(413);
    expect(res.body.status.code).toBe('payload_too_large');
  });
});

/**
 * The same raw client in another process (a server and a client sharing one event loop take turns, which hides the
 * race): `n` requests of `mb` MB, each read once written; the count of each outcome.
 */
async function rawRequestsFromAnotherProcess(port: number, mb: number, n: number): Promise<Record<string, number>> {
  const client = `
    const { connect } = require('node:net');
    const body = Buffer.alloc(${mb} * 1024 * 1024, 'x');
    const one = () => new Promise((resolve) => {
      const s = connect(${port}, '127.0.0.1');
      let r = '', done = false;
      const fin = (v) => { if (!done) { done = true; s.destroy(); resolve(v); } };
      s.pause();
      s.on('data', (c) => { r += c; if (r.includes('\\r\\n\\r\\n')) fin(r.slice(9, 12)); });
      s.on('error', (e) => fin(e.code));
      s.on('end', () => fin(r.slice(9, 12) || 'EOF'));
      s.on('connect', () => {
        s.write('POST /x HTTP/1.1\\r\\nHost: localhost\\r\\nContent-Type: application/json\\r\\nContent-Length: ' + body.length + '\\r\\n\\r\\n');
        s.write(body, () => s.resume());
      });
    });
    (async () => { const out = {}; for (let i = 0; i < ${n}; i++) { const v = await one(); out[v] = (out[v] || 0) + 1; } console.log(JSON.stringify(out)); })();
  `;
  const { stdout } = await promisify(execFile)(process.execPath, ['-e', client], { timeout: 120_000 });
  return JSON.parse(stdout) as Record<string, number>;
}

/**
 * The drain alone, on a bare Fastify server with the platform's error handling (the whole platform's own answer
 * above, with its clients in the test's own process, did not lose its 413 on this machine even without it): 12 MB to a
 * 1 MiB limit, from a client in another process that reads once it has written. Without `registerBodyDrain` every one
 * of these requests failed with EPIPE here.
 */
describe('registerBodyDrain', () => {
  const app = Fastify({ bodyLimit: 1024 * 1024 });
  let port: number;
  beforeAll(async () => {
    registerErrorHandling(app);
    registerBodyDrain(app, { maxBytes: 16 * 1024 * 1024, maxMs: 10_000 });
    app.post('/x', async () => ({ ok: true }));
    await app.listen({ port: 0, host: '127.0.0.1' });
    port = (app.server.address() as { port: number }).port;
  });
  afterAll(() => app.close());

  it('answers 413 to each of 20 requests with a 12 MB body from a client in another process', async () => {
    expect(await rawRequestsFromAnotherProcess(port, 12, 20)).toEqual({ 413: 20 });
  });
});
