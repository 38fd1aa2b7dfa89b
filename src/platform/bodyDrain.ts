import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';

/**
 * A refusal every client can read. When a request's body cannot be parsed (too large: 413; a wrong Content-Type: 415;
 * malformed), Fastify answers at once with `Connection: close`, before the client has sent its body, and Node closes
 * the socket after the answer. A client that is still sending (any client without `Expect: 100-continue`) then has
 * its next bytes answered by a TCP reset, and its stack drops the answer it had not read yet: "connection reset"
 * instead of the 413, on a share of requests that grows with the body.
 *
 * So before such an answer goes out, the rest of the body is read and discarded, up to a bound: `maxBytes`
 * (a client that keeps sending beyond it gets its answer anyway, and may see the reset) or `maxMs`. Then the answer
 * is sent and the connection closed, with nothing left unread.
 */
export function registerBodyDrain(app: FastifyInstance, { maxBytes, maxMs }: { maxBytes: number; maxMs: number }): void {
  // A callback hook: every answer passes here, and all but refusals go on at once, without a promise.
  app.addHook('onSend', (request, reply, payload, done) => {
    const raw = request.raw;
    // readableEnded too: a body read to its end (then refused, e.g. a wrong charset) has nothing left to wait for, and
    // an injected request (app.inject) never says it is `complete`.
    if (!raw.complete && !raw.readableEnded && !raw.destroyed && reply.getHeader('connection') === 'close') {
      void drain(raw, maxBytes, maxMs).then(() => done(null, payload));
    } else {
      done(null, payload);
    }
  });
}

/** Reads and discards what is left of a request's body: until its end, `maxBytes` more bytes, `maxMs`, or an error. */
function drain(raw: IncomingMessage, maxBytes: number, maxMs: number): Promise<void> {
  return new Promise((resolve) => {
    let seen = 0;
    const done = () => {
      clearTimeout(timer);
      raw.removeListener('data', onData).removeListener('end', done).removeListener('error', done).removeListener('close', done);
      resolve();
    };
    const onData = (chunk: Buffer) => {
      seen += chunk.length;
      if (seen > maxBytes) done();
    };
    const timer = setTimeout(done, maxMs);
    raw.on('data', onData).once('end', done).once('error', done).once('close', done);
    raw.resume();
  });
}
