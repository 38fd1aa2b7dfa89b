import type { FastifyInstance } from 'fastify';
import { and, eq, sql } from 'drizzle-orm';
import type { PlatformContext } from '../../../context.ts';
import { isManifestPath, registerMediaDelivery } from '../../../platform/mediaDelivery.ts';
import { vodOutputs } from './tables.ts';
import { outputPrefix } from '../storageKeys.ts';

/**
 * Serves the files of available (or playable while encoding) outputs to players: `GET /media/vod/{tenant}/{asset}/{output}/{path}`, from the
 * object store, through the platform's media delivery (CORS, ranges, the playback guards).
 */
export function registerVodDelivery(app: FastifyInstance, ctx: PlatformContext): void {
  registerMediaDelivery(app, ctx, {
    delivery: 'vod',
    urlName: 'vod',
    async find(tenantId, assetId, path) {
      const [outputId, ...below] = path.split('/');
      if (!outputId || !below.length) return undefined;
      const [output] = await ctx.db
        .select({ status: vodOutputs.status, published: sql<number>`jsonb_array_length(${vodOutputs.endpoints})` })
        .from(vodOutputs)
        .where(and(eq(vodOutputs.tenantId, tenantId), eq(vodOutputs.assetId, assetId), eq(vodOutputs.id, outputId)));
      // Served once finished, and while it encodes from the moment it is playable (its endpoints are published).
      const growing = output?.status === 'Processing' && Number(output.published) > 0;
      if (output?.status !== 'Available' && !growing) return undefined;
      return { entity: { prefix: outputPrefix(tenantId, assetId, outputId), growing }, guardPath: below.join('/') };
    },
    async locate({ prefix, growing }, path) {
      // A growing playlist or MPD changes with every segment: a cache revalidates it each time (no-cache); segments
      // never change once published.
      const cacheControl = isManifestPath(path) ? (growing ? 'no-cache' : 'public, max-age=5') : 'public, max-age=31536000, immutable';
      return { key: prefix + path, cacheControl };
    },
  });
}
