import { STATUS_CODES, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { ApiError } from './errors.ts';

/** What Node's HTTP layer hands to `clientError` (Fastify's `ConnectionError` types `rawPacket` wrongly). */
interface ClientError extends Error {
  code?: string;
  rawPacket?: unknown;
}

/** The refusal for each error Node's parser raises; everything else it refuses is a plain 400. */
function refusalOf(err: ClientError): ApiError {
  switch (err.code) {
    case 'HPE_HEADER_OVERFLOW':
      return new ApiError(431, 'request_header_fields_too_large', 'The request line and headers are larger than the server accepts');
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return new ApiError(413, 'payload_too_large', 'The chunk extensions of the request body are larger than the server accepts');
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new ApiError(408, 'request_timeout', 'The request was not received in time');
    default:
      return new ApiError(400, 'bad_request', 'The request is not valid HTTP/1.1 (malformed request line, header or framing)');
  }
}

/**
 * Whether the refused request may be a HEAD one, as far as the refused packet shows: it may when the packet does not
 * start with a request line (headers that overflow in a later TCP segment, a timeout), or holds a HEAD request line
 * anywhere (pipelined requests share a packet, and the refused one need not be the first).
 */
function mayBeHead(err: ClientError): boolean {
  if (!Buffer.isBuffer(err.rawPacket)) return true;
  const packet = err.rawPacket.toString('latin1');
  return !/^[A-Z]+ /.test(packet) || /(^|\n)HEAD /.test(packet);
}

/**
 * Fastify's `clientErrorHandler`: requests Node's HTTP parser refuses (a malformed header line, headers over 16 KiB,
 * a timeout) get the one error shape too, then the connection is closed, as Node does. The body is left out when
 * the request may be a HEAD one: after a HEAD answer a client reads no body, and bytes it does not expect would
 * corrupt its parser. Without a body the status line still tells the refusal.
 */
export function clientErrorHandler(this: FastifyInstance, err: ClientError, socket: Socket): void {
  // A reset connection, or one already gone: nobody is left to answer.
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const refusal = refusalOf(err);
  this.log.debug({ err, code: err.code }, 'client error');
  // Like Node: nothing is written if a response on this connection has already begun (pipelined requests).
  const inFlight = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
  if (socket.writable && !inFlight?.headersSent) socket.write(rawResponse(refusal, !mayBeHead(err)));
  socket.destroy(err);
}

function rawResponse(refusal: ApiError, withBody: boolean): string {
  const body = withBody ? JSON.stringify(refusal.body()) : '';
  const head = [
    `HTTP/1.1 ${refusal.httpStatus} ${STATUS_CODES[refusal.httpStatus]}`,
    ...(body ? ['Content-Type: application/json; charset=utf-8'] : []),
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Connection: close',
  ];
  return `${head.join('\r\n')}\r\n\r\n${body}`;
}

/**
 * HTTP/1.1 requires a Host header (RFC 9112 §3.2). Node refuses a request without one itself, with an empty 400;
 * the app turns that off (`requireHostHeader: false`) and refuses it here, in the one error shape.
 */
export function registerHostRequirement(app: FastifyInstance): void {
  app.addHook('onRequest', (request, _reply, done) => {
    if (request.raw.httpVersion === '1.1' && request.headers.host === undefined) {
      return done(new ApiError(400, 'bad_request', 'An HTTP/1.1 request must carry a Host header'));
    }
    done();
  });
}
