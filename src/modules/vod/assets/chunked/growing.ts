import { and, asc, eq, sql } from 'drizzle-orm';
import type { PlatformContext } from '../../../../context.ts';
import type { Queryable } from '../../../../db/client.ts';
import * as lease from '../../../../db/lease.ts';
import type { DashSkeleton } from '../../../../media/chunkMpd.ts';
import { composeChunkedOutput, type ChunkManifests, type ChunkSink } from '../../../../media/chunkOutput.ts';
import { mergeSegments, type PartPlaylists } from '../../../../media/chunkPlaylists.ts';
import { contentTypeOf } from '../../../../storage/contentTypes.ts';
import { outputPrefix } from '../../storageKeys.ts';
import { outputWhere, WORKER_ID, type TranscodeJob } from '../outputs.ts';
import { announcePlayable, withClock } from '../publish.ts';
import { vodOutputChunks, vodOutputs } from '../tables.ts';
import type { OutputIds } from '../upload.ts';
import { CHUNKED, PART_LEASE, partsOf, partWhere, type ChunkJob } from './parts.ts';

/**
 * An output whose chunks write its segments is published as they store them (docs/decisions/vod-chunked.md): each
 * chunk records its segments on its row, and the output's media playlists and MPD are written from every chunk's,
 * under the output row's lock. Writers take turns, each writing what the rows say after its own: a manifest never
 * shrinks.
 */

/** Locks the output's row while its parts are out: false once it is finished, failed, deleted or split again. */
export async function lockChunked(tx: Queryable, j: TranscodeJob): Promise<boolean> {
  const [o] = await tx.select({ status: vodOutputs.status, owner: vodOutputs.leaseOwner }).from(vodOutputs).where(outputWhere(j)).for('update');
  return o?.status === 'Processing' && o.owner === CHUNKED;
}

/** Writes the output's manifests from its parts' rows (and, once a player can start, the master and its endpoints). */
export async function publishChunked(
  ctx: PlatformContext,
  tx: Queryable,
  j: ChunkJob,
  manifests: ChunkManifests,
  ids: OutputIds,
  sourceMs: number,
): Promise<void> {
  const parts = await tx
    .select({
      index: vodOutputChunks.index,
      segments: vodOutputChunks.segments,
      status: vodOutputChunks.status,
      dash: vodOutputChunks.dash,
      createDate: vodOutputChunks.createDate,
    })
    .from(vodOutputChunks)
    .where(partsOf(j))
    .orderBy(asc(vodOutputChunks.index));
  // A chunk after an unfinished one changes nothing a player sees.
  if (parts.some((p) => p.index < j.index && p.status !== 'Available')) return;
  const composed = composeChunkedOutput(
    ids,
    { master: manifests.master, dash: parts[0]?.dash ?? undefined },
    parts.map((p) => ({ playlists: p.segments, done: p.status === 'Available' })),
    { availabilityStart: parts[0]?.createDate },
  );
  if (!composed) return;
  const prefix = outputPrefix(j.tenantId, j.assetId, j.outputId);
  await Promise.all(Object.entries(composed.files).map(([path, text]) => ctx.store.putObject(prefix + path, withClock(ctx, path, text), contentTypeOf(path))));
  const [o] = await tx.select({ endpoints: vodOutputs.endpoints }).from(vodOutputs).where(outputWhere(j));
  if (!composed.playable || (o?.endpoints.length ?? 0) > 0) return;
  const master = composed.manifests.find((m) => m.format === 'HLS')?.manifest;
  if (master && manifests.master) await ctx.store.putObject(prefix + master, manifests.master, contentTypeOf(master));
  await announcePlayable(ctx, tx, ids, composed.manifests, sourceMs, and(outputWhere(j), eq(vodOutputs.endpoints, sql`'[]'::jsonb`)));
}

/** Adds what a part has stored to its row while this worker holds it; false when it does not. */
async function recordSegments(tx: Queryable, j: ChunkJob, playlists: PartPlaylists, dash: DashSkeleton | undefined): Promise<boolean> {
  const held = and(partWhere(j), lease.heldBy(PART_LEASE, WORKER_ID));
  const [part] = await tx.select({ segments: vodOutputChunks.segments }).from(vodOutputChunks).where(held);
  if (!part) return false;
  await tx
    .update(vodOutputChunks)
    .set({ segments: mergeSegments(part.segments, playlists), ...(dash ? { dash } : {}) })
    .where(held);
  return true;
}

/** Where a running chunk stores its segments: the output's prefix, its row, and the output's playlists after them. */
export function chunkSink(ctx: PlatformContext, j: ChunkJob, ids: OutputIds, sourceMs: number): ChunkSink {
  const prefix = outputPrefix(j.tenantId, j.assetId, j.outputId);
  return {
    putFile: (path, absolutePath) => ctx.store.putFile(prefix + path, absolutePath, contentTypeOf(path)),
    segments: (playlists, manifests) =>
      ctx.db.transaction(async (tx) => {
        if ((await lockChunked(tx, j)) && (await recordSegments(tx, j, playlists, manifests.dash))) await publishChunked(ctx, tx, j, manifests, ids, sourceMs);
      }),
    failed: (e) => ctx.log.warn({ err: e, assetId: j.assetId, outputId: j.outputId, index: j.index }, 'publishing a chunk failed; the next pass tries again'),
  };
}
