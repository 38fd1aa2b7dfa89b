import { and, eq } from 'drizzle-orm';
import type { PlatformContext } from '../../context.ts';
import { AUDIO_TRACK, FORENSIC_MASTER, forensicTrack } from '../../media/live/index.ts';
import { codeWord } from '../../media/watermark/code.ts';
import { segmentName } from '../../media/watermark/prepare.ts';
import { ApiError } from '../../platform/errors.ts';
import { isUuid } from '../../platform/ids.ts';
import { readObjectIfAny } from '../../storage/readObject.ts';
import { channelPrefix } from '../live/index.ts';
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
  /** A live channel's asset: the channel's output prefix, where its pipeline publishes `wmA` and `wmB`. */
  channelPrefix?: string;
}
const playable = new Map<string, Playable>();
const PLAYABLE_CACHE_MAX = 1000;
/** Variant segment URLs are used by the player at once; a short life keeps a leaked one from being shared for long. */
const SEGMENT_URL_TTL_S = 300;

/**
 * PGlite only: the database belongs to this one process, so every revoke passes through `forgetSession` here and a
 * session read may be kept a moment (PGlite answers one query at a time: a read per request halved the redirector's
 * throughput). PostgreSQL, which other processes share, is read on every request.
 */
const sessions = new Map<string, { row: SessionFacts | undefined; until: number }>();
const SESSION_CACHE_MS = 1000;
const SESSION_CACHE_MAX = 10_000;
interface SessionFacts {
  assetId: string;
  userNumber: number;
  revoked: boolean;
}

/** A revoke or unrevoke in this process: the next request reads the session again. */
export const forgetSession = (id: string): void => void sessions.delete(id);

async function sessionOf(ctx: PlatformContext, tenantId: string, id: string): Promise<SessionFacts | undefined> {
  const cached = ctx.database.kind === 'pglite' ? sessions.get(id) : undefined;
  if (cached && cached.until > Date.now()) return cached.row;
  const [row] = await ctx.db
    .select({ assetId: watermarkingSessions.assetId, userNumber: watermarkingSessions.userNumber, revoked: watermarkingSessions.revoked })
    .from(watermarkingSessions)
    .where(and(eq(watermarkingSessions.tenantId, tenantId), eq(watermarkingSessions.id, id)));
  if (ctx.database.kind === 'pglite') {
    if (sessions.size >= SESSION_CACHE_MAX) sessions.delete(sessions.keys().next().value!);
    sessions.set(id, { row, until: Date.now() + SESSION_CACHE_MS });
  }
  return row;
}

const gone = () => new ApiError(404, 'watermarking_asset_not_found', 'The asset of this token is no longer available');

/**
 * A token's session, read on every request (a revoked session stops at once), and its asset's playlist facts.
 * Another tenant's token cannot exist: the tenant is inside the signed token and every lookup filters on it.
 */
export async function resolveSession(ctx: PlatformContext, token: string) {
  const claims = await verifyRedirectorToken(ctx, token);
  if (!isUuid(claims.sessionId) || !isUuid(claims.tenantId)) throw new ApiError(401, 'redirector_token_invalid', 'The redirector token is not valid');
  const session = await sessionOf(ctx, claims.tenantId, claims.sessionId);
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
      channelPrefix: row.channelId ? channelPrefix(claims.tenantId, row.channelId) : undefined,
    };
    if (playable.size >= PLAYABLE_CACHE_MAX) playable.delete(playable.keys().next().value!);
    playable.set(session.assetId, asset);
  }
  return { tenantId: claims.tenantId, assetId: session.assetId, userNumber: session.userNumber, asset };
}

/** The multivariant playlist of a prepared asset: one variant, the media playlist next to it. */
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

/** Low-latency lines name variant A's parts directly: the redirector's playlist is of whole segments only. */
const PART_TAGS = /^#EXT-X-(PART|PART-INF|PRELOAD-HINT|SERVER-CONTROL|SKIP|RENDITION-REPORT)\b/;
const FORENSIC_PLAYLIST = /^wmA-([0-9]{3,4}p)\.m3u8$/;

/** The channel's marked rungs, tallest first, as its pipeline lists them (`forensic.m3u8`); undefined before it has. */
async function liveMaster(ctx: PlatformContext, prefix: string): Promise<{ text: string; rungs: string[] } | undefined> {
  const text = (await readObjectIfAny(ctx.store, prefix + FORENSIC_MASTER))?.toString('utf8');
  if (text === undefined) return undefined;
  return { text, rungs: text.split('\n').flatMap((line) => FORENSIC_PLAYLIST.exec(line)?.[1] ?? []) };
}

/** The marked rung a request names, or the tallest when it names none (a URL from before the ladder was marked). */
async function liveRung(ctx: PlatformContext, prefix: string, rendition: string | undefined): Promise<string> {
  const master = await liveMaster(ctx, prefix);
  if (!master) throw new ApiError(404, 'segment_not_found', 'The channel has published no segment yet');
  const rung = rendition ?? master.rungs[0];
  if (!rung || !master.rungs.includes(rung)) throw new ApiError(404, 'segment_not_found', `The channel marks no rendition ${rendition}`);
  return rung;
}

/** `rendition=audio`: the channel's audio track, unmarked, through the redirector so that a revoke stops it too. */
export const AUDIO_RENDITION = 'audio';
const AUDIO_URI = `URI="${AUDIO_TRACK}.m3u8"`;

/**
 * A live channel's multivariant playlist: every marked rung of its ladder (the pipeline's `forensic.m3u8`, with
 * bandwidths, resolutions and codecs), each pointing at this viewer's media playlist of that rung, so that the player
 * adapts, and the channel's audio rendition (when it has audio) at `media.m3u8?rendition=audio`. Before the channel
 * has published it, the asset's one rendition, as a channel marked before the ladder was.
 */
export async function liveMasterPlaylist(ctx: PlatformContext, a: Playable): Promise<string> {
  const master = await liveMaster(ctx, a.channelPrefix!);
  if (!master) return masterPlaylist(a);
  return master.text
    .split('\n')
    .map((line) => {
      if (line.startsWith('#EXT-X-MEDIA:TYPE=AUDIO,')) return line.replace(AUDIO_URI, `URI="media.m3u8?rendition=${AUDIO_RENDITION}"`);
      const rung = FORENSIC_PLAYLIST.exec(line)?.[1];
      return rung ? `media.m3u8?rendition=${rung}` : line;
    })
    .join('\n');
}

/**
 * The channel's media playlist of `track` (its window, media sequence numbers, discontinuities, program date-times) as
 * one viewer's: low-latency tags dropped, the init segment a short-lived signed URL (the playlist is fetched again
 * every target duration, so it is always fresh), every segment through the redirector as
 * `segments/<n>.m4s?rendition=<rendition>`. Segments after `last` are cut with their tags.
 */
async function viewerPlaylist(ctx: PlatformContext, prefix: string, text: string, track: string, rendition: string, last = Infinity): Promise<string> {
  const segment = new RegExp(`^${track}/([0-9]+)\\.m4s$`);
  const out: string[] = [];
  /** Where the tags of the segment being read begin. */
  let segmentStart = 0;
  for (const line of text.split('\n')) {
    if (PART_TAGS.test(line)) continue;
    const map = /^#EXT-X-MAP:URI="([^"]+)"/.exec(line);
    const n = segment.exec(line)?.[1];
    if (map) out.push(`#EXT-X-MAP:URI="${await ctx.store.presignGet(prefix + map[1], SEGMENT_URL_TTL_S)}"`);
    else if (n !== undefined) {
      if (Number(n) > last) {
        out.length = segmentStart;
        break;
      }
      out.push(`segments/${n}.m4s?rendition=${rendition}`);
      segmentStart = out.length;
    } else out.push(line);
  }
  return out.join('\n');
}

/**
 * A live channel's audio playlist for one viewer: unmarked, so the same for every viewer, but through the redirector
 * so that a revoked session's token stops getting it at once.
 */
async function liveAudioPlaylist(ctx: PlatformContext, prefix: string): Promise<string> {
  const text = (await readObjectIfAny(ctx.store, `${prefix}${AUDIO_TRACK}.m3u8`))?.toString('utf8');
  if (text === undefined) throw new ApiError(404, 'segment_not_found', 'The channel has no audio, or has published no segment yet');
  return viewerPlaylist(ctx, prefix, text, AUDIO_TRACK, AUDIO_RENDITION);
}

/**
 * A live channel's media playlist of one marked rung for one viewer: the channel's own playlist of that rung's variant
 * A (its window, its media sequence numbers, discontinuities, program date-times), every segment through the
 * redirector, which picks A or B per media sequence number as for VOD, whatever the rung: a viewer who switches rungs
 * still spells one code word. The init segment is variant A's (both variants come from one encoder with the same
 * settings, so their init segments are the same), as a short-lived signed URL; the playlist is fetched again every
 * target duration, so the URL is always fresh.
 */
export async function liveMediaPlaylist(ctx: PlatformContext, prefix: string, rendition: string | undefined): Promise<string> {
  if (rendition === AUDIO_RENDITION) return liveAudioPlaylist(ctx, prefix);
  const rung = await liveRung(ctx, prefix, rendition);
  const [trackA, trackB] = [forensicTrack(0, rung), forensicTrack(1, rung)];
  const [a, b] = (await Promise.all([trackA, trackB].map((track) => readObjectIfAny(ctx.store, `${prefix}${track}.m3u8`)))).map((body) =>
    body?.toString('utf8'),
  );
  if (a === undefined || b === undefined) throw new ApiError(404, 'segment_not_found', 'The channel has published no segment yet');
  // The variants are published one after the other: a segment is listed once B has it too.
  const lastOfB = Math.max(-1, ...[...b.matchAll(new RegExp(`^${trackB}/([0-9]+)\\.m4s$`, 'gm'))].map((m) => Number(m[1])));
  return viewerPlaylist(ctx, prefix, a, trackA, rung, lastOfB);
}

/**
 * Where segment `<index>.ts` (VOD) or `<media sequence number>.m4s` of a marked rung (live) of this viewer lives:
 * variant A or B as the code word of the user number says. A channel's audio segment is the channel's own.
 */
export async function segmentLocation(ctx: PlatformContext, token: string, segment: string, rendition?: string): Promise<string> {
  const s = await resolveSession(ctx, token);
  const index = Number.parseInt(segment, 10);
  // VOD segments are MPEG-TS, a channel's CMAF: the other kind is no segment of this asset.
  if (segment.endsWith('.m4s') !== !!s.asset.channelPrefix) throw new ApiError(404, 'segment_not_found', `The asset has no segment ${segment}`);
  if (s.asset.channelPrefix) {
    // Live: the media sequence number spells the code, as the segment index does for VOD, the same on every rung.
    // A rung the channel does not mark is a missing object at the signed URL (the route checks the name's shape).
    if (rendition === AUDIO_RENDITION) return ctx.store.presignGet(`${s.asset.channelPrefix}${AUDIO_TRACK}/${index}.m4s`, SEGMENT_URL_TTL_S);
    const rung = rendition ?? (await liveRung(ctx, s.asset.channelPrefix, undefined));
    const word = codeWord(s.userNumber, s.asset.userNumberBits);
    return ctx.store.presignGet(`${s.asset.channelPrefix}${forensicTrack(word[index % word.length] ? 1 : 0, rung)}/${index}.m4s`, SEGMENT_URL_TTL_S);
  }
  if (!Number.isInteger(index) || index < 0 || index >= s.asset.segmentDurations.length) {
    throw new ApiError(404, 'segment_not_found', `The asset has ${s.asset.segmentDurations.length} segments; there is no segment ${index}`);
  }
  const word = codeWord(s.userNumber, s.asset.userNumberBits);
  const variant = word[index % word.length] ? 'B' : 'A';
  return ctx.store.presignGet(`${preparedPrefix(s.tenantId, s.assetId)}${variant}/${segmentName(index)}`, SEGMENT_URL_TTL_S);
}
