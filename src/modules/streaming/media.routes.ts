import type { FastifyInstance } from 'fastify';
import type { PlatformContext } from '../../context.ts';
import { ApiError } from '../../platform/errors.ts';
import { isUuid } from '../../platform/ids.ts';
import { servedImage } from './images.service.ts';
import { framesPrefix } from './storageKeys.ts';

/**
 * Serves the catalogue's pictures to pages and players, without credentials, like media: uploaded images at
 * `/media/streaming/{tenant}/{asset}/images/{imageId}` and frames at `.../frames/{file}`.
 */
export function registerImageDelivery(app: FastifyInstance, ctx: PlatformContext): void {
  const notFound = () => new ApiError(404, 'media_not_found', 'No such image');
  app.get<{ Params: { tenantId: string; assetId: string; kind: string; file: string } }>(
    '/media/streaming/:tenantId/:assetId/:kind/:file',
    { schema: { hide: true } },
    async (req, reply) => {
      const { tenantId, assetId, kind, file } = req.params;
      if (!isUuid(tenantId) || !/^[a-zA-Z0-9_-]{1,128}$/.test(assetId)) throw notFound();
      let key: string;
      let contentType: string;
      if (kind === 'images') {
        const image = await servedImage(ctx, tenantId, assetId, file);
        if (!image) throw notFound();
        ({ key, contentType } = image);
      } else if (kind === 'frames' && /^[a-z0-9_]{1,64}\.jpg$/.test(file)) {
        key = framesPrefix(tenantId.toLowerCase(), assetId) + file;
        contentType = 'image/jpeg';
      } else throw notFound();
      const info = await ctx.store.head(key);
      if (!info) throw notFound();
      reply.headers({
        'access-control-allow-origin': '*',
        'content-type': contentType,
        'content-length': info.size,
        'cache-control': 'public, max-age=300',
      });
      return reply.send(await ctx.store.getStream(key));
    },
  );
}
