import { and } from 'drizzle-orm';
import type { PlatformContext } from '../../../../context.ts';
import * as lease from '../../../../db/lease.ts';
import { splitSource } from '../../../../media/chunks.ts';
import type { Preset } from '../../../transcoder/index.ts';
import { LEASE, outputWhere, QUEUED, QUEUED_LEASE_MS, WORKER_ID, type TranscodeJob } from '../outputs.ts';
import { vodOutputChunks, vodOutputs, type VodSourceRow } from '../tables.ts';
import { CHUNKED, CHUNKED_LEASE_MS, chunkJob, chunksWriteSegments, partsOf } from './parts.ts';

/**
 * Splits a claimed output's source into parts and queues them, in one transaction with the output handed to the parts
 * (`CHUNKED`): either every part's job exists or none does. The video is cut on segment boundaries; the audio and the
 * captions are encoded once over the whole source: by the first chunk when the chunks write HLS (its fast start's
 * second process), else by a part of their own. Parts are started in source order, the audio part first.
 */
export async function startChunked(ctx: PlatformContext, j: TranscodeJob, source: VodSourceRow, sourceMs: number, preset: Preset): Promise<void> {
  const chunks = splitSource(sourceMs, ctx.config.chunkSeconds, preset.segmentSeconds);
  const audio = !chunksWriteSegments(preset) && source.transcodingTracks.some((t) => t.type === 'Audio' || t.type === 'Caption');
  const parts = [
    ...chunks.map((c) => ({
      index: c.index,
      kind: 'video' as const,
      startMs: Math.round(c.startS * 1000),
      endMs: c.endS === undefined ? null : Math.round(c.endS * 1000),
    })),
    ...(audio ? [{ index: chunks.length, kind: 'audio' as const, startMs: 0, endMs: null }] : []),
  ];
  await ctx.db.transaction(async (tx) => {
    const rows = await tx
      .update(vodOutputs)
      .set({ ...lease.take(CHUNKED, CHUNKED_LEASE_MS), progressPercent: 0 })
      .where(and(outputWhere(j), lease.heldBy(LEASE, WORKER_ID)))
      .returning({ id: vodOutputs.id });
    if (!rows.length) return;
    await tx.delete(vodOutputChunks).where(partsOf(j));
    await tx
      .insert(vodOutputChunks)
      .values(parts.map((p) => ({ ...p, tenantId: j.tenantId, assetId: j.assetId, outputId: j.outputId, ...lease.take(QUEUED, QUEUED_LEASE_MS) })));
    // The audio part first (it is short, and its worker is then free for a chunk), then the chunks from the first:
    // sent in one transaction, the jobs would otherwise start in no particular order.
    for (const p of parts)
      await ctx.jobs.send(
        chunkJob,
        { tenantId: j.tenantId, assetId: j.assetId, outputId: j.outputId, index: p.index },
        { tx, priority: p.kind === 'audio' ? 1 : -p.index },
      );
  });
  ctx.log.info({ assetId: j.assetId, outputId: j.outputId, chunks: chunks.length, audio }, 'transcoding in chunks');
}
