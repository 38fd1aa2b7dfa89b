import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { and, asc, eq, type SQL } from 'drizzle-orm';
import type { PlatformContext } from '../../../../context.ts';
import * as lease from '../../../../db/lease.ts';
import { workUnderLease } from '../../../../db/leasedWork.ts';
import { stitch, type SourceChunk } from '../../../../media/chunks.ts';
import type { TranscodeRequest, TranscodeResult } from '../../../../media/transcode.ts';
import { keyModeOf, outputEncryption } from '../../../drm/index.ts';
import { outputPrefix, outputWorkPrefix } from '../../storageKeys.ts';
import { completeOutput, heldOutput, LEASE, outputWhere, PermanentError, WORKER_ID, type TranscodeJob } from '../outputs.ts';
import { outputPublisher } from '../publish.ts';
import { vodAssets, vodOutputChunks, vodOutputs } from '../tables.ts';
import { download, finishChunkedOutput } from './finish.ts';
import { CHUNKED, CHUNKED_LEASE_MS, chunksWriteSegments, loadSource, partDir, partsOf, stitchJob, tracksOf } from './parts.ts';

/**
 * Puts the parts together into the output (media/chunks.ts `stitch`; chunks that wrote HLS need only their playlists
 * finished, `finish.ts`), then finishes it as the one-pass path does.
 */
export async function runStitch(ctx: PlatformContext, j: TranscodeJob, stopping: AbortSignal): Promise<void> {
  const [claimed] = await ctx.db
    .update(vodOutputs)
    .set(lease.take(WORKER_ID, ctx.config.transcodeLeaseSeconds * 1000))
    .where(and(outputWhere(j), eq(vodOutputs.status, 'Processing'), lease.claimable(LEASE, WORKER_ID, CHUNKED)))
    .returning();
  if (!claimed) return;
  // Given back to the parts' owner: the queue's retry (or the sweeper) stitches again from the stored parts.
  const { owned, held } = heldOutput(ctx, j, stopping, () => lease.take(CHUNKED, CHUNKED_LEASE_MS));
  const { workDir } = held;
  await workUnderLease(held, async (signal) => {
    const parts = await ctx.db.select().from(vodOutputChunks).where(partsOf(j)).orderBy(asc(vodOutputChunks.index));
    if (parts.length === 0 || parts.some((p) => p.status !== 'Available')) {
      // Not every part is done (a stitch sent twice, the output started over): the parts' own jobs go on.
      await ctx.db.update(vodOutputs).set(lease.take(CHUNKED, CHUNKED_LEASE_MS)).where(owned);
      return;
    }
    const { output, asset, preset, source, input, sourceInfo, sourceMs } = await loadSource(ctx, j);
    const req: TranscodeRequest = { input, sourceInfo, durationMs: sourceMs, tracks: tracksOf(source), preset, outDir: join(workDir, 'out'), signal };
    const started = performance.now();
    const result: TranscodeResult & { keyId?: string } = await (chunksWriteSegments(preset)
      ? finishChunkedOutput(ctx, j, req, parts)
      : stitchParts(ctx, j, req, parts, asset, owned));
    const ids = { assetId: j.assetId, outputId: j.outputId, tenantId: j.tenantId, preset, keyId: result.keyId, drmKeyMode: keyModeOf(asset.drmKeyMode) };
    ctx.log.info({ assetId: j.assetId, outputId: j.outputId, ms: Math.round(performance.now() - started), timings: result.timings }, 'stitched');
    await completeOutput(ctx, j, output.preset, asset.preset, asset.durationMilliseconds, join(workDir, 'out'), result, ids);
    await ctx.db.delete(vodOutputChunks).where(partsOf(j));
    await ctx.store.deletePrefix(outputWorkPrefix(j.tenantId, j.assetId, j.outputId));
  });
}

/** Downloads the parts' video and audio files and stitches them into the output, publishing it as it is muxed. */
async function stitchParts(
  ctx: PlatformContext,
  j: TranscodeJob,
  req: TranscodeRequest,
  parts: (typeof vodOutputChunks.$inferSelect)[],
  asset: typeof vodAssets.$inferSelect,
  owned: SQL | undefined,
): Promise<TranscodeResult & { keyId?: string }> {
  const partsDir = join(req.outDir, '..', 'parts');
  await mkdir(partsDir, { recursive: true });
  const chunks: { chunk: SourceChunk; file: string }[] = [];
  let audioDir: string | undefined;
  for (const p of parts) {
    const dir = join(partsDir, String(p.index));
    await mkdir(dir, { recursive: true });
    if (p.kind === 'video') {
      await download(ctx, partDir(j, p.index) + 'video.mp4', join(dir, 'video.mp4'));
      chunks.push({
        chunk: { index: p.index, startS: p.startMs / 1000, ...(p.endMs === null ? {} : { endS: p.endMs / 1000 }) },
        file: join(dir, 'video.mp4'),
      });
    } else {
      audioDir = dir;
      if (req.tracks.some((t) => t.type === 'Audio')) await download(ctx, partDir(j, p.index) + 'audio.mp4', join(dir, 'audio.mp4'));
      for (const [k] of req.tracks.filter((t) => t.type === 'Caption').entries()) {
        await download(ctx, partDir(j, p.index) + `sub_${k}.vtt`, join(dir, `sub_${k}.vtt`));
      }
    }
  }
  const prefix = outputPrefix(j.tenantId, j.assetId, j.outputId);
  await ctx.store.deletePrefix(prefix);
  const { preset } = req;
  const encryption = preset.protection ? await outputEncryption(ctx, j.tenantId, j.assetId, preset.protection.scheme, keyModeOf(asset.drmKeyMode)) : undefined;
  const ids = { assetId: j.assetId, outputId: j.outputId, tenantId: j.tenantId, preset, keyId: encryption?.keyId, drmKeyMode: keyModeOf(asset.drmKeyMode) };
  const result = await stitch({ ...req, encryption, publish: outputPublisher(ctx, prefix, ids, owned, req.durationMs ?? 0), chunks, audioDir }).catch(
    (e: Error) => {
      throw new PermanentError(e.message);
    },
  );
  return { ...result, keyId: encryption?.keyId };
}

/** Queues the stitch of an output whose parts are all done but whose stitching worker died (the sweeper). */
export async function restitch(ctx: PlatformContext, j: TranscodeJob): Promise<void> {
  await ctx.db.transaction(async (tx) => {
    await tx.update(vodOutputs).set(lease.take(CHUNKED, CHUNKED_LEASE_MS)).where(outputWhere(j));
    await ctx.jobs.send(stitchJob, { tenantId: j.tenantId, assetId: j.assetId, outputId: j.outputId }, { tx });
  });
}
