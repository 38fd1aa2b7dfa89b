import { and, eq, inArray, isNotNull, lt, sql } from 'drizzle-orm';
import type { PlatformContext, WorkerStarter } from '../../../context.ts';
import type { Queryable } from '../../../db/client.ts';
import * as lease from '../../../db/lease.ts';
import { workUnderLease } from '../../../db/leasedWork.ts';
import { defineJob } from '../../../jobs/queue.ts';
import { chunkable } from '../../../media/chunks.ts';
import { transcode, type SourceTrack } from '../../../media/transcode.ts';
import { startPeriodic } from '../../../platform/periodic.ts';
import { recordEvent } from '../../../platform/events.ts';
import { deleteFilesLater, deleteFilesNow } from '../../../platform/storageDeletions.ts';
import { keyModeOf, outputEncryption } from '../../drm/index.ts';
import { presetById } from '../../transcoder/index.ts';
import { outputPrefix, outputWorkPrefix } from '../storageKeys.ts';
import { startChunked } from './chunked/split.ts';
import { restitch } from './chunked/stitch.ts';
import { startChunkWorkers, sweepChunks } from './chunked/workers.ts';
import {
  completeOutput,
  fail,
  heldOutput,
  LEASE,
  MAX_ATTEMPTS,
  outputWhere,
  PermanentError,
  placeOverlays,
  QUEUED,
  QUEUED_LEASE_MS,
  WORKER_ID,
  type TranscodeJob,
} from './outputs.ts';
import { progressWriter } from './progress.ts';
import { outputPublisher } from './publish.ts';
import { loadSourceFiles } from './sourceFiles.ts';
import { vodAssets, vodOutputChunks, vodOutputs } from './tables.ts';

export { QUEUED, type TranscodeJob };

/** Retried on a crash; long enough for a long encode: a dead worker is detected by its expired claim long before. */
export const transcodeJob = defineJob<TranscodeJob>('vod.transcode', { retryLimit: MAX_ATTEMPTS, retryDelaySeconds: 5, expireInSeconds: 6 * 3600 });

export async function enqueueTranscode(ctx: PlatformContext, tx: Queryable, job: TranscodeJob): Promise<string | null> {
  return ctx.jobs.send(transcodeJob, job, { tx });
}

/** Takes the output for this worker unless a live worker holds it or it is finished. */
async function claim(ctx: PlatformContext, j: TranscodeJob) {
  const [row] = await ctx.db
    .update(vodOutputs)
    .set({
      ...lease.take(WORKER_ID, ctx.config.transcodeLeaseSeconds * 1000),
      status: 'Processing',
      attempts: sql`${vodOutputs.attempts} + 1`,
      // What an earlier attempt published is removed below: its endpoints go with it until this attempt publishes again.
      endpoints: [],
    })
    // A queued output is handed to whichever worker asks first; a running one only once its worker died.
    .where(and(outputWhere(j), inArray(vodOutputs.status, ['Pending', 'Processing']), lease.claimable(LEASE, QUEUED)))
    .returning();
  return row;
}

/**
 * `stopping`: the process is shutting down. The encode is stopped and its claim released, so that the queue's retry
 * (here after a restart, or on another worker) takes the output again: a stop is not a failure of the output.
 */
async function runTranscode(ctx: PlatformContext, j: TranscodeJob, stopping: AbortSignal): Promise<void> {
  const output = await claim(ctx, j);
  if (!output) return;
  if (output.attempts > MAX_ATTEMPTS) return fail(ctx, j, `Transcoding failed ${MAX_ATTEMPTS} times; giving up`);
  // Given back, the queue retries it: released, the retry can take it at once.
  const { owned, held } = heldOutput(ctx, j, stopping, lease.release);
  const { workDir } = held;
  await workUnderLease(held, async (signal) => {
    const [asset] = await ctx.db.select().from(vodAssets).where(eq(vodAssets.id, j.assetId));
    const preset = presetById(output.preset);
    if (!asset || !preset) throw new PermanentError(!asset ? 'The asset was deleted' : `Preset ${output.preset} no longer exists`);
    await ctx.db.transaction(async (tx) => {
      if (asset.status === 'Pending') {
        await tx
          .update(vodAssets)
          .set({ status: 'Processing', lastModificationDate: new Date() })
          .where(and(eq(vodAssets.id, asset.id), eq(vodAssets.status, 'Pending')));
        await recordEvent(tx, j.tenantId, 'vod.asset.updated', { id: asset.id, status: 'Processing' });
      }
    });
    const source = asset.sources[0];
    const file = (await loadSourceFiles(ctx.db, j.tenantId, [source.fileId])).get(source.fileId);
    if (!file) throw new PermanentError(`Source file ${source.fileId} was deleted`);

    const prefix = outputPrefix(j.tenantId, j.assetId, j.outputId);
    // A previous attempt may have left part of its output: start from an empty prefix so no file is orphaned.
    await ctx.store.deletePrefix(prefix);
    await ctx.store.deletePrefix(outputWorkPrefix(j.tenantId, j.assetId, j.outputId));
    const sourceMs = file.durationMs ?? asset.durationMilliseconds ?? 0;
    const threshold = ctx.config.chunkThresholdSeconds;
    // A long source goes to every worker in chunks (chunked/); its output is then the stitch's to finish.
    if (threshold > 0 && sourceMs > threshold * 1000 && chunkable(preset)) return await startChunked(ctx, j, source, sourceMs, preset);
    // The asset's id is its DRM content id: every protected output of the asset shares its keys (one, or AudioVideoKeys' two).
    const encryption = preset.protection
      ? await outputEncryption(ctx, j.tenantId, j.assetId, preset.protection.scheme, keyModeOf(asset.drmKeyMode))
      : undefined;
    const transcodeStarted = performance.now();
    const progress = progressWriter(ctx, j.tenantId, j.assetId, j.outputId, owned);
    const mediaMs = sourceMs;
    const ids = { assetId: j.assetId, outputId: j.outputId, tenantId: j.tenantId, preset, keyId: encryption?.keyId, drmKeyMode: keyModeOf(asset.drmKeyMode) };
    const result = await transcode({
      input: await ctx.store.readableLocation(file.fileKey),
      sourceInfo: file.mediaInfo,
      durationMs: mediaMs,
      tracks: source.transcodingTracks.map((t) => ({
        type: t.type as SourceTrack['type'],
        index: Number(t.trackSelector.trackId),
        language: t.language,
        name: t.name,
      })),
      preset,
      overlays: await placeOverlays(ctx, j, output.overlays, workDir),
      outDir: workDir,
      signal,
      onProgress: progress.report,
      encryption,
      // Playable while it encodes: growing playlists and segments go to the store as ffmpeg writes them.
      publish: outputPublisher(ctx, prefix, ids, owned, mediaMs),
    }).catch((e: Error) => {
      throw new PermanentError(e.message);
    });
    const seconds = (performance.now() - transcodeStarted) / 1000;
    ctx.metrics.transcodeSeconds.observe({ preset: preset.id }, seconds);
    if (mediaMs > 0 && seconds > 0) ctx.metrics.transcodeSpeed.observe({ preset: preset.id }, mediaMs / 1000 / seconds);
    await progress.settled();

    await completeOutput(ctx, j, output.preset, asset.preset, asset.durationMilliseconds, workDir, result, ids);
  });
}

/**
 * Outputs whose worker died (claim expired while Pending/Processing) are queued again; outputs past their
 * `expirationDate` are removed with their files.
 */
async function sweep(ctx: PlatformContext): Promise<void> {
  const orphans = await ctx.db
    .update(vodOutputs)
    .set(lease.take(QUEUED, QUEUED_LEASE_MS))
    .where(and(inArray(vodOutputs.status, ['Pending', 'Processing']), lease.expired(LEASE)))
    .returning({ tenantId: vodOutputs.tenantId, assetId: vodOutputs.assetId, outputId: vodOutputs.id });
  for (const o of orphans) {
    // A chunked output whose stitch died is stitched again from its chunks; any other starts over.
    const parts = await ctx.db
      .select({ status: vodOutputChunks.status })
      .from(vodOutputChunks)
      .where(and(eq(vodOutputChunks.assetId, o.assetId), eq(vodOutputChunks.outputId, o.outputId)));
    if (parts.length > 0 && parts.every((p) => p.status === 'Available')) await restitch(ctx, o);
    else await ctx.jobs.send(transcodeJob, o);
  }
  await sweepChunks(ctx);

  const expired = await ctx.db
    .select({ tenantId: vodOutputs.tenantId, assetId: vodOutputs.assetId, id: vodOutputs.id })
    .from(vodOutputs)
    .where(and(isNotNull(vodOutputs.expirationDate), lt(vodOutputs.expirationDate, new Date())))
    .limit(100);
  for (const o of expired) {
    const files = [outputPrefix(o.tenantId, o.assetId, o.id), outputWorkPrefix(o.tenantId, o.assetId, o.id)];
    const removed = await ctx.db.transaction(async (tx) => {
      const rows = await tx
        .delete(vodOutputs)
        .where(and(eq(vodOutputs.assetId, o.assetId), eq(vodOutputs.id, o.id)))
        .returning({ id: vodOutputs.id });
      if (!rows.length) return false;
      await recordEvent(tx, o.tenantId, 'vod.output.deleted', { id: o.id, assetId: o.assetId, reason: 'expired' });
      // Files never outlive their rows (docs/decisions/platform.md), expiry as a user's deletion.
      await deleteFilesLater(tx, files);
      return true;
    });
    if (removed) await deleteFilesNow(ctx, files);
  }
}

/** Transcode workers, and the sweeper that re-queues orphaned outputs and removes expired ones. */
export const startAssetWorkers: WorkerStarter = async (ctx) => {
  const stopping = new AbortController();
  const running = new Set<Promise<void>>();
  await ctx.jobs.work(
    transcodeJob,
    (job) => {
      const run = runTranscode(ctx, job, stopping.signal);
      running.add(run);
      return run.finally(() => running.delete(run));
    },
    { concurrency: ctx.config.transcodeConcurrency },
  );
  const stopChunks = await startChunkWorkers(ctx);
  const sweeper = startPeriodic('vod sweep', ctx.config.sweepIntervalMs, () => sweep(ctx), ctx.log);
  // Before the job queue and the database close: the encodes stop and release their outputs while both are open.
  return async () => {
    stopping.abort();
    await Promise.allSettled([...running, stopChunks()]);
    await sweeper.stop();
  };
};
