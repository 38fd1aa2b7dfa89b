import type { IncomingHttpHeaders } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { PlatformContext } from '../context.ts';

/**
 * Hooks on media delivery (`/media/vod/...`, `/media/live/...`, `/media/recordings/...`): guards that may refuse a request (playback tokens,
 * allowed domains, concurrent sessions) and observers that see every admitted one (CMCD data). Modules give them in
 * their manifest (`playbackGuards`, `playbackObservers`); the platform collects them at start (`ctx.catalogue`); the delivery routes
 * call `admitMedia` once per request. Delivery stays free of any module's rules.
 */

/**
 * The delivery's clock for players (`GET`, the time as ISO 8601): stored dynamic MPDs name it in their UTCTiming
 * (`urn:mpeg:dash:utc:http-iso:2014`). Public and tenant-free, so a player needs no token for it.
 */
export const MEDIA_CLOCK_PATH = '/media/time';

/** A path segment `token=<jwt>` anywhere below the asset carries a playback token (see docs/decisions/streaming.md). */
export const TOKEN_SEGMENT = 'token=';

export interface MediaRequest {
  /** `image`: the pictures made of an asset's video on request (thumbnails, animated previews). */
  delivery: 'vod' | 'live' | 'recording' | 'image';
  tenantId: string;
  /** The streaming asset the file belongs to: the VOD asset's id, the live channel's id, the recording's id. */
  assetId: string;
  /** The file below the asset's output, without the token segment. */
  path: string;
  /**
   * The file needs a playback token whatever the asset's settings say (a recording's archive that is not
   * `archive.public`); the guard that checks tokens then asks for one.
   */
  requiresToken: boolean;
  /** The playback token, from the path segment or the `token` query parameter. */
  token: string | undefined;
  /** A playlist or manifest (`.m3u8`, `.mpd`) rather than a segment. */
  isManifest: boolean;
  method: string;
  headers: IncomingHttpHeaders;
  ip: string;
  query: Record<string, unknown>;
}

/** Throws an ApiError to refuse the request. */
export type PlaybackGuard = (ctx: PlatformContext, media: MediaRequest) => Promise<void>;
/** Sees each admitted request; must not throw nor block (errors are logged and dropped). */
export type PlaybackObserver = (ctx: PlatformContext, media: MediaRequest) => void;

const isManifestPath = (path: string) => /\.(m3u8|mpd)$/.test(path);

/** Takes the token segment out of a path below an asset: `hls/token=abc/master.m3u8` → `hls/master.m3u8`, `abc`. */
export function splitToken(path: string): { path: string; token: string | undefined } {
  const segments = path.split('/');
  const at = segments.findIndex((s) => s.startsWith(TOKEN_SEGMENT));
  if (at < 0) return { path, token: undefined };
  const token = decodeURIComponent(segments[at].slice(TOKEN_SEGMENT.length));
  segments.splice(at, 1);
  return { path: segments.join('/'), token: token || undefined };
}

/**
 * A media URL that carries a token: the token segment goes before the file name, so every URL a playlist or an MPD
 * names relative to it carries the token too, and keeps working for the token's lifetime.
 */
export function withToken(url: string, token: string): string {
  const u = new URL(url);
  const at = u.pathname.lastIndexOf('/');
  u.pathname = `${u.pathname.slice(0, at)}/${TOKEN_SEGMENT}${encodeURIComponent(token)}${u.pathname.slice(at)}`;
  return u.toString();
}

/**
 * Runs the guards, then the observers, for one media request; answers the path to serve (the token segment taken
 * off). A manifest asked for with `?token=` is redirected to the same URL with the token in the path, so that the
 * player's relative segment URLs carry it: the returned value is then undefined and the reply is sent.
 */
export async function admitMedia(
  ctx: PlatformContext,
  req: FastifyRequest,
  reply: FastifyReply,
  at: { delivery: MediaRequest['delivery']; tenantId: string; assetId: string; path: string; requiresToken?: boolean },
): Promise<string | undefined> {
  // A refusal or a redirect must be readable by a player on another page, like the media itself.
  reply.header('access-control-allow-origin', '*');
  const split = splitToken(at.path);
  const query = (req.query ?? {}) as Record<string, unknown>;
  const queryToken = typeof query.token === 'string' && query.token ? query.token : undefined;
  const media: MediaRequest = {
    delivery: at.delivery,
    tenantId: at.tenantId,
    assetId: at.assetId,
    path: split.path,
    requiresToken: at.requiresToken ?? false,
    token: split.token ?? queryToken,
    isManifest: isManifestPath(split.path),
    method: req.method,
    headers: req.headers,
    ip: req.ip,
    query,
  };
  for (const guard of ctx.catalogue.playbackGuards) await guard(ctx, media);
  if (media.isManifest && queryToken && !split.token) {
    const url = new URL(req.url, 'http://x');
    url.searchParams.delete('token');
    const target = withToken(`http://x${url.pathname}`, queryToken);
    const search = url.searchParams.toString();
    await reply.redirect(new URL(target).pathname + (search ? `?${search}` : ''), 302);
    return undefined;
  }
  for (const observe of ctx.catalogue.playbackObservers) {
    try {
      observe(ctx, media);
    } catch (err) {
      req.log.warn({ err }, 'playback observer failed');
    }
  }
  return media.path;
}
