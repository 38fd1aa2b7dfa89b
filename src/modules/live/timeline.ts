import { and, asc, eq, gt, inArray, lt, sql } from 'drizzle-orm';
import type { FastifyReply } from 'fastify';
import type { PlatformContext } from '../../context.ts';
import { readObjectIfAny } from '../../storage/readObject.ts';
import { dashDrmManifest, HLS_DRM_PREFIX, hlsDrmRangePlaylist, protectedMaster, sampleAesPlaylist } from '../../media/live/protection/protect.ts';
import { encryptionOf } from '../../media/protect.ts';
import { rangeMpd } from '../../media/live/packaging/rangeMpd.ts';
import { AUDIO_TRACK } from '../../media/live/args.ts';
import { captionModel } from '../../media/live/captions/captionModels.ts';
import { captionRendition, masterTracks, rangeMaster, rangeMediaPlaylist, rangeSubtitlePlaylist } from '../../media/live/packaging/rangePlaylist.ts';
import { CAPTION_TRACK, subtitleKey, subtitleMedia } from '../../media/live/captions/subtitles.ts';
import { ApiError } from '../../platform/errors.ts';
import { keyIdsOf } from '../drm/index.ts';
import { channelDrmOf, channelProtection, drmEndpointIdOf, drmPrefixOf } from './drm.ts';
import { rangeDashTracks } from './rangeDash.ts';
import { liveChannels, type ChannelEndpointRow } from './tables.ts';
import { liveTimelineSegments } from './timeline.tables.ts';
import { channelPrefix, DASH_MANIFEST, MASTER_PLAYLIST, mediaUrl } from './urls.ts';

/**
 * A channel's timeline (`timeline.tables.ts`) as ranges: what the Recorder copies and what an event's catch-up plays.
 * Other modules use it through live's front door (`index.ts`), never the tables.
 */

export type TimelineSegment = typeof liveTimelineSegments.$inferSelect;

/** An output of a range, in the spec's EndpointInfo shape. */
export interface RangeEndpoint {
  id: string;
  accessType: 'Http';
  format: 'HLS' | 'DASH';
  url: string;
  /** `None`, or, of a channel with DRM endpoints, `Aes128` (its AES-128 HlsDrm endpoint) or `ClearKey` (SAMPLE-AES, DashDrm). */
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
        ...drmEndpointIdOf(e),
        accessType: 'Http',
        format: hls ? 'HLS' : 'DASH',
        url,
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
  limit?: number,
): Promise<TimelineSegment[]> {
  const t = liveTimelineSegments;
  const query = ctx.db
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
  return limit === undefined ? query : query.limit(limit);
}

/** The channel's master playlist (its live output's), if it ever ran. */
export async function channelMaster(ctx: PlatformContext, tenantId: string, channelId: string): Promise<string | undefined> {
  return (await readObjectIfAny(ctx.store, channelPrefix(tenantId, channelId) + MASTER_PLAYLIST))?.toString('utf8');
}

/**
 * The master playlist of a range of the channel (`master`: the channel's): its variants, with the caption rendition
 * when the channel had captions during the range: a caption segment on the timeline in it, or, while the range may
 * still grow, the channel captioned now (its captions come seconds after their audio). A range without captions lists
 * none: a caption rendition there would stay empty.
 */
export async function rangeMasterOf(
  ctx: PlatformContext,
  tenantId: string,
  channelId: string,
  startMs: number,
  endMs: number | undefined,
  master: string,
): Promise<string> {
  const own = captionRendition(master);
  const running = endMs === undefined || Date.now() < endMs;
  const captioned = (own !== undefined && running) || (await rangeSegments(ctx, tenantId, channelId, startMs, endMs, CAPTION_TRACK, 1)).length > 0;
  return rangeMaster(master, captioned ? (own ?? (await configuredCaptions(ctx, tenantId, channelId))) : undefined);
}

/** The caption rendition of a channel not captioned now (its captions were turned off since the range): its language, if it still has one. */
async function configuredCaptions(ctx: PlatformContext, tenantId: string, channelId: string): Promise<string> {
  const [row] = await ctx.db
    .select({ code: liveChannels.aiLiveCaptioningLanguageCode })
    .from(liveChannels)
    .where(and(eq(liveChannels.tenantId, tenantId), eq(liveChannels.id, channelId)));
  const code = row?.code ?? 'und';
  const name = (row?.code && captionModel(ctx.config.live.captionModelsDir, row.code)?.name) || 'Captions';
  return subtitleMedia({ language: code, name, segments: () => [] });
}

/**
 * A range's WebVTT playlist (rangeSubtitlePlaylist): over its audio segments, each with the caption segment of the
 * same number or a gap. `uriOf` names a caption segment's WebVTT file as the playlist reaches it.
 */
export function rangeCaptionPlaylist(
  audio: Pick<TimelineSegment, 'sequence' | 'startMs' | 'durationMs' | 'run'>[],
  captions: Pick<TimelineSegment, 'sequence'>[],
  uriOf: (sequence: number) => string,
  o: { type: 'EVENT' | 'VOD'; ended: boolean; segmentSeconds: number },
): string {
  return rangeSubtitlePlaylist(audio, { sequences: new Set(captions.map((c) => c.sequence)), uriOf }, o);
}

export { CAPTION_TRACK, channelPrefix, masterTracks, rangeDashTracks };

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
  const protection = drmPrefix ? await channelProtection(ctx, tenantId, channelId, endpoints, await drmKeyModeOf(ctx, tenantId, channelId)) : undefined;
  // HLS under `aes128/` (AES-128) or `cbcs/` (SAMPLE-AES), DASH under `cenc/` or `cbcs/`, as the channel's endpoints have them.
  const encryption =
    m[5] === 'm3u8'
      ? drmPrefix === HLS_DRM_PREFIX
        ? protection?.hls
        : drmPrefix === 'cbcs/'
          ? protection?.sampleAes
          : undefined
      : protection?.dash?.find((d) => `${d.scheme}/` === drmPrefix);
  if (drmPrefix && !encryption) throw new ApiError(404, 'media_not_found', 'No such media file');
  const master = await channelMaster(ctx, tenantId, channelId);
  if (!master) throw new ApiError(404, 'media_not_found', 'No such media file');
  const prefix = channelPrefix(tenantId, channelId);
  const isOver = async (segments: TimelineSegment[]) =>
    rangeEnded(segments, endMs) || (endMs !== undefined && Date.now() >= endMs && !(await channelRunning(ctx, tenantId, channelId)));
  const toRange = (s: TimelineSegment) => ({ uri: `../../${s.key}`, initUri: `../../${s.initKey}`, startMs: s.startMs, durationMs: s.durationMs, run: s.run });
  let body: string;
  let type = 'application/vnd.apple.mpegurl';
  const segmentSeconds = ctx.config.live.segmentSeconds;
  if (m[5] === 'mpd') {
    if (`${name}.mpd` !== DASH_MANIFEST) throw new ApiError(404, 'media_not_found', 'No such media file');
    const segments = await rangeSegments(ctx, tenantId, channelId, startMs, endMs);
    const tracks = await rangeDashTracks(
      await rangeMasterOf(ctx, tenantId, channelId, startMs, endMs, master),
      segments.map((s) => ({ ...toRange(s), track: s.track, sequence: s.sequence, decodeTime: s.decodeTime })),
      (uri) => readObjectIfAny(ctx.store, prefix + uri.replace(/^(\.\.\/)+/, '')),
    );
    // Over when every media track it lists is: captions, which come seconds after their audio, are not waited for.
    const media = tracks.filter((t) => t.kind !== 'text');
    const perTrack = media.length ? media.map((t) => segments.filter((s) => s.track === t.name)) : [[]];
    const over = (await Promise.all(perTrack.map(isOver))).every(Boolean);
    body = rangeMpd(tracks, { type: over ? 'static' : 'dynamic', segmentSeconds, now: Date.now(), clock: { direct: true } });
    if (encryption) body = dashDrmManifest(body, encryption);
    type = 'application/dash+xml';
  } else if (name === 'master') {
    body = await rangeMasterOf(ctx, tenantId, channelId, startMs, endMs, master);
    if (encryption) body = protectedMaster(body, encryption);
  } else if (name === CAPTION_TRACK) {
    // Clear also under a DRM prefix (the channel publishes its captions clear beside each protected endpoint's files).
    const audio = await rangeSegments(ctx, tenantId, channelId, startMs, endMs, AUDIO_TRACK);
    const captions = await rangeSegments(ctx, tenantId, channelId, startMs, endMs, CAPTION_TRACK);
    body = rangeCaptionPlaylist(audio, captions, (n) => `../../${subtitleKey(n)}`, { type: 'EVENT', ended: await isOver(audio), segmentSeconds });
  } else {
    if (!masterTracks(master).includes(name)) throw new ApiError(404, 'media_not_found', 'No such media file');
    const segments = await rangeSegments(ctx, tenantId, channelId, startMs, endMs, name);
    body = rangeMediaPlaylist(segments.map(toRange), { type: 'EVENT', ended: await isOver(segments), segmentSeconds });
    const kind = name === 'audio' ? 'audio' : 'video';
    if (encryption?.scheme === 'cbcs') body = sampleAesPlaylist(body, encryptionOf(encryption, kind));
    else if (encryption) body = hlsDrmRangePlaylist(body, encryptionOf(encryption, kind).keyUrl);
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

/** When the channel's retained timeline begins (its oldest kept segment, ms since the epoch); undefined: it holds none. */
export async function retainedSince(ctx: PlatformContext, tenantId: string, channelId: string): Promise<number | undefined> {
  const t = liveTimelineSegments;
  const [row] = await ctx.db
    .select({ startMs: t.startMs })
    .from(t)
    .where(and(eq(t.channelId, channelId), eq(t.tenantId, tenantId)))
    .orderBy(t.startMs)
    .limit(1);
  return row?.startMs;
}

/** Whether the channel is running (or about to): while it is not, no segment will come, and a range that ended is over. */
export async function channelRunning(ctx: PlatformContext, tenantId: string, channelId: string): Promise<boolean> {
  const [row] = await ctx.db
    .select({ status: liveChannels.status })
    .from(liveChannels)
    .where(and(eq(liveChannels.tenantId, tenantId), eq(liveChannels.id, channelId)));
  return !!row && ['Starting', 'On', 'Stopping'].includes(row.status);
}
