import type { FastifyInstance } from 'fastify';
import { and, eq } from 'drizzle-orm';
import type { PlatformContext } from '../../context.ts';
import { ApiError } from '../../platform/errors.ts';
import { isManifestPath, MEDIA_CORS, mediaNotFound, registerMediaDelivery } from '../../platform/mediaDelivery.ts';
import { hasReached, MEDIA_WAIT_MS, mediaName, playlistPosition, StoreWaiter, streamOpenSegment } from './blockingReload.ts';
import { servesPath } from './drm.ts';
import { minuteOf, recordChannelStats } from './stats.ts';
import { liveChannels, type ChannelEndpointRow } from './tables.ts';
import { serveRange } from './timeline.ts';
import { channelPrefix } from './urls.ts';

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
 * channel's owner publishes them, through the platform's media delivery (CORS, ranges, the playback guards), with
 * short caching for playlists. Any live channel of the tenant is served (an Off channel's last files stay until it is deleted); of a
 * channel with DRM endpoints, only their encrypted files.
 * `range/{startMs}-{endMs|now}/*.m3u8` are playlists of a range of the channel's timeline (`timeline.ts`).
 */
export function registerLiveDelivery(app: FastifyInstance, ctx: PlatformContext): void {
  const known = new Map<string, { until: number; endpoints: ChannelEndpointRow[] }>();
  const viewers = new ViewerCounter();
  const timer = setInterval(() => void viewers.flush(ctx).catch((err) => app.log.warn({ err }, 'live viewer counts not written')), VIEWERS_FLUSH_MS);
  timer.unref();
  const waiter = new StoreWaiter(ctx.store);
  app.addHook('onClose', async () => {
    clearInterval(timer);
    waiter.close();
    await viewers.flush(ctx).catch(() => {});
  });

  /** The channel's endpoints (which files players may read), or undefined when there is no such channel. */
  async function channelEndpoints(tenantId: string, channelId: string): Promise<ChannelEndpointRow[] | undefined> {
    const key = `${tenantId}/${channelId}`;
    const cached = known.get(key);
    if (cached && cached.until > Date.now()) return cached.endpoints;
    const [row] = await ctx.db
      .select({ endpoints: liveChannels.endpoints })
      .from(liveChannels)
      .where(and(eq(liveChannels.tenantId, tenantId), eq(liveChannels.id, channelId)));
    if (!row) return undefined;
    if (known.size > 10_000) known.clear();
    known.set(key, { until: Date.now() + CHANNEL_CACHE_MS, endpoints: row.endpoints });
    return row.endpoints;
  }

  registerMediaDelivery(app, ctx, {
    delivery: 'live',
    urlName: 'live',
    async find(tenantId, channelId) {
      const endpoints = await channelEndpoints(tenantId, channelId);
      return endpoints && { entity: { tenantId, channelId, endpoints } };
    },
    async locate({ tenantId, channelId, endpoints }, path, req, reply) {
      // A DRM channel's clear files are not served (drm.ts): a 404, as for a file that does not exist.
      if (!servesPath(endpoints, path)) return undefined;
      if (/^(?:[a-z0-9]+\/)?range\//.test(path)) {
        reply.headers(MEDIA_CORS);
        return (await serveRange(ctx, reply, tenantId, channelId, endpoints, path, req.method === 'HEAD')) ? 'sent' : undefined;
      }
      const prefix = channelPrefix(tenantId, channelId);
      const key = prefix + path;
      const query = req.query as Record<string, unknown>;
      if (path.endsWith('.m3u8') && ['_HLS_msn', '_HLS_part', '_HLS_skip'].some((q) => query[q] !== undefined)) {
        return { body: await lowLatencyPlaylist(key, query), cacheControl: PLAYLIST_CACHE };
      }
      const playlist = isManifestPath(path);
      if (!playlist && req.method === 'GET') viewers.see(tenantId, channelId, `${req.ip} ${req.headers['user-agent'] ?? ''}`);
      const info = await ctx.store.head(key);
      if (!info) {
        // Low latency: a part or a segment asked for just before it is published is held until it is.
        const early = req.headers.range ? undefined : await publishedSoon(prefix, path);
        return early && { body: early, cacheControl: 'no-cache' };
      }
      if (playlist) {
        // Read whole, then sent with its own length: the packager replaces playlists several times a second (low
        // latency), and a length taken from a stat before the file was replaced would not match the bytes streamed.
        const body = await waiter.read(key);
        return body && { body, cacheControl: PLAYLIST_CACHE };
      }
      return { key, size: info.size, cacheControl: SEGMENT_CACHE };
    },
  });

  /**
   * A blocking playlist reload (`_HLS_msn`, `_HLS_part`): answered once the playlist has that segment or part, `503`
   * after three target durations without it, `400` for a request beyond the next two segments. `_HLS_skip=YES` (or
   * `v2`) answers the delta update. A playlist without `CAN-BLOCK-RELOAD` (NormalLatency) ignores the parameters.
   */
  async function lowLatencyPlaylist(key: string, query: Record<string, unknown>): Promise<string> {
    const msn = directive(query, '_HLS_msn');
    const part = directive(query, '_HLS_part');
    const skip = query._HLS_skip;
    if (skip !== undefined && skip !== 'YES' && skip !== 'v2') throw new ApiError(400, 'hls_directive_invalid', '_HLS_skip must be YES or v2');
    if (part !== undefined && msn === undefined) throw new ApiError(400, 'hls_directive_invalid', '_HLS_part needs _HLS_msn');
    let text = (await waiter.read(key))?.toString('utf8');
    if (text === undefined) throw mediaNotFound();
    const position = playlistPosition(text);
    if (!position.canBlock) return text;
    if (msn !== undefined && !hasReached(position, msn, part)) {
      if (msn > position.msn + 2)
        throw new ApiError(400, 'hls_directive_invalid', `_HLS_msn ${msn} is more than two segments ahead of the playlist (${position.msn})`);
      const load = async () => (await waiter.read(key))?.toString('utf8');
      const reached = await waiter.wait(
        `playlist:${key}`,
        load,
        (t) => t !== undefined && hasReached(playlistPosition(t), msn, part),
        position.targetDuration * 3000,
      );
      if (reached === undefined)
        throw new ApiError(503, 'hls_playlist_not_ready', `the playlist did not reach segment ${msn}${part === undefined ? '' : ` part ${part}`} in time`);
      text = reached;
    }
    if (skip !== undefined) {
      // Published just before the full playlist: at least as far along as the text that satisfied the wait.
      const delta = (await waiter.read(key.replace(/\.m3u8$/, '.delta.m3u8')))?.toString('utf8');
      if (delta !== undefined) return delta;
    }
    return text;
  }

  /**
   * A part or segment that is the next one to be published (its predecessor exists) is waited for; a segment still
   * being written is streamed from its parts (low-latency DASH). Anything else is undefined: a plain 404.
   */
  async function publishedSoon(prefix: string, path: string): Promise<Buffer | NodeJS.ReadableStream | undefined> {
    const name = mediaName(path);
    if (!name) return undefined;
    const { track, sequence, part } = name;
    const at = (s: number, p?: number) => `${prefix}${track}/${s}${p === undefined ? '' : `.${p}`}.m4s`;
    if (part !== undefined) {
      const next =
        part > 0 ? await waiter.exists(at(sequence, part - 1)) : (await waiter.exists(at(sequence - 1))) || (await waiter.exists(at(sequence - 1, 0)));
      if (!next) return undefined;
      // Parts are published before their segment: once the segment exists without this part, it will never come
      // (a hint made void by the end of a run), and the answer is 404 at once.
      const found = await waiter.wait<Buffer | 'never' | undefined>(
        `part:${at(sequence, part)}`,
        async () => (await waiter.read(at(sequence, part))) ?? ((await waiter.exists(at(sequence))) ? 'never' : undefined),
        (v) => v !== undefined,
        MEDIA_WAIT_MS,
      );
      return found === 'never' ? undefined : found;
    }
    // Parts of this segment or of the one before are the sign of a low-latency channel writing it now.
    if (!(await waiter.exists(at(sequence, 0))) && !(await waiter.exists(at(sequence - 1, 0)))) return undefined;
    const first = await waiter.wait<Buffer | 'whole' | undefined>(
      `segment:${at(sequence)}`,
      async () => (await waiter.read(at(sequence, 0))) ?? ((await waiter.exists(at(sequence))) ? 'whole' : undefined),
      (v) => v !== undefined,
      MEDIA_WAIT_MS,
    );
    if (first === undefined) return undefined;
    if (first === 'whole') return waiter.read(at(sequence));
    return streamOpenSegment(waiter, prefix, track, sequence, first);
  }
}

/** An `_HLS_msn`/`_HLS_part` value: a non-negative integer, or absent. */
function directive(query: Record<string, unknown>, name: string): number | undefined {
  const raw = query[name];
  if (raw === undefined) return undefined;
  if (typeof raw !== 'string' || !/^\d{1,15}$/.test(raw)) throw new ApiError(400, 'hls_directive_invalid', `${name} must be a non-negative integer`);
  return Number(raw);
}
