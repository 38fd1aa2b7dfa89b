import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../platform/errors.ts';
import { contentTypeOf } from './contentTypes.ts';
import { parseRange, rangeNotSatisfiable } from './range.ts';
import type { FsObjectStore } from './fsStore.ts';
import { PartIdleError, PartTooLargeError } from './fsUploads.ts';
import { StoreError } from './objectStore.ts';

/** Browsers on any origin may PUT parts and GET objects (a player on the tenant's site, an upload widget). */
const CORS = {
  'access-control-allow-origin': '*',
  'access-control-expose-headers': 'ETag, Content-Length, Content-Range, Accept-Ranges, Content-Type',
};

/** The object key is the URL path after the prefix; each segment was percent-encoded by the signer. */
function keyOf(request: FastifyRequest, prefix: string): string {
  const path = request.url.split('?')[0].slice(prefix.length);
  try {
    return path.split('/').map(decodeURIComponent).join('/');
  } catch {
    throw new ApiError(400, 'malformed_url', 'The URL path is not valid percent-encoding');
  }
}

function checkExpiry(expires: string | undefined): number {
  const at = Number(expires);
  if (!expires || !Number.isInteger(at)) throw new ApiError(403, 'url_signature_invalid', 'The URL is not signed (expires is missing)');
  if (at < Date.now() / 1000) {
    const when = new Date(at * 1000);
    throw new ApiError(403, 'url_expired', `The URL expired${Number.isNaN(when.getTime()) ? '' : ` at ${when.toISOString()}`}; ask for a new one`);
  }
  return at;
}

const UPLOAD_PREFIX = '/storage/v1/upload/';
const OBJECT_PREFIX = '/storage/v1/object/';

/**
 * The embedded store's signed URLs, served by the platform itself: part uploads (PUT, streamed to disk) and object
 * downloads (GET/HEAD with ranges). No API key: the signature is the authorization.
 */
export async function storageRoutes(app: FastifyInstance, { store }: { store: FsObjectStore }): Promise<void> {
  // Part bodies are raw bytes of any content type, streamed by the handler, never parsed or buffered.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_request, _payload, done) => done(null, undefined));
  app.addHook('onSend', async (_request, reply) => {
    reply.headers(CORS);
  });
  const hide = { schema: { hide: true } };

  app.options(`${UPLOAD_PREFIX}*`, hide, preflight);
  app.options(`${OBJECT_PREFIX}*`, hide, preflight);

  app.put(`${UPLOAD_PREFIX}*`, hide, async (request, reply) => {
    const key = keyOf(request, UPLOAD_PREFIX);
    const q = request.query as Record<string, string | undefined>;
    const expires = checkExpiry(q.expires);
    const partNumber = Number(q.partNumber);
    const uploadId = q.uploadId ?? '';
    if (!Number.isInteger(partNumber) || !store.verifyPartUrl(key, uploadId, partNumber, expires, q.signature ?? '')) {
      throw new ApiError(403, 'url_signature_invalid', 'The URL signature does not match; URLs must be used exactly as issued');
    }
    try {
      const { eTag } = await store.receivePart(key, uploadId, partNumber, request.raw);
      return reply.header('etag', eTag).status(200).send();
    } catch (e) {
      if (e instanceof StoreError) throw new ApiError(404, 'upload_not_found', e.message);
      if (e instanceof PartTooLargeError) throw new ApiError(413, 'part_too_large', e.message);
      if (e instanceof PartIdleError) {
        // The rest of the body may never come: the connection cannot be kept for another request.
        reply.header('connection', 'close');
        throw new ApiError(408, 'part_timeout', e.message);
      }
      if ((e as NodeJS.ErrnoException).code === 'ERR_STREAM_PREMATURE_CLOSE' || (e as NodeJS.ErrnoException).code === 'ECONNRESET') {
        throw new ApiError(400, 'part_incomplete', 'The part body ended before all of its bytes arrived; send the part again');
      }
      throw e;
    }
  });

  app.get(`${OBJECT_PREFIX}*`, hide, async (request, reply) => {
    const key = keyOf(request, OBJECT_PREFIX);
    const q = request.query as Record<string, string | undefined>;
    const expires = checkExpiry(q.expires);
    if (!store.verifyGetUrl(key, expires, q.filename, q.signature ?? '')) {
      throw new ApiError(403, 'url_signature_invalid', 'The URL signature does not match; URLs must be used exactly as issued');
    }
    const info = await store.head(key);
    if (!info) throw new ApiError(404, 'object_not_found', 'The object no longer exists');
    reply.header('content-type', contentTypeOf(key)).header('accept-ranges', 'bytes').header('cache-control', 'private, max-age=60');
    if (q.filename) reply.header('content-disposition', `attachment; filename*=UTF-8''${encodeURIComponent(q.filename)}`);
    const range = parseRange(request.headers.range, info.size);
    if (range === 'unsatisfiable') throw rangeNotSatisfiable(reply, request.headers.range, info.size);
    if (!range) return reply.header('content-length', info.size).send(await store.getStream(key));
    return reply
      .status(206)
      .header('content-range', `bytes ${range.start}-${range.end}/${info.size}`)
      .header('content-length', range.end - range.start + 1)
      .send(await store.getStream(key, range));
  });
}

async function preflight(request: FastifyRequest, reply: FastifyReply) {
  return reply
    .status(204)
    .headers({
      'access-control-allow-methods': 'GET, HEAD, PUT',
      'access-control-allow-headers': request.headers['access-control-request-headers'] ?? '*',
      'access-control-max-age': '86400',
    })
    .send();
}
