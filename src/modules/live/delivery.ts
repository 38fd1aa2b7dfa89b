import type { FastifyInstance } from 'fastify';
import { and, eq } from 'drizzle-orm';
import type { PlatformContext } from '../../context.ts';
import { ApiError } from '../../platform/errors.ts';
import { isUuid } from '../../platform/ids.ts';
import { admitMedia } from '../../platform/playback.ts';
import { contentTypeOf } from '../../storage/contentTypes.ts';
import { parseRange, rangeNotSatisfiable } from '../../storage/range.ts';
import { minuteOf, recordChannelStats } from './stats.ts';
import { liveChannels } from './tables.ts';
import { channelPrefix } from './urls.ts';

const CORS = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'GET, HEAD, OPTIONS',
  'access-control-allow-headers': 'Range',
  'access-control-expose-headers': 'Content-Length, Content-Range, Accept-Ranges',
};

/** How long this process trusts that a channel exists before asking the database again. */
const CHANNEL_CACHE_MS = 5000;
const VIEWERS_FLUSH_MS = 15_000;

/** Playlists change with every segment: a player (or a CDN) may keep one for about half a segment, no longer. */
const PLAYLIST_CACHE = 'public, max-age=1';
/** Segment and init files are never rewritten under the same name. */
const SEGMENT_CACHE = 'public, max-age=31536000, immutable';

/** Distinct players per channel and minute, from their segment requests; written to the channel's stats in batches. */
class ViewerCounter {
  private readonly minutes = new Map<string, { channelId: string; tenantId: string; minute: Date; viewers: Set<string> }>();

  see(tenantId: string, channelId: string, viewer: string): void {
    const minute = minuteOf(Date.now());
    const key = `${channelId}/${minute.getTime()}`;
    let entry = this.minutes.get(key);
    if (!entry) this.minutes.set(key, (entry = { channelId, tenantId, minute, viewers: new Set() }));
    entry.viewers.add(viewer);
  }

  /** Writes every minute seen; minutes that are over are then forgotten. */
  async flush(ctx: PlatformContext): Promise<void> {
    if (!this.minutes.size) return;
    const current = minuteOf(Date.now()).getTime();
    const rows = [...this.minutes.values()].map((e) => ({
      channelId: e.channelId,
      tenantId: e.tenantId,
      minute: e.minute,
      values: { concurrentViewers: e.viewers.size },
    }));
    for (const [key, e] of this.minutes) if (e.minute.getTime() < current) this.minutes.delete(key);
    await recordChannelStats(ctx.db, rows);
  }
}

/**
 * Serves live outputs to players: `GET /media/live/{tenant}/{channel}/{path}` from the object store, where the
 * channel's owner publishes them, with CORS so that a page on any origin plays them, ranges, and short caching for
 * playlists. Any live channel of the tenant is served (an Off channel's last files stay until it is deleted).
 */
export function registerLiveDelivery(app: FastifyInstance, ctx: PlatformContext): void {
  const notFound = () => new ApiError(404, 'media_not_found', 'No such media file');
  const known = new Map<string, number>();
  const viewers = new ViewerCounter();
  const timer = setInterval(() => void viewers.flush(ctx).catch((err) => app.log.warn({ err }, 'live viewer counts not written')), VIEWERS_FLUSH_MS);
  timer.unref();
  app.addHook('onClose', async () => {
    clearInterval(timer);
    await viewers.flush(ctx).catch(() => {});
  });

  async function channelExists(tenantId: string, channelId: string): Promise<boolean> {
    const key = `${tenantId}/${channelId}`;
    if ((known.get(key) ?? 0) > Date.now()) return true;
    const [row] = await ctx.db
      .select({ id: liveChannels.id })
      .from(liveChannels)
      .where(and(eq(liveChannels.tenantId, tenantId), eq(liveChannels.id, channelId)));
    if (!row) return false;
    if (known.size > 10_000) known.clear();
    known.set(key, Date.now() + CHANNEL_CACHE_MS);
    return true;
  }

  app.options('/media/live/*', { schema: { hide: true } }, async (_req, reply) =>
    reply
      .headers({ ...CORS, 'access-control-max-age': '86400' })
      .status(204)
      .send(),
  );

  app.route<{ Params: { tenantId: string; channelId: string; '*': string } }>({
    method: ['GET', 'HEAD'],
    url: '/media/live/:tenantId/:channelId/*',
    schema: { hide: true },
    handler: async (req, reply) => {
      const tenantId = req.params.tenantId.toLowerCase();
      const channelId = req.params.channelId.toLowerCase();
      const asked = req.params['*'];
      if (!isUuid(tenantId) || !isUuid(channelId) || !asked || asked.split('/').some((seg) => seg === '..' || seg === '' || seg === '.')) throw notFound();
      // Tokens, allowed domains and observers (platform/playback.ts); undefined when it answered a redirect.
      const path = await admitMedia(ctx, req, reply, { delivery: 'live', tenantId, assetId: channelId, path: asked });
      if (path === undefined) return reply;
      if (!path) throw notFound();
      if (!(await channelExists(tenantId, channelId))) throw notFound();
      const key = channelPrefix(tenantId, channelId) + path;
      const info = await ctx.store.head(key);
      if (!info) throw notFound();
      const playlist = /\.(m3u8|mpd)$/.test(path);
      if (!playlist && req.method === 'GET') viewers.see(tenantId, channelId, `${req.ip} ${req.headers['user-agent'] ?? ''}`);
      reply.headers({ ...CORS, 'accept-ranges': 'bytes' });
      const range = parseRange(req.headers.range, info.size);
      if (range === 'unsatisfiable') throw rangeNotSatisfiable(reply, req.headers.range, info.size);
      reply.headers({ 'content-type': contentTypeOf(path), 'cache-control': playlist ? PLAYLIST_CACHE : SEGMENT_CACHE });
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
