import { mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { PlatformContext } from '../../context.ts';
import { MediaError } from '../../media/ffmpeg.ts';
import { FIT_MODES, locatePicture, renderAnimated, renderStill, type FitMode, type PictureSize } from '../../media/thumbnail.ts';
import { ApiError, validationError } from '../../platform/errors.ts';
import { registerMediaDelivery, type MediaFound } from '../../platform/mediaDelivery.ts';
import { findPlayable, type FrameSource, type Playable } from '../../platform/playables.ts';

/**
 * Thumbnails and animated previews made on request (docs/decisions/streaming.md, "Thumbnails on the fly"):
 * `/media/thumbnails/{tenant}/{asset}/thumbnail.{jpg,webp}?time=&width=&height=&fit_mode=` and
 * `.../animated.{gif,webp}?start=&end=&width=&height=&fps=`, for VOD assets, recordings and live channels, through the
 * platform's media delivery: the same tokens, allowed domains and CORS as the media. Each picture is kept in memory
 * once made, so that a player's repeated asks answer at once.
 */

const FILES = /^(thumbnail)\.(jpg|webp)$|^(animated)\.(gif|webp)$/;
const MAX_SIDE = 3840;
const MAX_ANIMATED_SIDE = 640;
const MAX_ANIMATED_SECONDS = 10;
const MAX_FPS = 30;

interface Found {
  tenantId: string;
  assetId: string;
  playable: Playable;
  source: () => Promise<FrameSource | undefined>;
}

type Ask =
  | { kind: 'still'; format: 'jpg' | 'webp'; time: number | 'latest'; size: PictureSize }
  | { kind: 'animated'; format: 'gif' | 'webp'; start: number; end: number; fps: number; size: PictureSize };

function numberParam(query: Record<string, unknown>, name: string, { min = 0, max = Number.POSITIVE_INFINITY, integer = false } = {}): number | undefined {
  const raw = query[name];
  if (raw === undefined || raw === '') return undefined;
  const value = typeof raw === 'string' ? Number(raw) : Number.NaN;
  if (!Number.isFinite(value) || value < min || value > max || (integer && !Number.isInteger(value))) {
    throw validationError(name, `must be ${integer ? 'a whole number' : 'a number'} from ${min} to ${max}`);
  }
  return value;
}

/** What a request asks for, checked: a refusal names the parameter (400 `validation_failed`). */
export function askOf(file: string, query: Record<string, unknown>, playable: Pick<Playable, 'type' | 'durationMilliseconds'>): Ask {
  const m = FILES.exec(file)!;
  const animated = m[3] === 'animated';
  const maxSide = animated ? MAX_ANIMATED_SIDE : MAX_SIDE;
  const fitRaw = query.fit_mode ?? 'preserve';
  if (typeof fitRaw !== 'string' || !(FIT_MODES as readonly string[]).includes(fitRaw))
    throw validationError('fit_mode', `must be one of ${FIT_MODES.join(', ')}`);
  const fit = fitRaw as FitMode;
  const size: PictureSize = {
    width: numberParam(query, 'width', { min: 16, max: maxSide, integer: true }) ?? (animated ? 320 : undefined),
    height: numberParam(query, 'height', { min: 16, max: maxSide, integer: true }),
    fit,
  };
  if (fit !== 'preserve' && (size.width === undefined || size.height === undefined)) throw validationError('fit_mode', `${fit} needs both width and height`);
  const live = playable.type === 'LiveChannel';
  const durationS = playable.durationMilliseconds ? playable.durationMilliseconds / 1000 : undefined;
  const within = (name: string, value: number) => {
    if (durationS !== undefined && value > durationS) throw validationError(name, `is past the end of the video (${durationS.toFixed(3)} s)`);
    return value;
  };
  if (!animated) {
    const time = numberParam(query, 'time');
    if (live && time !== undefined) throw validationError('time', "a live channel's thumbnail is its latest picture: leave time out");
    return { kind: 'still', format: m[2] as 'jpg' | 'webp', time: live ? 'latest' : within('time', time ?? (durationS ?? 0) / 2), size };
  }
  if (live) throw validationError('file', 'animated previews are of VOD assets and recordings');
  const start = within('start', numberParam(query, 'start') ?? 0);
  const end = numberParam(query, 'end') ?? Math.min(start + 5, durationS ?? start + 5);
  if (end <= start) throw validationError('end', 'must be after start');
  if (end - start > MAX_ANIMATED_SECONDS) throw validationError('end', `an animated preview lasts at most ${MAX_ANIMATED_SECONDS} s`);
  return { kind: 'animated', format: m[4] as 'gif' | 'webp', start, end, fps: numberParam(query, 'fps', { min: 1, max: MAX_FPS, integer: true }) ?? 12, size };
}

/** Pictures made, by what was asked: bounded by bytes, the oldest used dropped first. */
class PictureCache {
  private readonly entries = new Map<string, { body: Buffer; until: number }>();
  private bytes = 0;
  constructor(private readonly maxBytes: number) {}

  get(key: string): Buffer | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    this.entries.delete(key);
    if (e.until < Date.now()) return void (this.bytes -= e.body.length);
    this.entries.set(key, e);
    return e.body;
  }

  set(key: string, body: Buffer, ttlMs: number): void {
    if (body.length > this.maxBytes / 8) return;
    const old = this.entries.get(key);
    if (old) this.bytes -= old.body.length;
    this.entries.delete(key);
    this.entries.set(key, { body, until: Date.now() + ttlMs });
    this.bytes += body.length;
    for (const [k, e] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.entries.delete(k);
      this.bytes -= e.body.length;
    }
  }
}

/**
 * At most one picture per core is made at once, and a few more wait for their turn: every other ask is refused (429)
 * rather than queued without end, since each is an ffmpeg run anyone may ask for with a time not asked before.
 */
class RenderSlots {
  private running = 0;
  private readonly waiting: (() => void)[] = [];
  constructor(
    private readonly max: number,
    private readonly maxWaiting: number,
  ) {}

  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.running >= this.max) {
      if (this.waiting.length >= this.maxWaiting) throw new ApiError(429, 'rate_limited', 'Too many pictures are being made at once; ask again in a moment');
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else this.running++;
    try {
      return await work();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }
}

/**
 * What an asset id names is kept this long: a page of thumbnails or a seek bar asks for many pictures of one asset,
 * each of which would look it up again (its kind, its status, its length); a deleted asset's pictures end with it.
 */
const ASSET_CACHE_MS = 5_000;

/** A live channel's picture is its latest: kept as long as a segment lasts at most. */
const LIVE_TTL_MS = 2_000;
const FINAL_TTL_MS = 3600_000;

async function render(found: Found, ask: Ask): Promise<Buffer> {
  const source = await found.source();
  if (!source) throw new ApiError(409, 'frames_unavailable', 'The asset has no video to make a picture of yet');
  const work = await mkdtemp(join(tmpdir(), 'mediaplane-thumb-'));
  const redact = { [work]: 'the picture folder', ...(source.location ? { [source.location]: 'the asset video' } : {}) };
  try {
    if (ask.kind === 'still') {
      const located = await locatePicture(source, ask.time, undefined, work);
      return await renderStill(located, ask.size, ask.format, join(work, `out.${ask.format}`), redact);
    }
    const located = await locatePicture(source, ask.start, ask.end, work);
    return await renderAnimated(located, ask.end - ask.start, ask.fps, ask.size, ask.format, join(work, `out.${ask.format}`), redact);
  } catch (e) {
    if (e instanceof ApiError) throw e;
    throw new ApiError(422, 'frames_failed', `The picture could not be made: ${e instanceof MediaError ? e.message : 'the video could not be read'}`);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

export function registerThumbnailDelivery(app: FastifyInstance, ctx: PlatformContext): void {
  const cache = new PictureCache(64 * 1024 * 1024);
  const making = new Map<string, Promise<Buffer>>();
  const slots = new RenderSlots(availableParallelism(), 16);
  const assets = new Map<string, { found: MediaFound<Found> | undefined; until: number }>();
  registerMediaDelivery<Found>(app, ctx, {
    delivery: 'image',
    urlName: 'thumbnails',
    async find(tenantId, assetId, path) {
      if (!FILES.test(path.split('/').at(-1)!)) return undefined;
      const key = `${tenantId}/${assetId}`;
      const hit = assets.get(key);
      if (hit && hit.until > Date.now()) return hit.found;
      const found = await findPlayable(ctx, tenantId, assetId);
      const entity = found?.kind.frameSource && {
        entity: { tenantId, assetId, playable: found.playable, source: () => found.kind.frameSource!(ctx, tenantId, assetId) },
      };
      if (assets.size > 10_000) assets.clear();
      assets.set(key, { found: entity, until: Date.now() + ASSET_CACHE_MS });
      return entity;
    },
    async locate(found, path, req, reply) {
      if (path.includes('/')) return undefined;
      const ask = askOf(path, (req.query ?? {}) as Record<string, unknown>, found.playable);
      const live = ask.kind === 'still' && ask.time === 'latest';
      const key = `${found.tenantId}/${found.assetId}/${path}?${JSON.stringify(ask)}`;
      const cacheControl = live ? 'public, max-age=2' : 'public, max-age=3600';
      const cached = cache.get(key);
      if (cached) return { body: cached, cacheControl };
      // Asked again while it is being made: the one ffmpeg run answers both.
      let made = making.get(key);
      if (!made) {
        made = slots.run(() => render(found, ask)).finally(() => making.delete(key));
        making.set(key, made);
      }
      const body = await made.catch((e: unknown) => {
        if (e instanceof ApiError && e.httpStatus === 429) reply.header('retry-after', '1');
        throw e;
      });
      cache.set(key, body, live ? LIVE_TTL_MS : FINAL_TTL_MS);
      return { body, cacheControl };
    },
  });
}
