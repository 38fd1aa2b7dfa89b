import { rename } from 'node:fs/promises';
import { hostname } from 'node:os';
import { extname, join } from 'node:path';
import { and, eq, type SQL } from 'drizzle-orm';
import type { PlatformContext } from '../../../context.ts';
import * as lease from '../../../db/lease.ts';
import type { LeasedWork } from '../../../db/leasedWork.ts';
import type { TranscodeResult } from '../../../media/transcode.ts';
import type { PlacedOverlay } from '../../../media/overlays.ts';
import { DownloadRefusedError, downloadToFile } from '../../../platform/download.ts';
import { recordEvent } from '../../../platform/events.ts';
import { tenantPrefix } from '../../../storage/keys.ts';
import { attachGeneratedCaptions } from './captions.ts';
import { outputPrefix, outputWorkPrefix } from '../storageKeys.ts';
import { uploadOutput, type OutputIds } from './upload.ts';
import { vodAssets, vodOutputChunks, vodOutputs, type OverlayRow } from './tables.ts';

/** What the transcoding jobs share: the output's claim, its failure, its overlays' pictures, its completion. */

export interface TranscodeJob {
  tenantId: string;
  assetId: string;
  outputId: string;
}

export const MAX_ATTEMPTS = 3;
export const LEASE = { owner: vodOutputs.leaseOwner, until: vodOutputs.leaseUntil };
/** The owner of an output waiting in the queue; the lease keeps the sweeper off it while the job waits. */
export const QUEUED = 'queued';
export const QUEUED_LEASE_MS = 3600_000;
export const WORKER_ID = `${hostname()}:${process.pid}:${Math.random().toString(36).slice(2, 8)}`;
export const outputWhere = (j: TranscodeJob) => and(eq(vodOutputs.tenantId, j.tenantId), eq(vodOutputs.assetId, j.assetId), eq(vodOutputs.id, j.outputId));

export async function fail(ctx: PlatformContext, j: TranscodeJob, message: string): Promise<void> {
  const failed = await ctx.db.transaction(async (tx) => {
    const rows = await tx
      .update(vodOutputs)
      .set({ status: 'Error', errorMessage: message, endpoints: [], leaseOwner: null, leaseUntil: null })
      .where(outputWhere(j))
      .returning();
    if (!rows.length) return false;
    // The chunked path's parts go with it (their files below): no worker takes them up again.
    await tx.delete(vodOutputChunks).where(and(eq(vodOutputChunks.assetId, j.assetId), eq(vodOutputChunks.outputId, j.outputId)));
    await recordEvent(tx, j.tenantId, 'vod.output.failed', { id: j.outputId, assetId: j.assetId, errorMessage: message });
    const [asset] = await tx.select().from(vodAssets).where(eq(vodAssets.id, j.assetId));
    if (asset && asset.preset === rows[0].preset && asset.status !== 'Available') {
      await tx.update(vodAssets).set({ status: 'Error', errorMessage: message, lastModificationDate: new Date() }).where(eq(vodAssets.id, j.assetId));
      await recordEvent(tx, j.tenantId, 'vod.asset.failed', { id: j.assetId, errorMessage: message });
    }
    return true;
  });
  // What it published while it encoded is unpublished with the endpoints above; its files go too, and its chunks'.
  if (failed) {
    await ctx.store.deletePrefix(outputPrefix(j.tenantId, j.assetId, j.outputId));
    await ctx.store.deletePrefix(outputWorkPrefix(j.tenantId, j.assetId, j.outputId));
  }
}

/** Errors that retrying cannot fix: the source or the request is wrong. */
export class PermanentError extends Error {}

/** For `workUnderLease` (db/leasedWork.ts): a `PermanentError` fails the output instead of being retried. */
export const failsPermanently = (ctx: PlatformContext, j: TranscodeJob) => ({
  isPermanent: (e: unknown) => e instanceof PermanentError,
  fail: (e: Error) => fail(ctx, j, e.message),
});

/**
 * An output this worker has claimed, as `workUnderLease` keeps it: its lease renewed while the work runs, set to
 * `givenBack()` if the work stops before it ends, a `PermanentError` failing it; `owned` is the row while it is held.
 */
export function heldOutput(
  ctx: PlatformContext,
  j: TranscodeJob,
  stopping: AbortSignal,
  givenBack: () => { leaseOwner: string | null; leaseUntil: SQL<Date> },
) {
  const owned = and(outputWhere(j), lease.heldBy(LEASE, WORKER_ID))!;
  const leaseMs = ctx.config.transcodeLeaseSeconds * 1000;
  const held: LeasedWork = {
    leaseMs,
    renew: () => ctx.db.update(vodOutputs).set(lease.renew(leaseMs)).where(owned),
    giveBack: () => ctx.db.update(vodOutputs).set(givenBack()).where(owned),
    stopping,
    workDir: join(ctx.config.dataDir, 'work', j.assetId, j.outputId),
    ...failsPermanently(ctx, j),
  };
  return { owned, held };
}

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

export async function placeOverlays(ctx: PlatformContext, j: TranscodeJob, overlays: OverlayRow[], workDir: string): Promise<PlacedOverlay[]> {
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

/**
 * Stores a finished output (`result`, written in `workDir`) under `prefix` and makes it `Available` with its endpoints,
 * and its asset too when it is the asset's own preset, while this worker holds it; an output deleted or taken over
 * meanwhile gets nothing, and what was uploaded is removed.
 */
export async function completeOutput(
  ctx: PlatformContext,
  j: TranscodeJob,
  outputPreset: string,
  assetPreset: string,
  assetDurationMs: number | null,
  workDir: string,
  result: TranscodeResult,
  ids: OutputIds,
): Promise<void> {
  const prefix = outputPrefix(j.tenantId, j.assetId, j.outputId);
  const endpoints = await uploadOutput(ctx, workDir, prefix, result, ids);
  // Captions made from the asset's speech are in its manifests once it is Available (a player reading them at the
  // event finds them); those made meanwhile join it after, or their job adds them.
  const captioned = await attachGeneratedCaptions(ctx, j.tenantId, j.assetId, j.outputId, endpoints);
  const finished = await ctx.db.transaction(async (tx) => {
    const rows = await tx
      .update(vodOutputs)
      .set({ status: 'Available', progressPercent: 100, endpoints, completionDate: new Date(), errorMessage: null, leaseOwner: null, leaseUntil: null })
      .where(and(outputWhere(j), lease.heldBy(LEASE, WORKER_ID)))
      .returning();
    if (!rows.length) return false;
    await recordEvent(tx, j.tenantId, 'vod.output.available', { id: j.outputId, assetId: j.assetId, preset: outputPreset });
    if (assetPreset === outputPreset) {
      const duration = Math.max(...endpoints.map((e) => e.durationMilliseconds), 0) || assetDurationMs;
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
  else if (!captioned) await attachGeneratedCaptions(ctx, j.tenantId, j.assetId, j.outputId);
}
