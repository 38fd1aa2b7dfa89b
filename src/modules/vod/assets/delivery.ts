import type { FastifyInstance } from 'fastify';
import { and, eq } from 'drizzle-orm';
import type { PlatformContext } from '../../../context.ts';
import { ApiError } from '../../../platform/errors.ts';
import { isUuid } from '../../../platform/ids.ts';
import { admitMedia } from '../../../platform/playback.ts';
import { contentTypeOf } from '../../../storage/contentTypes.ts';
import { parseRange, rangeNotSatisfiable } from '../../../storage/range.ts';
import { vodOutputs } from './tables.ts';
import { outputPrefix } from '../storageKeys.ts';

const CORS = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'GET, HEAD, OPTIONS',
  'access-control-allow-headers': 'Range',
  'access-control-expose-headers': 'Content-Length, Content-Range, Accept-Ranges',
};

/**
 * Serves the files of available outputs to players: `GET /media/vod/{tenant}/{asset}/{output}/{path}`, from the
 * object store, with range requests and CORS so that a page on any origin can play them.
 */
export function registerVodDelivery(app: FastifyInstance, ctx: PlatformContext): void {
  const notFound = () => new ApiError(404, 'media_not_found', 'No such media file');

  app.options('/media/vod/*', { schema: { hide: true } }, async (_req, reply) =>
    reply
      .headers({ ...CORS, 'access-control-max-age': '86400' })
      .status(204)
      .send(),
  );

  app.route<{ Params: { tenantId: string; assetId: string; outputId: string; '*': string } }>({
    method: ['GET', 'HEAD'],
    url: '/media/vod/:tenantId/:assetId/:outputId/*',
    schema: { hide: true },
    handler: async (req, reply) => {
      const { tenantId, assetId, outputId } = req.params;
      const asked = req.params['*'];
      if (!isUuid(tenantId) || !isUuid(assetId) || !asked || asked.split('/').some((seg) => seg === '..' || seg === '')) throw notFound();
      // What does not exist is a 404 before any guard runs (a guard may read the tenant's settings).
      const [output] = await ctx.db
        .select({ status: vodOutputs.status })
        .from(vodOutputs)
        .where(and(eq(vodOutputs.tenantId, tenantId), eq(vodOutputs.assetId, assetId), eq(vodOutputs.id, outputId)));
      if (output?.status !== 'Available') throw notFound();
      // Tokens, allowed domains and observers (platform/playback.ts); undefined when it answered a redirect.
      const path = await admitMedia(ctx, req, reply, { delivery: 'vod', tenantId: tenantId.toLowerCase(), assetId: assetId.toLowerCase(), path: asked });
      if (path === undefined) return reply;
      if (!path) throw notFound();
      const key = `${outputPrefix(tenantId, assetId, outputId)}${path}`;
      const info = await ctx.store.head(key);
      if (!info) throw notFound();
      reply.headers({ ...CORS, 'accept-ranges': 'bytes' });
      const range = parseRange(req.headers.range, info.size);
      // Answered like the store's own download URLs: the one error body through the platform's error handler, and
      // none of the caching headers below, which would let a cache keep the refusal for a year.
      if (range === 'unsatisfiable') throw rangeNotSatisfiable(reply, req.headers.range, info.size);
      reply.headers({
        'content-type': contentTypeOf(path),
        'cache-control': /\.(m3u8|mpd)$/.test(path) ? 'public, max-age=5' : 'public, max-age=31536000, immutable',
      });
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
    },
  });
}
