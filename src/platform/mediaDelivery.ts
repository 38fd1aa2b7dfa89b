import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { PlatformContext } from '../context.ts';
import { contentTypeOf } from '../storage/contentTypes.ts';
import { parseRange, rangeNotSatisfiable } from '../storage/range.ts';
import { ApiError } from './errors.ts';
import { isUuid } from './ids.ts';
import { admitMedia, type MediaRequest } from './playback.ts';

/**
 * Media delivery, written once: `GET`/`HEAD`/`OPTIONS` of `/media/{delivery}/{tenant}/{id}/{path}` with CORS for pages
 * on any origin, the path guard, the playback guards (`admitMedia`), Range/206 and HEAD. A module gives a
 * `MediaSource`: what the id and path name (404 before any guard when nothing), and where an admitted path is stored
 * with its caching. The modules keep their rules; the HTTP of media is the same for VOD, live and recordings.
 */

export const MEDIA_CORS = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'GET, HEAD, OPTIONS',
  'access-control-allow-headers': 'Range',
  // Date: dash.js falls back to an MPD response's Date when it cannot read the MPD's clock.
  'access-control-expose-headers': 'Content-Length, Content-Range, Accept-Ranges, Date',
} as const;

/** Playlists and MPDs: they may change while a stream is live or an output still encodes. */
export const isManifestPath = (path: string) => /\.(m3u8|mpd)$/.test(path);

export const mediaNotFound = () => new ApiError(404, 'media_not_found', 'No such media file');

/** What a source found for an id and a path, before the guards run. */
export interface MediaFound<E> {
  entity: E;
  /** The path the guards see (and the source is given back, its token segment taken off); the whole path by default. */
  guardPath?: string;
  /** The file needs a playback token whatever the asset's settings say. */
  requiresToken?: boolean;
}

/**
 * Where an admitted path is served from: a stored object (ranges served), a body the source made, or `'sent'` when
 * the source answered the request itself.
 */
export type MediaLocation =
  /** `size` when the source has already looked the object up. */
  { key: string; cacheControl: string; size?: number } | { body: Buffer | string | NodeJS.ReadableStream; cacheControl: string } | 'sent';

export interface MediaSource<E> {
  /** `/media/{delivery}/...`, and the `delivery` the playback guards are told. */
  delivery: MediaRequest['delivery'];
  /** The URL's second segment: `vod` → `/media/vod/...`. */
  urlName: string;
  /** What the id and the path name; undefined is a 404 before any guard runs (a guard may read the tenant's settings). */
  find(tenantId: string, id: string, path: string): Promise<MediaFound<E> | undefined>;
  /** The admitted path's location; undefined is a 404. */
  locate(found: E, path: string, req: FastifyRequest, reply: FastifyReply): Promise<MediaLocation | undefined>;
}

/** A path below an id that names nothing outside it: no empty, `.` or `..` segment. */
const safePath = (path: string | undefined): path is string => !!path && path.split('/').every((seg) => seg !== '' && seg !== '.' && seg !== '..');

export function registerMediaDelivery<E>(app: FastifyInstance, ctx: PlatformContext, source: MediaSource<E>): void {
  const base = `/media/${source.urlName}`;
  app.options(`${base}/*`, { schema: { hide: true } }, async (_req, reply) =>
    reply
      .headers({ ...MEDIA_CORS, 'access-control-max-age': '86400' })
      .status(204)
      .send(),
  );

  app.route<{ Params: { tenantId: string; id: string; '*': string } }>({
    method: ['GET', 'HEAD'],
    url: `${base}/:tenantId/:id/*`,
    schema: { hide: true },
    handler: async (req, reply) => {
      // Ids are UUIDs, whatever their case in the URL: one form for the query, the guards and the storage keys.
      const tenantId = req.params.tenantId.toLowerCase();
      const id = req.params.id.toLowerCase();
      const asked = req.params['*'];
      if (!isUuid(tenantId) || !isUuid(id) || !safePath(asked)) throw mediaNotFound();
      const found = await source.find(tenantId, id, asked);
      if (!found) throw mediaNotFound();
      const guarded = found.guardPath ?? asked;
      // Tokens, allowed domains and observers (platform/playback.ts); undefined when it answered a redirect.
      const admitted = await admitMedia(ctx, req, reply, {
        delivery: source.delivery,
        tenantId,
        assetId: id,
        path: guarded,
        requiresToken: found.requiresToken,
      });
      if (admitted === undefined) return reply;
      if (!admitted) throw mediaNotFound();
      const location = await source.locate(found.entity, admitted, req, reply);
      if (!location) throw mediaNotFound();
      if (location === 'sent') return reply;
      reply.headers(MEDIA_CORS);
      const headers = { 'content-type': contentTypeOf(admitted), 'cache-control': location.cacheControl };
      if ('body' in location) return reply.headers(headers).send(req.method === 'HEAD' ? undefined : location.body);
      return sendStored(ctx, req, reply, location, headers);
    },
  });
}

/** A stored object, whole or the asked range (206), its length named; no body for HEAD. */
async function sendStored(
  ctx: PlatformContext,
  req: FastifyRequest,
  reply: FastifyReply,
  { key, size: known }: { key: string; size?: number },
  headers: { 'content-type': string; 'cache-control': string },
): Promise<FastifyReply> {
  const info = known === undefined ? await ctx.store.head(key) : { size: known };
  if (!info) throw mediaNotFound();
  reply.header('accept-ranges', 'bytes');
  const range = parseRange(req.headers.range, info.size);
  // Answered like the store's own download URLs: the one error body through the platform's error handler, and none of
  // the caching headers, which would let a cache keep the refusal.
  if (range === 'unsatisfiable') throw rangeNotSatisfiable(reply, req.headers.range, info.size);
  reply.headers(headers);
  if (range) {
    reply
      .status(206)
      .header('content-range', `bytes ${range.start}-${range.end}/${info.size}`)
      .header('content-length', range.end - range.start + 1);
  } else {
    reply.header('content-length', info.size);
  }
  if (req.method === 'HEAD') return reply.send();
  return reply.send(await ctx.store.getStream(key, range ?? undefined));
}
