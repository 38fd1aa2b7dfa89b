import { mkdir, rename, rm } from 'node:fs/promises';
import { hostname } from 'node:os';
import { extname, join } from 'node:path';
import { and, eq, inArray, isNotNull, lt, sql } from 'drizzle-orm';
import type { PlatformContext, WorkerStarter } from '../../../context.ts';
import type { Queryable } from '../../../db/client.ts';
import * as lease from '../../../db/lease.ts';
import { defineJob } from '../../../jobs/queue.ts';
import { transcode, type SourceTrack } from '../../../media/transcode.ts';
import type { PlacedOverlay } from '../../../media/overlays.ts';
import { startPeriodic } from '../../../platform/periodic.ts';
import { DownloadRefusedError, downloadToFile } from '../../../platform/download.ts';
import { recordEvent } from '../../../platform/events.ts';
import { keyModeOf } from '../../drm/keys.ts';
import { outputEncryption } from '../../drm/service.ts';
import { presetById } from '../../transcoder/service.ts';
import { tenantPrefix } from '../../../storage/keys.ts';
import { outputPrefix } from '../storageKeys.ts';
import { progressWriter } from './progress.ts';
import { loadSourceFiles } from './sourceFiles.ts';
import { uploadOutput } from './upload.ts';
import { vodAssets, vodOutputs, type EndpointRow, type OverlayRow } from './tables.ts';

export interface TranscodeJob {
  tenantId: string;
  assetId: string;
  outputId: string;
}

const MAX_ATTEMPTS = 3;
const LEASE = { owner: vodOutputs.leaseOwner, until: vodOutputs.leaseUntil };
/** The owner of an output waiting in the queue; the lease keeps the sweeper off it while the job waits. */
export const QUEUED = 'queued';
const QUEUED_LEASE_MS = 3600_000;
const WORKER_ID = `${hostname()}:${process.pid}:${Math.random().toString(36).slice(2, 8)}`;
/** Retried on a crash; long enough for a long encode: a dead worker is detected by its expired claim long before. */
export const transcodeJob = defineJob<TranscodeJob>('vod.transcode', { retryLimit: MAX_ATTEMPTS, retryDelaySeconds: 5, expireInSeconds: 6 * 3600 });

export async function enqueueTranscode(ctx: PlatformContext, tx: Queryable, job: TranscodeJob): Promise<string | null> {
  return ctx.jobs.send(transcodeJob, job, { tx });
}

const outputWhere = (j: TranscodeJob) => and(eq(vodOutputs.tenantId, j.tenantId), eq(vodOutputs.assetId, j.assetId), eq(vodOutputs.id, j.outputId));

/** Takes the output for this worker unless a live worker holds it or it is finished. */
async function claim(ctx: PlatformContext, j: TranscodeJob) {
  const [row] = await ctx.db
    .update(vodOutputs)
    .set({ ...lease.take(WORKER_ID, ctx.config.transcodeLeaseSeconds * 1000), status: 'Processing', attempts: sql`${vodOutputs.attempts} + 1` })
    // A queued output is handed to whichever worker asks first; a running one only once its worker died.
    .where(and(outputWhere(j), inArray(vodOutputs.status, ['Pending', 'Processing']), lease.claimable(LEASE, QUEUED)))
    .returning();
  return row;
}

async function fail(ctx: PlatformContext, j: TranscodeJob, message: string): Promise<void> {
  await ctx.db.transaction(async (tx) => {
    const rows = await tx
      .update(vodOutputs)
      .set({ status: 'Error', errorMessage: message, leaseOwner: null, leaseUntil: null })
      .where(outputWhere(j))
      .returning();
    if (!rows.length) return;
    await recordEvent(tx, j.tenantId, 'vod.output.failed', { id: j.outputId, assetId: j.assetId, errorMessage: message });
    const [asset] = await tx.select().from(vodAssets).where(eq(vodAssets.id, j.assetId));
    if (asset && asset.preset === rows[0].preset && asset.status !== 'Available') {
      await tx.update(vodAssets).set({ status: 'Error', errorMessage: message, lastModificationDate: new Date() }).where(eq(vodAssets.id, j.assetId));
      await recordEvent(tx, j.tenantId, 'vod.asset.failed', { id: j.assetId, errorMessage: message });
    }
  });
}

/** Errors that retrying cannot fix: the source or the request is wrong. */
class PermanentError extends Error {}

/** Overlay pictures are small images or clips; anything larger is refused rather than downloaded. */
const OVERLAY_MAX_BYTES = 64 * 1024 * 1024;
const OVERLAY_TIMEOUT_MS = 30_000;
const EXTENSION_BY_TYPE: Record<string, string> = {
  'image/png': '.png',
  'image/jpeg': '.jpg',
  'image/gif': '.gif',
  'image/webp': '.webp',
  'image/bmp': '.bmp',
  'video/mp4': '.mp4',
  'video/quicktime': '.mov',
  'video/webm': '.webm',
};

/**
 * An overlay's picture, for ffmpeg, as a local file: a URL is downloaded here through the platform's address guard
 * (ffmpeg fetching it itself would let a tenant reach the platform's own network), an object of the platform's own
 * store (`S3` input naming its bucket) is read where it lies. The file keeps an extension, which ffmpeg's image
 * reader goes by.
 */
const ownKey = (key: string, tenantId: string) => key.startsWith(tenantPrefix(tenantId)) && !key.split('/').some((s) => s === '' || s === '.' || s === '..');

async function placeOverlays(ctx: PlatformContext, j: TranscodeJob, overlays: OverlayRow[], workDir: string): Promise<PlacedOverlay[]> {
  return Promise.all(
    overlays.map(async (o, i) => {
      const url = o.input?.url;
      if (url && (o.input!.type ?? 'URL').toUpperCase() === 'URL') {
        const path = join(workDir, `overlay-${i + 1}`);
        const type = await downloadToFile(url, path, {
          allowPrivate: ctx.config.fetchAllowPrivate,
          setting: 'MEDIAPLANE_FETCH_ALLOW_PRIVATE=true',
          maxBytes: OVERLAY_MAX_BYTES,
          timeoutMs: OVERLAY_TIMEOUT_MS,
        }).catch((e: Error) => {
          const message = `The picture of overlay ${i + 1} could not be fetched from ${url}: ${e.message}`;
          throw e instanceof DownloadRefusedError ? new PermanentError(message) : new Error(message);
        });
        const fromPath = extname(new URL(url).pathname).toLowerCase();
        const ext = /^\.[a-z0-9]{2,5}$/.test(fromPath) ? fromPath : (EXTENSION_BY_TYPE[type.split(';')[0].trim().toLowerCase()] ?? '');
        if (ext) await rename(path, path + ext);
        return { ...o, source: path + ext };
      }
      const key = o.input?.s3ObjectKey;
      // Only the tenant's own objects: the store holds every tenant's files.
      if (key && o.input?.s3BucketName === ctx.store.bucket && ownKey(key, j.tenantId)) return { ...o, source: await ctx.store.readableLocation(key) };
      throw new PermanentError(
        `Overlay input s3://${o.input?.s3BucketName}/${o.input?.s3ObjectKey} is not one of the tenant's objects in the platform's bucket; use a URL`,
      );
    }),
  );
}

async function runTranscode(ctx: PlatformContext, j: TranscodeJob): Promise<void> {
  const output = await claim(ctx, j);
  if (!output) return;
  if (output.attempts > MAX_ATTEMPTS) return fail(ctx, j, `Transcoding failed ${MAX_ATTEMPTS} times; giving up`);
  // Three renewals per lease: one lost to a slow database does not lose the claim.
  const heartbeat = setInterval(
    () => {
      void ctx.db
        .update(vodOutputs)
        .set(lease.renew(ctx.config.transcodeLeaseSeconds * 1000))
        .where(and(outputWhere(j), lease.heldBy(LEASE, WORKER_ID)))
        .catch(() => {});
    },
    (ctx.config.transcodeLeaseSeconds * 1000) / 3,
  );
  const workDir = join(ctx.config.dataDir, 'work', j.assetId, j.outputId);
  const abort = new AbortController();
  try {
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

    await rm(workDir, { recursive: true, force: true });
    await mkdir(workDir, { recursive: true });
    // The asset's id is its DRM content id: every protected output of the asset shares its keys (one, or AudioVideoKeys' two).
    const encryption = preset.protection
      ? await outputEncryption(ctx, j.tenantId, j.assetId, preset.protection.scheme, keyModeOf(asset.drmKeyMode))
      : undefined;
    const transcodeStarted = performance.now();
    const progress = progressWriter(ctx, j.tenantId, j.assetId, j.outputId, and(outputWhere(j), lease.heldBy(LEASE, WORKER_ID)));
    const result = await transcode({
      input: await ctx.store.readableLocation(file.fileKey),
      durationMs: file.durationMs ?? asset.durationMilliseconds ?? 0,
      tracks: source.transcodingTracks.map((t) => ({
        type: t.type as SourceTrack['type'],
        index: Number(t.trackSelector.trackId),
        language: t.language,
        name: t.name,
      })),
      preset,
      overlays: await placeOverlays(ctx, j, output.overlays, workDir),
      outDir: workDir,
      signal: abort.signal,
      onProgress: progress.report,
      encryption,
    }).catch((e: Error) => {
      throw new PermanentError(e.message);
    });
    const seconds = (performance.now() - transcodeStarted) / 1000;
    ctx.metrics.transcodeSeconds.observe({ preset: preset.id }, seconds);
    const mediaMs = file.durationMs ?? asset.durationMilliseconds ?? 0;
    if (mediaMs > 0 && seconds > 0) ctx.metrics.transcodeSpeed.observe({ preset: preset.id }, mediaMs / 1000 / seconds);
    await progress.settled();

    const prefix = outputPrefix(j.tenantId, j.assetId, j.outputId);
    // A previous attempt may have left part of its upload: start from an empty prefix so no file is orphaned.
    await ctx.store.deletePrefix(prefix);
    const endpoints: EndpointRow[] = await uploadOutput(ctx, workDir, prefix, result, {
      assetId: j.assetId,
      outputId: j.outputId,
      tenantId: j.tenantId,
      preset,
      keyId: encryption?.keyId,
      drmKeyMode: keyModeOf(asset.drmKeyMode),
    });

    const finished = await ctx.db.transaction(async (tx) => {
      const rows = await tx
        .update(vodOutputs)
        .set({ status: 'Available', progressPercent: 100, endpoints, completionDate: new Date(), errorMessage: null, leaseOwner: null, leaseUntil: null })
        .where(and(outputWhere(j), lease.heldBy(LEASE, WORKER_ID)))
        .returning();
      if (!rows.length) return false;
      await recordEvent(tx, j.tenantId, 'vod.output.available', { id: j.outputId, assetId: j.assetId, preset: output.preset });
      if (asset.preset === output.preset) {
        const duration = Math.max(...endpoints.map((e) => e.durationMilliseconds), 0) || asset.durationMilliseconds;
        await tx
          .update(vodAssets)
          .set({ status: 'Available', errorMessage: null, durationMilliseconds: duration, lastModificationDate: new Date() })
          .where(eq(vodAssets.id, j.assetId));
        await recordEvent(tx, j.tenantId, 'vod.asset.available', { id: j.assetId });
      }
      return true;
    });
    // Deleted (or taken over) while we worked: what we uploaded belongs to nobody.
    if (!finished) await ctx.store.deletePrefix(prefix);
  } catch (e) {
    if (e instanceof PermanentError) return fail(ctx, j, e.message);
    // Let the queue retry; release the claim so the retry can take it at once.
    await ctx.db
      .update(vodOutputs)
      .set(lease.release())
      .where(and(outputWhere(j), lease.heldBy(LEASE, WORKER_ID)))
      .catch(() => {});
    throw e;
  } finally {
    clearInterval(heartbeat);
    abort.abort();
    await rm(workDir, { recursive: true, force: true }).catch(() => {});
  }
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
  for (const o of orphans) await ctx.jobs.send(transcodeJob, o);

  const expired = await ctx.db
    .select({ tenantId: vodOutputs.tenantId, assetId: vodOutputs.assetId, id: vodOutputs.id })
    .from(vodOutputs)
    .where(and(isNotNull(vodOutputs.expirationDate), lt(vodOutputs.expirationDate, new Date())))
    .limit(100);
  for (const o of expired) {
    const removed = await ctx.db.transaction(async (tx) => {
      const rows = await tx
        .delete(vodOutputs)
        .where(and(eq(vodOutputs.assetId, o.assetId), eq(vodOutputs.id, o.id)))
        .returning({ id: vodOutputs.id });
      if (rows.length) await recordEvent(tx, o.tenantId, 'vod.output.deleted', { id: o.id, assetId: o.assetId, reason: 'expired' });
      return rows.length > 0;
    });
    if (removed) await ctx.store.deletePrefix(outputPrefix(o.tenantId, o.assetId, o.id));
  }
}

/** Transcode workers, and the sweeper that re-queues orphaned outputs and removes expired ones. */
export const startAssetWorkers: WorkerStarter = async (ctx) => {
  await ctx.jobs.work(transcodeJob, (job) => runTranscode(ctx, job), { concurrency: ctx.config.transcodeConcurrency });
  const sweeper = startPeriodic('vod sweep', ctx.config.sweepIntervalMs, () => sweep(ctx), ctx.log);
  return () => sweeper.stop();
};
