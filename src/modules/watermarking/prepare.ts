import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { and, eq, inArray } from 'drizzle-orm';
import type { PlatformContext } from '../../context.ts';
import { MediaError } from '../../media/ffmpeg.ts';
import { prepareVariants } from '../../media/watermark/prepare.ts';
import { recordEvent } from '../../platform/events.ts';
import { contentTypeOf } from '../../storage/contentTypes.ts';
import { presetById } from '../transcoder/index.ts';
import { findFile, getAsset as getVodAsset } from '../vod/index.ts';
import { minimumDurationSeconds, tooShort } from './minimum.ts';
import { preparedPrefix } from './storageKeys.ts';
import { watermarkingAssets } from './tables.ts';

/** Used when the VOD asset's preset has no video ladder (audio only, remux): a 360p rendition. */
const FALLBACK = { height: 360, videoBitrateKbps: 700 };
const even = (n: number) => Math.max(2, Math.round(n / 2) * 2);

/**
 * The rendition both variants are encoded at: the highest rung of the VOD asset's preset that does not upscale the
 * source (one rendition; the redirector's playlist has one variant).
 */
function renditionFor(presetId: string, srcWidth: number, srcHeight: number) {
  const preset = presetById(presetId);
  const ladder = [...(preset?.ladder ?? [])].sort((a, b) => b.height - a.height);
  const rung = ladder.find((r) => r.height <= srcHeight) ?? ladder.at(-1) ?? FALLBACK;
  const height = even(Math.min(rung.height, srcHeight));
  return { width: even((height * srcWidth) / srcHeight), height, videoBitrateKbps: rung.videoBitrateKbps, x264Preset: preset?.x264Preset ?? 'veryfast' };
}

class PermanentError extends Error {}

/** The job that encodes an asset's two variants. */
export interface PrepareJob {
  tenantId: string;
  assetId: string;
}

export async function runPrepare(ctx: PlatformContext, j: PrepareJob): Promise<void> {
  const where = and(eq(watermarkingAssets.tenantId, j.tenantId), eq(watermarkingAssets.id, j.assetId));
  const [row] = await ctx.db
    .update(watermarkingAssets)
    .set({ status: 'Processing', lastModificationDate: new Date() })
    .where(and(where, inArray(watermarkingAssets.status, ['Pending', 'Processing'])))
    .returning();
  if (!row) return; // deleted, or already finished by an earlier attempt
  const workDir = join(ctx.config.dataDir, 'work', 'watermarking', j.assetId);
  let percent = 0;
  let written = 0;
  const progress = setInterval(() => {
    if (percent === written) return;
    written = percent;
    void ctx.db
      .update(watermarkingAssets)
      .set({ progress: percent })
      .where(and(where, eq(watermarkingAssets.status, 'Processing')))
      .catch(() => {});
  }, 1000);
  try {
    if (!row.vodAssetId) throw new PermanentError('A live channel is marked by its own pipeline, not prepared');
    const vod = await getVodAsset(ctx.db, j.tenantId, row.vodAssetId).catch(() => {
      throw new PermanentError(`VOD asset ${row.vodAssetId} no longer exists`);
    });
    const fileId = vod.sources[0]?.fileId;
    const file = fileId ? await findFile(ctx.db, j.tenantId, fileId) : undefined;
    if (!file) throw new PermanentError(`The source file of VOD asset ${vod.id} no longer exists`);
    const video = file.tracks.find((t) => t.type === 'Video' && t.width && t.height);
    if (!video) throw new PermanentError(`The source file of VOD asset ${vod.id} has no video track to mark`);
    const durationMs = file.durationMs ?? vod.durationMilliseconds ?? 0;
    const settings = { userNumberBits: row.userNumberBits, segmentDuration: row.segmentDuration };
    if (durationMs && durationMs < minimumDurationSeconds(settings) * 1000)
      throw new PermanentError(tooShort(`VOD asset ${vod.id}`, durationMs, settings).message);
    const rendition = renditionFor(vod.preset, video.width!, video.height!);
    await rm(workDir, { recursive: true, force: true });
    await mkdir(workDir, { recursive: true });
    const result = await prepareVariants({
      input: await ctx.store.readableLocation(file.fileKey),
      durationMs,
      ...rendition,
      segmentSeconds: row.segmentDuration,
      strength: row.strength,
      seed: row.id,
      audio: file.tracks.some((t) => t.type === 'Audio'),
      outDir: workDir,
      onProgress: (p) => (percent = p),
    }).catch((e: Error) => {
      throw e instanceof MediaError ? new PermanentError(e.message) : e;
    });
    const prefix = preparedPrefix(j.tenantId, j.assetId);
    await ctx.store.deletePrefix(prefix);
    for (const f of result.files) await ctx.store.putFile(prefix + f, join(workDir, f), contentTypeOf(f));
    await ctx.db.transaction(async (tx) => {
      const done = await tx
        .update(watermarkingAssets)
        .set({
          status: 'Available',
          progress: 100,
          errorMessage: null,
          width: rendition.width,
          height: rendition.height,
          videoBitrateKbps: rendition.videoBitrateKbps,
          segmentDurations: result.segmentDurations,
          signature: result.signature,
          lastModificationDate: new Date(),
        })
        .where(where)
        .returning({ id: watermarkingAssets.id });
      if (done.length) await recordEvent(tx, j.tenantId, 'watermarking.asset.available', { id: j.assetId, segmentCount: result.segmentDurations.length });
    });
  } catch (e) {
    if (!(e instanceof PermanentError)) throw e;
    await ctx.db.transaction(async (tx) => {
      await tx.update(watermarkingAssets).set({ status: 'Error', errorMessage: e.message, lastModificationDate: new Date() }).where(where);
      await recordEvent(tx, j.tenantId, 'watermarking.asset.failed', { id: j.assetId, errorMessage: e.message });
    });
  } finally {
    clearInterval(progress);
    await rm(workDir, { recursive: true, force: true }).catch(() => {});
  }
}
