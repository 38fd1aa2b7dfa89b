import { and, eq } from 'drizzle-orm';
import type { PlatformContext } from '../../context.ts';
import { codeWord } from '../../media/watermark/code.ts';
import { segmentName } from '../../media/watermark/prepare.ts';
import { ApiError } from '../../platform/errors.ts';
import { isUuid } from '../../platform/ids.ts';
import { preparedPrefix } from './storageKeys.ts';
import { watermarkingAssets, watermarkingSessions } from './tables.ts';
import { verifyRedirectorToken } from './token.ts';

/** What a prepared asset's playlists need; an Available asset never changes, so each process keeps it. */
interface Playable {
  segmentDurations: number[];
  width: number;
  height: number;
  videoBitrateKbps: number;
  userNumberBits: number;
}
const playable = new Map<string, Playable>();
const PLAYABLE_CACHE_MAX = 1000;
/** Variant segment URLs are used by the player at once; a short life keeps a leaked one from being shared for long. */
const SEGMENT_URL_TTL_S = 300;

const gone = () => new ApiError(404, 'watermarking_asset_not_found', 'The asset of this token is no longer available');

/**
 * A token's session, read on every request (a revoked session stops at once), and its asset's playlist facts.
 * Another tenant's token cannot exist: the tenant is inside the signed token and every lookup filters on it.
 */
export async function resolveSession(ctx: PlatformContext, token: string) {
  const claims = await verifyRedirectorToken(ctx, token);
  if (!isUuid(claims.sessionId) || !isUuid(claims.tenantId)) throw new ApiError(401, 'redirector_token_invalid', 'The redirector token is not valid');
  const [session] = await ctx.db
    .select({ assetId: watermarkingSessions.assetId, userNumber: watermarkingSessions.userNumber, revoked: watermarkingSessions.revoked })
    .from(watermarkingSessions)
    .where(and(eq(watermarkingSessions.tenantId, claims.tenantId), eq(watermarkingSessions.id, claims.sessionId)));
  if (!session) throw new ApiError(401, 'redirector_token_invalid', 'The redirector token names a session that no longer exists');
  if (session.revoked) throw new ApiError(403, 'watermarking_session_revoked', 'This playback session has been revoked');
  let asset = playable.get(session.assetId);
  if (!asset) {
    const [row] = await ctx.db
      .select()
      .from(watermarkingAssets)
      .where(and(eq(watermarkingAssets.tenantId, claims.tenantId), eq(watermarkingAssets.id, session.assetId)));
    if (row?.status !== 'Available') throw gone();
    asset = {
      segmentDurations: row.segmentDurations,
      width: row.width ?? 0,
      height: row.height ?? 0,
      videoBitrateKbps: row.videoBitrateKbps ?? 0,
      userNumberBits: row.userNumberBits,
    };
    if (playable.size >= PLAYABLE_CACHE_MAX) playable.delete(playable.keys().next().value!);
    playable.set(session.assetId, asset);
  }
  return { tenantId: claims.tenantId, assetId: session.assetId, userNumber: session.userNumber, asset };
}

/** The multivariant playlist: one variant, the media playlist next to it. */
export function masterPlaylist(a: Playable): string {
  const bandwidth = Math.round((a.videoBitrateKbps * 1.5 + 96) * 1000);
  return ['#EXTM3U', '#EXT-X-VERSION:3', `#EXT-X-STREAM-INF:BANDWIDTH=${bandwidth},RESOLUTION=${a.width}x${a.height}`, 'media.m3u8', ''].join('\n');
}

/** The media playlist: every segment through the redirector, which picks A or B per segment and viewer. */
export function mediaPlaylist(a: Playable): string {
  const target = Math.ceil(Math.max(...a.segmentDurations, 1));
  return [
    '#EXTM3U',
    '#EXT-X-VERSION:3',
    `#EXT-X-TARGETDURATION:${target}`,
    '#EXT-X-MEDIA-SEQUENCE:0',
    '#EXT-X-PLAYLIST-TYPE:VOD',
    ...a.segmentDurations.flatMap((d, i) => [`#EXTINF:${d.toFixed(6)},`, `segments/${i}.ts`]),
    '#EXT-X-ENDLIST',
    '',
  ].join('\n');
}

/** Where segment `index` of this viewer lives: variant A or B as the code word of the user number says. */
export async function segmentLocation(ctx: PlatformContext, token: string, index: number): Promise<string> {
  const s = await resolveSession(ctx, token);
  if (!Number.isInteger(index) || index < 0 || index >= s.asset.segmentDurations.length) {
    throw new ApiError(404, 'segment_not_found', `The asset has ${s.asset.segmentDurations.length} segments; there is no segment ${index}`);
  }
  const word = codeWord(s.userNumber, s.asset.userNumberBits);
  const variant = word[index % word.length] ? 'B' : 'A';
  return ctx.store.presignGet(`${preparedPrefix(s.tenantId, s.assetId)}${variant}/${segmentName(index)}`, SEGMENT_URL_TTL_S);
}
