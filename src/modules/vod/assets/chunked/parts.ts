import { and, eq } from 'drizzle-orm';
import type { PlatformContext } from '../../../../context.ts';
import { defineJob } from '../../../../jobs/queue.ts';
import type { SourceTrack } from '../../../../media/transcode.ts';
import { packagingOf } from '../../../../media/packaging.ts';
import { presetById, type Preset } from '../../../transcoder/index.ts';
import { outputWorkPrefix } from '../../storageKeys.ts';
import { MAX_ATTEMPTS, outputWhere, PermanentError, type TranscodeJob } from '../outputs.ts';
import { loadSourceFiles } from '../sourceFiles.ts';
import { vodAssets, vodOutputChunks, vodOutputs, type VodSourceRow } from '../tables.ts';

/**
 * The chunked path (docs/decisions/vod-chunked.md): the transcode job of a long source splits it into parts, each a job
 * any worker process takes (`vod.transcode.chunk`); the part that completes last, in the transaction that records it,
 * sends the stitch (`vod.transcode.stitch`), which packages the parts into the output as the one-pass encode would.
 */
export interface ChunkJob extends TranscodeJob {
  index: number;
}

/** A part's claim is renewed by its worker like an output's; a dead worker's part is queued again by the sweeper. */
export const chunkJob = defineJob<ChunkJob>('vod.transcode.chunk', { retryLimit: MAX_ATTEMPTS, retryDelaySeconds: 5, expireInSeconds: 6 * 3600 });
export const stitchJob = defineJob<TranscodeJob>('vod.transcode.stitch', { retryLimit: MAX_ATTEMPTS, retryDelaySeconds: 5, expireInSeconds: 6 * 3600 });

/**
 * Whether the chunks write the output's segments themselves, published as they come (an HLS, DASH or CMAF output, not
 * encrypted: clear segments are never served), rather than video files the stitch packages.
 */
export const chunksWriteSegments = (preset: Preset): boolean => packagingOf(preset).streaming !== undefined && !preset.protection;

/** The owner of an output whose parts are out with the workers; renewed as they work, taken by the stitch. */
export const CHUNKED = 'chunked';
export const CHUNKED_LEASE_MS = 6 * 3600_000;
export const PART_LEASE = { owner: vodOutputChunks.leaseOwner, until: vodOutputChunks.leaseUntil };

export const partsOf = (j: TranscodeJob) =>
  and(eq(vodOutputChunks.tenantId, j.tenantId), eq(vodOutputChunks.assetId, j.assetId), eq(vodOutputChunks.outputId, j.outputId));
export const partWhere = (j: ChunkJob) => and(partsOf(j), eq(vodOutputChunks.index, j.index));
export const partDir = (j: TranscodeJob, index: number) => `${outputWorkPrefix(j.tenantId, j.assetId, j.outputId)}part-${String(index).padStart(5, '0')}/`;

export const tracksOf = (source: VodSourceRow): SourceTrack[] =>
  source.transcodingTracks.map((t) => ({ type: t.type as SourceTrack['type'], index: Number(t.trackSelector.trackId), language: t.language, name: t.name }));

/** What every part and the stitch read: the asset, its preset and source, the source's location, probe and length. */
export async function loadSource(ctx: PlatformContext, j: TranscodeJob) {
  const [output] = await ctx.db.select().from(vodOutputs).where(outputWhere(j));
  const [asset] = await ctx.db.select().from(vodAssets).where(eq(vodAssets.id, j.assetId));
  const preset = output && presetById(output.preset);
  if (!output || !asset || !preset) throw new PermanentError(!asset || !output ? 'The asset was deleted' : `Preset ${output.preset} no longer exists`);
  const source = asset.sources[0];
  const file = (await loadSourceFiles(ctx.db, j.tenantId, [source.fileId])).get(source.fileId);
  if (!file) throw new PermanentError(`Source file ${source.fileId} was deleted`);
  const input = await ctx.store.readableLocation(file.fileKey);
  return { output, asset, preset, source, input, sourceInfo: file.mediaInfo, sourceMs: file.durationMs ?? asset.durationMilliseconds ?? 0 };
}
