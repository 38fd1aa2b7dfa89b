import { join } from 'node:path';
import { and, inArray, ne, sql } from 'drizzle-orm';
import type { PlatformContext } from '../../../../context.ts';
import * as lease from '../../../../db/lease.ts';
import { workUnderLease, type LeasedWork } from '../../../../db/leasedWork.ts';
import { encodeDashChunk } from '../../../../media/chunkDash.ts';
import { encodeHlsChunk } from '../../../../media/chunkHls.ts';
import type { ChunkResult } from '../../../../media/chunkOutput.ts';
import { packagingOf } from '../../../../media/packaging.ts';
import { encodeAudioPart, encodeVideoChunk, type SourceChunk } from '../../../../media/chunks.ts';
import type { TranscodeRequest } from '../../../../media/transcode.ts';
import { contentTypeOf } from '../../../../storage/contentTypes.ts';
import { keyModeOf } from '../../../drm/index.ts';
import { fail, failsPermanently, MAX_ATTEMPTS, outputWhere, PermanentError, placeOverlays, QUEUED, WORKER_ID } from '../outputs.ts';
import { vodOutputChunks, vodOutputs } from '../tables.ts';
import { chunkSink, lockChunked, publishChunked } from './growing.ts';
import { CHUNKED, chunksWriteSegments, loadSource, PART_LEASE, partDir, partsOf, partWhere, stitchJob, tracksOf, type ChunkJob } from './parts.ts';
import { combineProgress, partProgress } from './progress.ts';

/**
 * Whether the output is still waiting for its parts. A finished one's leftover parts (its worker stopped between the
 * completion and their removal) are removed here; a part of an output being stitched or split again is given back.
 */
async function stillChunked(ctx: PlatformContext, j: ChunkJob): Promise<boolean> {
  const [o] = await ctx.db.select({ status: vodOutputs.status, owner: vodOutputs.leaseOwner }).from(vodOutputs).where(outputWhere(j));
  if (o?.status === 'Processing' && o.owner === CHUNKED) return true;
  if (o?.status === 'Processing')
    await ctx.db
      .update(vodOutputChunks)
      .set(lease.release())
      .where(and(partWhere(j), lease.heldBy(PART_LEASE, WORKER_ID)));
  else await ctx.db.delete(vodOutputChunks).where(partsOf(j));
  return false;
}

/** Encodes one part, stores its files under the output's work prefix, and records it done (the last one sends the stitch). */
export async function runPart(ctx: PlatformContext, j: ChunkJob, stopping: AbortSignal): Promise<void> {
  const [part] = await ctx.db
    .update(vodOutputChunks)
    .set({ ...lease.take(WORKER_ID, ctx.config.transcodeLeaseSeconds * 1000), status: 'Processing', attempts: sql`${vodOutputChunks.attempts} + 1` })
    .where(and(partWhere(j), inArray(vodOutputChunks.status, ['Pending', 'Processing']), lease.claimable(PART_LEASE, WORKER_ID, QUEUED)))
    .returning();
  if (!part) return;
  if (!(await stillChunked(ctx, j))) return;
  if (part.attempts > MAX_ATTEMPTS) return fail(ctx, j, `Transcoding part ${part.index + 1} of the source failed ${MAX_ATTEMPTS} times; giving up`);
  const leaseMs = ctx.config.transcodeLeaseSeconds * 1000;
  const partHeld = and(partWhere(j), lease.heldBy(PART_LEASE, WORKER_ID));
  const held: LeasedWork = {
    leaseMs,
    renew: () => ctx.db.update(vodOutputChunks).set(lease.renew(leaseMs)).where(partHeld),
    giveBack: () => ctx.db.update(vodOutputChunks).set(lease.release()).where(partHeld),
    stopping,
    workDir: join(ctx.config.dataDir, 'work', j.assetId, `${j.outputId}.part-${j.index}`),
    ...failsPermanently(ctx, j),
  };
  await workUnderLease(held, async (signal) => {
    const started = performance.now();
    const { output, asset, preset, source, input, sourceInfo, sourceMs } = await loadSource(ctx, j);
    const ids = { assetId: j.assetId, outputId: j.outputId, tenantId: j.tenantId, preset, drmKeyMode: keyModeOf(asset.drmKeyMode) };
    const progress = partProgress(ctx, j, sourceMs);
    const req: TranscodeRequest = {
      input,
      sourceInfo,
      durationMs: sourceMs,
      tracks: tracksOf(source),
      preset,
      outDir: join(held.workDir, 'out'),
      signal,
      onProgress: (p) => progress.report(p),
    };
    let files: string[];
    let written: ChunkResult | undefined;
    if (part.kind === 'video') {
      const chunk: SourceChunk = { index: part.index, startS: part.startMs / 1000, ...(part.endMs === null ? {} : { endS: part.endMs / 1000 }) };
      req.overlays = await placeOverlays(ctx, j, output.overlays, held.workDir);
      const encodeWritten = packagingOf(preset).streaming === 'hls' ? encodeHlsChunk : encodeDashChunk;
      const encoded = chunksWriteSegments(preset)
        ? encodeWritten(req, chunk, chunkSink(ctx, j, ids, sourceMs)).then((r) => {
            written = r;
            return r.captions;
          })
        : encodeVideoChunk(req, chunk).then(() => ['video.mp4']);
      files = await encoded.catch((e: Error) => {
        throw new PermanentError(e.message);
      });
    } else {
      files = await encodeAudioPart(req).catch((e: Error) => {
        throw new PermanentError(e.message);
      });
    }
    await progress.settled();
    for (const f of files) await ctx.store.putFile(partDir(j, part.index) + f, join(req.outDir, f), contentTypeOf(f));
    const last = await ctx.db.transaction(async (tx) => {
      // Under the output's lock: of two parts finishing at once, exactly one sees the other done and sends the stitch.
      if (!(await lockChunked(tx, j))) return false;
      const rows = await tx
        .update(vodOutputChunks)
        .set({
          status: 'Available',
          progressPercent: 100,
          leaseOwner: null,
          leaseUntil: null,
          ...(written ? { segments: written.playlists, ...(written.manifests.dash ? { dash: written.manifests.dash } : {}) } : {}),
        })
        .where(and(partWhere(j), lease.heldBy(PART_LEASE, WORKER_ID)))
        .returning({ index: vodOutputChunks.index });
      if (!rows.length) return false;
      const [{ left }] = await tx
        .select({ left: sql<number>`count(*)::int` })
        .from(vodOutputChunks)
        .where(and(partsOf(j), ne(vodOutputChunks.status, 'Available')));
      await combineProgress(tx, j, sourceMs);
      if (written) await publishChunked(ctx, tx, j, written.manifests, ids, sourceMs);
      const ms = Math.round(performance.now() - started);
      ctx.log.info({ assetId: j.assetId, outputId: j.outputId, index: j.index, kind: part.kind, left, ms }, 'part transcoded');
      if (left > 0) return false;
      await ctx.jobs.send(stitchJob, { tenantId: j.tenantId, assetId: j.assetId, outputId: j.outputId }, { tx });
      return true;
    });
    if (last) ctx.log.info({ assetId: j.assetId, outputId: j.outputId }, 'every part transcoded; stitching');
  });
}
