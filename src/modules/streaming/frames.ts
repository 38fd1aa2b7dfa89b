import { mkdtemp, readdir, rm } from 'node:fs/promises';
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

/** Extracts the frames with ffmpeg into a temporary folder, stores them, and records them on the asset's row. */
async function extractFrames(ctx: PlatformContext, { tenantId, assetId }: FramesJob): Promise<void> {
  const found = await findPlayable(ctx, tenantId, assetId);
  const input = found && (await found.kind.frameSource?.(ctx, tenantId, assetId));
  const setStatus = (set: Partial<typeof streamingAssets.$inferInsert>) =>
    ctx.db
      .update(streamingAssets)
      .set(set)
      .where(and(eq(streamingAssets.tenantId, tenantId), eq(streamingAssets.assetId, assetId)));
  if (!input) return void (await setStatus({ framesStatus: 'Error', framesError: 'The asset has no video to take frames from' }));
  const dir = await mkdtemp(join(tmpdir(), 'mediaplane-frames-'));
  try {
    // An HLS output (the source file gone) needs the HLS reader's option; any other input refuses it.
    const hlsArgs = /\.m3u8(\?|$)/.test(input) ? ['-allowed_extensions', 'ALL'] : [];
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
      { redact: { [input]: 'the asset video', [dir]: 'the frames folder' } },
    );
    // The poster: a frame a tenth of the way in (past a black first frame), larger. Sought on the output side, by
    // decoding up to it (at most 10 s): an input-side seek finds nothing in a recording's HLS, whose timestamps start
    // where the channel's timeline was.
    const posterAt = Math.min(seconds * 0.1, 10).toFixed(3);
    await runFfmpeg(
      [...hlsArgs, '-i', input, '-ss', posterAt, '-map', '0:v:0', '-frames:v', '1', '-vf', `scale=${POSTER_WIDTH}:-2`, '-q:v', '3', join(dir, 'poster.jpg')],
      { redact: { [input]: 'the asset video', [dir]: 'the frames folder' } },
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
    await setStatus({ framesStatus: 'Available', frames, framesError: null });
  } catch (e) {
    ctx.log.warn({ err: e, assetId }, 'frames not extracted');
    await setStatus({ framesStatus: 'Error', framesError: e instanceof Error ? e.message.slice(0, 500) : 'frames not extracted' });
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
    .select({ framesStatus: streamingAssets.framesStatus, frames: streamingAssets.frames, framesError: streamingAssets.framesError })
    .from(streamingAssets)
    .where(and(eq(streamingAssets.tenantId, tenantId), eq(streamingAssets.assetId, assetId)));
  return row;
}

/**
 * `GET .../images/frames`: the asset's frames, extracted once by a job on first request (again after an error) and
 * kept in the store. While the job runs the request waits for it, up to WAIT_MS; then it answers 202 and `{}` (ask
 * again). Kinds without a finished video (a live channel) answer 409 `frames_unavailable`.
 */
export async function getFrames(ctx: PlatformContext, tenantId: string, assetId: string): Promise<{ status: 200 | 202; frames: Record<string, FrameOut> }> {
  const found = await findPlayable(ctx, tenantId, assetId);
  const playable = found?.playable ?? (await requirePlayable(ctx, tenantId, assetId));
  if (!found?.kind.frameSource) throw new ApiError(409, 'frames_unavailable', `Frames are taken from a finished video; a ${playable.type} has none`);
  const id = playable.id;
  let row = await framesRow(ctx, tenantId, id);
  if (row?.framesStatus !== 'Available' && row?.framesStatus !== 'Pending') {
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
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    row = await framesRow(ctx, tenantId, id);
    if (row?.framesStatus === 'Available') break;
    if (row?.framesStatus === 'Error') throw new ApiError(422, 'frames_failed', `Frames could not be extracted: ${row.framesError ?? 'unknown error'}`);
    if (Date.now() > deadline) return { status: 202, frames: {} };
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  const origin = ctx.config.publicUrl.origin;
  const [details] = await ctx.db
    .select({ date: streamingAssets.lastModificationDate })
    .from(streamingAssets)
    .where(and(eq(streamingAssets.tenantId, tenantId), eq(streamingAssets.assetId, id)));
  return {
    status: 200,
    frames: Object.fromEntries(
      row.frames.map((f) => [
        f.id,
        {
          id: f.id,
          name: f.name,
          fileKey: f.fileKey,
          bucket: ctx.store.bucket,
          s3Uri: ctx.store.uri(f.fileKey),
          url: frameUrl(origin, tenantId, id, f.name),
          second: f.second,
          createDate: details?.date ?? new Date(),
        },
      ]),
    ),
  };
}

/** The poster frame's URL, when frames were extracted (the embed player's poster when the asset has no image). */
export async function posterUrl(ctx: PlatformContext, tenantId: string, assetId: string): Promise<string | null> {
  const row = await framesRow(ctx, tenantId, assetId);
  const poster = row?.framesStatus === 'Available' ? row.frames.find((f) => f.id === 'poster') : undefined;
  return poster ? frameUrl(ctx.config.publicUrl.origin, tenantId, assetId, poster.name) : null;
}
