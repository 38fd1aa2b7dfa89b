import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { and, eq, sql } from 'drizzle-orm';
import type { PlatformContext, WorkerStarter } from '../../context.ts';
import { runFfmpeg } from '../../media/ffmpeg.ts';
import { inspect } from '../../media/inspect.ts';
import { defineJob } from '../../jobs/queue.ts';
import { ApiError } from '../../platform/errors.ts';
import { findPlayable } from '../../platform/playables.ts';
import { requirePlayable } from './catalogue.ts';
import { framesPrefix, frameUrl } from './storageKeys.ts';
import { streamingAssets, type FrameRow } from './tables.ts';

/** One still every this many seconds of video (the first at 0 s), plus a poster. */
export const FRAME_INTERVAL_SECONDS = 10;
const FRAME_WIDTH = 320;
const POSTER_WIDTH = 640;
/** How long `GET .../images/frames` waits for a running extraction before answering 202. */
const WAIT_MS = 20_000;

export interface FramesJob {
  tenantId: string;
  assetId: string;
}
export const framesJob = defineJob<FramesJob>('streaming-frames', { retryLimit: 2, retryDelaySeconds: 5, expireInSeconds: 900 });

/** Frames of a live stream are taken again when asked for once they are this old. */
export const LIVE_FRAMES_MAX_AGE_MS = 30_000;

/** Extracts the frames with ffmpeg into a temporary folder, stores them, and records them on the asset's row. */
async function extractFrames(ctx: PlatformContext, { tenantId, assetId }: FramesJob): Promise<void> {
  const found = await findPlayable(ctx, tenantId, assetId);
  const source = found && (await found.kind.frameSource?.(ctx, tenantId, assetId));
  const where = and(eq(streamingAssets.tenantId, tenantId), eq(streamingAssets.assetId, assetId));
  const setStatus = (set: Partial<typeof streamingAssets.$inferInsert>) => ctx.db.update(streamingAssets).set(set).where(where);
  const [before] = await ctx.db.select({ frames: streamingAssets.frames, framesTakenAt: streamingAssets.framesTakenAt }).from(streamingAssets).where(where);
  // A live stream's frames being taken again: when that fails, the ones it had still stand.
  const failed = (message: string) =>
    setStatus(before?.framesTakenAt && before.frames.length ? { framesStatus: 'Available' } : { framesStatus: 'Error', framesError: message.slice(0, 500) });
  if (!source) return void (await failed('The asset has no video to take frames from'));
  const dir = await mkdtemp(join(tmpdir(), 'mediaplane-frames-'));
  try {
    const input = source.location ?? join(dir, 'source.m3u8');
    if (source.playlist !== undefined) await writeFile(input, source.playlist);
    // An HLS input needs the HLS reader's options (segments of any extension; a local playlist may name presigned
    // URLs of an object store); any other input refuses them.
    const hlsArgs = /\.m3u8(\?|$)/.test(input)
      ? ['-allowed_extensions', 'ALL', ...(source.playlist !== undefined ? ['-protocol_whitelist', 'file,crypto,data,http,https,tcp,tls'] : [])]
      : [];
    const redact = { [input]: 'the asset video', [dir]: 'the frames folder' };
    const info = await inspect(input, { inputArgs: hlsArgs });
    const seconds = info.durationMs / 1000;
    // One decode pass: the first frame, then the first frame at least FRAME_INTERVAL_SECONDS after the last one kept.
    await runFfmpeg(
      [
        ...hlsArgs,
        '-i',
        input,
        '-map',
        '0:v:0',
        '-vf',
        `select='isnan(prev_selected_t)+gte(t-prev_selected_t\\,${FRAME_INTERVAL_SECONDS})',scale=${FRAME_WIDTH}:-2`,
        '-vsync',
        'vfr',
        '-q:v',
        '4',
        join(dir, 'frame_%05d.jpg'),
      ],
      { redact, background: true },
    );
    // The poster: a frame a tenth of the way in (past a black first frame), larger. Sought on the output side, by
    // decoding up to it (at most 10 s): an input-side seek finds nothing in a recording's HLS, whose timestamps start
    // where the channel's timeline was.
    const posterAt = Math.min(seconds * 0.1, 10).toFixed(3);
    await runFfmpeg(
      [...hlsArgs, '-i', input, '-ss', posterAt, '-map', '0:v:0', '-frames:v', '1', '-vf', `scale=${POSTER_WIDTH}:-2`, '-q:v', '3', join(dir, 'poster.jpg')],
      { redact, background: true },
    );
    const files = (await readdir(dir)).filter((f) => f.endsWith('.jpg')).sort();
    if (!files.includes('poster.jpg') || files.length < 2) throw new Error('ffmpeg took no frame from the video');
    const prefix = framesPrefix(tenantId, assetId);
    const frames: FrameRow[] = [];
    for (const file of files) {
      await ctx.store.putFile(prefix + file, join(dir, file), 'image/jpeg');
      const n = /^frame_(\d+)\.jpg$/.exec(file);
      frames.push({ id: file.replace(/\.jpg$/, ''), name: file, fileKey: prefix + file, second: n ? (Number(n[1]) - 1) * FRAME_INTERVAL_SECONDS : null });
    }
    await setStatus({
      framesStatus: 'Available',
      frames,
      framesError: null,
      framesTakenAt: new Date(),
      framesFinal: source.final,
      framesAssetStatus: found.playable.status,
    });
    // A live window taken again may hold fewer frames than before: the ones past it go.
    const kept = new Set(frames.map((f) => f.fileKey));
    await Promise.all((before?.frames ?? []).filter((f) => !kept.has(f.fileKey)).map((f) => ctx.store.delete(f.fileKey)));
  } catch (e) {
    ctx.log.warn({ err: e, assetId }, 'frames not extracted');
    await failed(e instanceof Error ? e.message : 'frames not extracted');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export const startFrameWorkers: WorkerStarter = async (ctx) => {
  await ctx.jobs.work(framesJob, (data) => extractFrames(ctx, data));
};

export interface FrameOut {
  id: string;
  name: string;
  fileKey: string;
  bucket: string;
  s3Uri: string;
  url: string;
  second: number | null;
  createDate: Date;
}

async function framesRow(ctx: PlatformContext, tenantId: string, assetId: string) {
  const [row] = await ctx.db
    .select({
      framesStatus: streamingAssets.framesStatus,
      frames: streamingAssets.frames,
      framesError: streamingAssets.framesError,
      framesTakenAt: streamingAssets.framesTakenAt,
      framesFinal: streamingAssets.framesFinal,
      framesAssetStatus: streamingAssets.framesAssetStatus,
      lastModificationDate: streamingAssets.lastModificationDate,
    })
    .from(streamingAssets)
    .where(and(eq(streamingAssets.tenantId, tenantId), eq(streamingAssets.assetId, assetId)));
  return row;
}
type FramesRow = NonNullable<Awaited<ReturnType<typeof framesRow>>>;

/**
 * Frames a request may answer with at once: taken of a finished video, or of a live stream recently enough and in the
 * state it is in now (an event that finished since gets frames of all of it).
 */
const fresh = (row: FramesRow | undefined, status: string): boolean =>
  row?.framesStatus === 'Available' &&
  (row.framesFinal || ((row.framesTakenAt?.getTime() ?? 0) > Date.now() - LIVE_FRAMES_MAX_AGE_MS && row.framesAssetStatus === status));

/** A frame's address; a live stream's frames are taken again under the same names, so theirs name the take. */
function frameAddress(ctx: PlatformContext, tenantId: string, assetId: string, row: FramesRow, name: string): string {
  const url = frameUrl(ctx.config.publicUrl.origin, tenantId, assetId, name);
  return row.framesFinal || !row.framesTakenAt ? url : `${url}?v=${row.framesTakenAt.getTime()}`;
}

/**
 * `GET .../images/frames`: the asset's frames, extracted by a job on first request (again after an error, and, for a
 * live stream, once they are older than LIVE_FRAMES_MAX_AGE_MS) and kept in the store. While a first extraction runs
 * the request waits for it, up to WAIT_MS; then it answers 202 and `{}` (ask again). While a live stream's frames are
 * taken again, the previous ones answer. An asset without video to take them from (yet) answers 409
 * `frames_unavailable`.
 */
export async function getFrames(ctx: PlatformContext, tenantId: string, assetId: string): Promise<{ status: 200 | 202; frames: Record<string, FrameOut> }> {
  const found = await findPlayable(ctx, tenantId, assetId);
  const playable = found?.playable ?? (await requirePlayable(ctx, tenantId, assetId));
  const id = playable.id;
  let row = await framesRow(ctx, tenantId, id);
  if (!fresh(row, playable.status) && row?.framesStatus !== 'Pending') {
    const source = await found?.kind.frameSource?.(ctx, tenantId, id);
    if (!source && row?.framesStatus === 'Available') return { status: 200, frames: present(ctx, tenantId, id, row) };
    if (!source) {
      const why = playable.type === 'LiveEvent' && playable.status === 'Scheduled' ? 'it has not started' : 'it has no video to take them from';
      throw new ApiError(409, 'frames_unavailable', `No frames of this ${playable.type} (${playable.status}): ${why}`);
    }
    await startExtraction(ctx, tenantId, id);
  }
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    row = await framesRow(ctx, tenantId, id);
    if (row?.framesStatus === 'Available') break;
    // Taken again: the frames of the previous take answer meanwhile.
    if (row?.framesStatus === 'Pending' && row.framesTakenAt && row.frames.length) break;
    if (row?.framesStatus === 'Error') throw new ApiError(422, 'frames_failed', `Frames could not be extracted: ${row.framesError ?? 'unknown error'}`);
    if (Date.now() > deadline) return { status: 202, frames: {} };
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return { status: 200, frames: present(ctx, tenantId, id, row) };
}

/** Queues the extraction job unless one is under way (the row's `Pending` claims it). */
async function startExtraction(ctx: PlatformContext, tenantId: string, id: string): Promise<void> {
  await ctx.db.transaction(async (tx) => {
    await tx.insert(streamingAssets).values({ tenantId, assetId: id }).onConflictDoNothing();
    const claimed = await tx
      .update(streamingAssets)
      .set({ framesStatus: 'Pending', framesError: null })
      .where(and(eq(streamingAssets.tenantId, tenantId), eq(streamingAssets.assetId, id), sql`${streamingAssets.framesStatus} is distinct from 'Pending'`))
      .returning({ id: streamingAssets.assetId });
    if (claimed.length) await ctx.jobs.send(framesJob, { tenantId, assetId: id }, { tx });
  });
}

function present(ctx: PlatformContext, tenantId: string, assetId: string, row: FramesRow): Record<string, FrameOut> {
  return Object.fromEntries(
    row.frames.map((f) => [
      f.id,
      {
        id: f.id,
        name: f.name,
        fileKey: f.fileKey,
        bucket: ctx.store.bucket,
        s3Uri: ctx.store.uri(f.fileKey),
        url: frameAddress(ctx, tenantId, assetId, row, f.name),
        second: f.second,
        createDate: row.framesTakenAt ?? row.lastModificationDate,
      },
    ]),
  );
}

/**
 * The poster frame's URL, when frames were extracted (the embed player's poster when the asset has no image). An asset
 * whose frames were never asked for gets them now, in the background: the next page shows the poster.
 */
export async function posterUrl(ctx: PlatformContext, tenantId: string, assetId: string): Promise<string | null> {
  const row = await framesRow(ctx, tenantId, assetId);
  if (!row?.framesStatus) {
    const found = await findPlayable(ctx, tenantId, assetId);
    if (found && (await found.kind.frameSource?.(ctx, tenantId, assetId))) await startExtraction(ctx, tenantId, found.playable.id);
    return null;
  }
  const poster = row.framesTakenAt || row.framesStatus === 'Available' ? row.frames.find((f) => f.id === 'poster') : undefined;
  return poster ? frameAddress(ctx, tenantId, assetId, row, poster.name) : null;
}
