import { and, asc, eq, gt, inArray, lt, sql } from 'drizzle-orm';
import type { FastifyReply } from 'fastify';
import type { PlatformContext } from '../../context.ts';
import { dashDrmManifest, HLS_DRM_PREFIX, hlsDrmRangePlaylist } from '../../media/live/protect.ts';
import { encryptionOf } from '../../media/protect.ts';
import { rangeMpd } from '../../media/live/rangeMpd.ts';
import { masterTracks, rangeMediaPlaylist, withoutCaptions } from '../../media/live/rangePlaylist.ts';
import { ApiError } from '../../platform/errors.ts';
import { keyIdsOf } from '../drm/keys.ts';
import { channelDrmOf, channelProtection, dashSchemeOf, drmPrefixOf } from './drm.ts';
import { rangeDashTracks } from './rangeDash.ts';
import { liveChannels, type ChannelEndpointRow } from './tables.ts';
import { liveTimelineSegments } from './timeline.tables.ts';
import { channelPrefix, DASH_MANIFEST, MASTER_PLAYLIST, mediaUrl } from './urls.ts';

/**
 * A channel's timeline (`timeline.tables.ts`) as ranges: what the Recorder copies and what an event's catch-up plays.
 * Other modules import this file (never the tables).
 */

export type TimelineSegment = typeof liveTimelineSegments.$inferSelect;

/** An output of a range, in the spec's EndpointInfo shape. */
export interface RangeEndpoint {
  id: string;
  accessType: 'Http';
  format: 'HLS' | 'DASH';
  url: string;
  /** `None`, or, of a channel with DRM endpoints, `Aes128` (its HlsDrm endpoint) or `ClearKey` (its DashDrm endpoint). */
  protection: 'None' | 'Aes128' | 'ClearKey';
  protectionDetails?: { keyIds: string[]; contentId: string };
  manifest: string;
  hasVerticalOrientation: boolean;
}

/**
 * A range is over (its playlist gets the end tag) once every track has a segment reaching its end, or its channel is
 * not running, or this long after its end in any case (a running channel whose encoder cannot keep up): the timeline
 * lags the wall clock by a few seconds (the encoder's start-up, one segment, the batched insert), more on a machine
 * that cannot encode in real time.
 */
export const RANGE_SETTLE_MS = 120_000;

/** The range's path segment: `{startMs}-{endMs}` or `{startMs}-now` (open: grows for as long as the channel runs). */
export const rangePath = (start: Date, end: Date | undefined): string => `range/${start.getTime()}-${end ? end.getTime() : 'now'}/`;

/**
 * The playable addresses of a range of a channel's timeline: an HLS playlist of exactly the segments that overlap
 * it, growing while the range runs (an EVENT playlist), with the end tag once it is over; and, when the channel has a
 * DASH endpoint, an MPD over the same segments (dynamic while the range runs, static once it is over). Across an input
 * loss or a channel restart they carry a discontinuity, a new Period (the slate is in the timeline, so the range is
 * never split).
 */
export async function rangeEndpoints(ctx: PlatformContext, tenantId: string, channelId: string, start: Date, end: Date | undefined): Promise<RangeEndpoint[]> {
  const [row] = await ctx.db
    .select({ endpoints: liveChannels.endpoints, drmKeyMode: liveChannels.drmKeyMode })
    .from(liveChannels)
    .where(and(eq(liveChannels.tenantId, tenantId), eq(liveChannels.id, channelId)));
  if (!row) return [];
  const vertical = row.endpoints.some((e) => e.hasVerticalOrientation);
  const path = rangePath(start, end);
  const drm = row.endpoints.filter((e) => e.isDrmProtected);
  if (drm.length > 0) {
    // A DRM channel plays only encrypted (drm.ts): its ranges too, with the channel's key, per protected endpoint.
    return drm.map((e) => {
      const hls = e.type.startsWith('Hls');
      const url = mediaUrl(ctx.config, tenantId, channelId, drmPrefixOf(e) + path + (hls ? MASTER_PLAYLIST : DASH_MANIFEST));
      return {
        id: hls ? 'hls-aes128' : `dash-${dashSchemeOf(e)}`,
        accessType: 'Http',
        format: hls ? 'HLS' : 'DASH',
        url,
        protection: hls ? 'Aes128' : 'ClearKey',
        ...(e.keyId ? { protectionDetails: { keyIds: keyIdsOf(channelId, e.keyId, row.drmKeyMode), contentId: channelId } } : {}),
        manifest: url,
        hasVerticalOrientation: vertical,
      };
    });
  }
  const endpoint = (id: 'hls' | 'dash', format: 'HLS' | 'DASH', file: string): RangeEndpoint => {
    const url = mediaUrl(ctx.config, tenantId, channelId, path + file);
    return { id, accessType: 'Http', format, url, protection: 'None', manifest: url, hasVerticalOrientation: vertical };
  };
  const out = [endpoint('hls', 'HLS', MASTER_PLAYLIST)];
  if (hasDash(row.endpoints)) out.push(endpoint('dash', 'DASH', DASH_MANIFEST));
  return out;
}

/** Whether a channel's endpoints include DASH (its live output then has an MPD, and so do its ranges). */
export const hasDash = (endpoints: { type: string }[]): boolean => endpoints.some((e) => e.type.startsWith('Dash'));

/** Of these channels of the tenant, the ones that have a DASH endpoint (a recording lists DASH when its channel does). */
export async function channelsWithDash(ctx: PlatformContext, tenantId: string, channelIds: string[]): Promise<Set<string>> {
  if (channelIds.length === 0) return new Set();
  const rows = await ctx.db
    .select({ id: liveChannels.id, endpoints: liveChannels.endpoints })
    .from(liveChannels)
    .where(and(eq(liveChannels.tenantId, tenantId), inArray(liveChannels.id, [...new Set(channelIds)])));
  return new Set(rows.filter((r) => hasDash(r.endpoints)).map((r) => r.id));
}

/** The segments of one track (or every track) that overlap [startMs, endMs), in order. */
export async function rangeSegments(
  ctx: PlatformContext,
  tenantId: string,
  channelId: string,
  startMs: number,
  endMs: number | undefined,
  track?: string,
): Promise<TimelineSegment[]> {
  const t = liveTimelineSegments;
  return ctx.db
    .select()
    .from(t)
    .where(
      and(
        eq(t.channelId, channelId),
        eq(t.tenantId, tenantId),
        track === undefined ? undefined : eq(t.track, track),
        gt(sql`${t.startMs} + ${t.durationMs}`, startMs),
        endMs === undefined ? undefined : lt(t.startMs, endMs),
      ),
    )
    .orderBy(asc(t.track), asc(t.startMs), asc(t.sequence));
}

/**
 * The master playlist of the channel's ranges, if it ever ran: the live output's, without captions (its variants are
 * the range's tracks).
 */
export async function channelMaster(ctx: PlatformContext, tenantId: string, channelId: string): Promise<string | undefined> {
  const master = await readObject(ctx, channelPrefix(tenantId, channelId) + MASTER_PLAYLIST);
  return master && withoutCaptions(master.toString('utf8'));
}

export { channelPrefix, masterTracks, rangeDashTracks };

/** Whether a track's segments reach the range's end, or the range ended long enough ago: its playlist is final. */
export function rangeEnded(segments: Pick<TimelineSegment, 'startMs' | 'durationMs'>[], endMs: number | undefined, now = Date.now()): boolean {
  if (endMs === undefined || now < endMs) return false;
  const last = segments.at(-1);
  return (last !== undefined && last.startMs + last.durationMs >= endMs) || now > endMs + RANGE_SETTLE_MS;
}

const RANGE = /^(aes128\/|cenc\/|cbcs\/)?range\/(\d{1,15})-(\d{1,15}|now)\/([A-Za-z0-9_-]{1,32})\.(m3u8|mpd)$/;

/**
 * Answers `GET /media/live/{tenant}/{channel}/range/{startMs}-{endMs|now}/{master|track}.m3u8`, rendered from the
 * timeline on each request (playlists only: the segments are the channel's own files, two levels up). Returns false
 * when `path` is no range path.
 */
export async function serveRange(
  ctx: PlatformContext,
  reply: FastifyReply,
  tenantId: string,
  channelId: string,
  endpoints: ChannelEndpointRow[],
  path: string,
  head: boolean,
): Promise<boolean> {
  const m = RANGE.exec(path);
  if (!m) return false;
  // Under a DRM endpoint's prefix (`aes128/range/...`, `cenc/range/...`), the same playlists over its encrypted copies
  // of the segments (the relative URIs land there), with the channel's key; the delivery serves no other of a DRM channel.
  const drmPrefix = m[1];
  const startMs = Number(m[2]);
  const endMs = m[3] === 'now' ? undefined : Number(m[3]);
  if (endMs !== undefined && endMs <= startMs) throw new ApiError(404, 'media_not_found', 'No such media file');
  const name = m[4]!;
  if (drmPrefix && (drmPrefix === HLS_DRM_PREFIX) !== (m[5] === 'm3u8')) throw new ApiError(404, 'media_not_found', 'No such media file');
  const protection = drmPrefix ? await channelProtection(ctx, tenantId, channelId, endpoints, await drmKeyModeOf(ctx, tenantId, channelId)) : undefined;
  const encryption = drmPrefix === HLS_DRM_PREFIX ? protection?.hls : drmPrefix ? protection?.dash?.find((d) => `${d.scheme}/` === drmPrefix) : undefined;
  if (drmPrefix && !encryption) throw new ApiError(404, 'media_not_found', 'No such media file');
  const master = await channelMaster(ctx, tenantId, channelId);
  if (!master) throw new ApiError(404, 'media_not_found', 'No such media file');
  const prefix = channelPrefix(tenantId, channelId);
  const isOver = async (segments: TimelineSegment[]) =>
    rangeEnded(segments, endMs) || (endMs !== undefined && Date.now() >= endMs && !(await channelRunning(ctx, tenantId, channelId)));
  const toRange = (s: TimelineSegment) => ({ uri: `../../${s.key}`, initUri: `../../${s.initKey}`, startMs: s.startMs, durationMs: s.durationMs, run: s.run });
  let body: string;
  let type = 'application/vnd.apple.mpegurl';
  if (m[5] === 'mpd') {
    if (`${name}.mpd` !== DASH_MANIFEST) throw new ApiError(404, 'media_not_found', 'No such media file');
    const segments = await rangeSegments(ctx, tenantId, channelId, startMs, endMs);
    const tracks = await rangeDashTracks(
      master,
      segments.map((s) => ({ ...toRange(s), track: s.track, sequence: s.sequence, decodeTime: s.decodeTime })),
      (uri) => readObject(ctx, prefix + uri.replace(/^(\.\.\/)+/, '')),
    );
    // Over when every track it lists is (captions, which have no segments on the timeline, are not waited for).
    const perTrack = tracks.length ? tracks.map((t) => segments.filter((s) => s.track === t.name)) : [[]];
    const over = (await Promise.all(perTrack.map(isOver))).every(Boolean);
    body = rangeMpd(tracks, { type: over ? 'static' : 'dynamic', segmentSeconds: ctx.config.live.segmentSeconds, now: Date.now(), clock: { direct: true } });
    if (encryption) body = dashDrmManifest(body, encryption);
    type = 'application/dash+xml';
  } else if (name === 'master') body = master;
  else {
    if (!masterTracks(master).includes(name)) throw new ApiError(404, 'media_not_found', 'No such media file');
    const segments = await rangeSegments(ctx, tenantId, channelId, startMs, endMs, name);
    body = rangeMediaPlaylist(segments.map(toRange), { type: 'EVENT', ended: await isOver(segments), segmentSeconds: ctx.config.live.segmentSeconds });
    if (encryption) body = hlsDrmRangePlaylist(body, encryptionOf(encryption, name === 'audio' ? 'audio' : 'video').keyUrl);
  }
  reply.headers({ 'content-type': type, 'cache-control': 'public, max-age=1', 'content-length': Buffer.byteLength(body) });
  await (head ? reply.send() : reply.send(body));
  return true;
}

async function drmKeyModeOf(ctx: PlatformContext, tenantId: string, channelId: string): Promise<string | null | undefined> {
  const [row] = await ctx.db
    .select({ drmKeyMode: liveChannels.drmKeyMode })
    .from(liveChannels)
    .where(and(eq(liveChannels.tenantId, tenantId), eq(liveChannels.id, channelId)));
  return row?.drmKeyMode;
}

/** A whole object of the store, or undefined when it is gone (init segments and playlists are small). */
export async function readObject(ctx: PlatformContext, key: string): Promise<Buffer | undefined> {
  try {
    const chunks: Buffer[] = [];
    for await (const c of await ctx.store.getStream(key)) chunks.push(c as Buffer);
    return Buffer.concat(chunks);
  } catch (e) {
    // Deleted by the channel's retention meanwhile: as good as never there.
    if ((e as { code?: string }).code === 'NoSuchKey') return undefined;
    throw e;
  }
}

/**
 * The channel's endpoints and, when they are protected, what a recording of it is protected with (`channelDrmOf`);
 * undefined when the tenant has no such channel (other modules refer to channels by id).
 */
export async function channelEndpoints(ctx: PlatformContext, tenantId: string, channelId: string) {
  const [row] = await ctx.db
    .select({ endpoints: liveChannels.endpoints, drmKeyMode: liveChannels.drmKeyMode })
    .from(liveChannels)
    .where(and(eq(liveChannels.tenantId, tenantId), eq(liveChannels.id, channelId)));
  return row && { endpoints: row.endpoints, drm: channelDrmOf(channelId, row.endpoints, row.drmKeyMode) };
}

/** Whether the channel is running (or about to): while it is not, no segment will come, and a range that ended is over. */
export async function channelRunning(ctx: PlatformContext, tenantId: string, channelId: string): Promise<boolean> {
  const [row] = await ctx.db
    .select({ status: liveChannels.status })
    .from(liveChannels)
    .where(and(eq(liveChannels.tenantId, tenantId), eq(liveChannels.id, channelId)));
  return !!row && ['Starting', 'On', 'Stopping'].includes(row.status);
}
