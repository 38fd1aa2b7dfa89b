import { and, asc, eq, sql } from 'drizzle-orm';
import type { PlatformContext } from '../../../../context.ts';
import type { Queryable } from '../../../../db/client.ts';
import * as lease from '../../../../db/lease.ts';
import type { ChunkSink } from '../../../../media/chunkHls.ts';
import { composeChunkedPlaylists, mergeSegments, type PartPlaylists } from '../../../../media/chunkPlaylists.ts';
import { contentTypeOf } from '../../../../storage/contentTypes.ts';
import { outputPrefix } from '../../storageKeys.ts';
import { outputWhere, WORKER_ID, type TranscodeJob } from '../outputs.ts';
import { announcePlayable } from '../publish.ts';
import { vodOutputChunks, vodOutputs } from '../tables.ts';
import type { OutputIds } from '../upload.ts';
import { CHUNKED, PART_LEASE, partsOf, partWhere, type ChunkJob } from './parts.ts';

/**
 * An output whose chunks write HLS is published as they store their segments (docs/decisions/vod-chunked.md): each
 * chunk records its segments on its row, and the output's media playlists are written from every chunk's, under the
 * output row's lock. Writers take turns, each writing what the rows say after its own: a playlist never shrinks.
 */

const MASTER = 'hls/master.m3u8';

/** Locks the output's row while its parts are out: false once it is finished, failed, deleted or split again. */
export async function lockChunked(tx: Queryable, j: TranscodeJob): Promise<boolean> {
  const [o] = await tx.select({ status: vodOutputs.status, owner: vodOutputs.leaseOwner }).from(vodOutputs).where(outputWhere(j)).for('update');
  return o?.status === 'Processing' && o.owner === CHUNKED;
}

/** Writes the output's playlists from its parts' rows (and, once a player can start, the master and its endpoints). */
export async function publishChunked(ctx: PlatformContext, tx: Queryable, j: ChunkJob, master: string, ids: OutputIds, sourceMs: number): Promise<void> {
  const parts = await tx
    .select({ index: vodOutputChunks.index, segments: vodOutputChunks.segments, status: vodOutputChunks.status })
    .from(vodOutputChunks)
    .where(partsOf(j))
    .orderBy(asc(vodOutputChunks.index));
  // A chunk after an unfinished one changes nothing a player sees.
  if (parts.some((p) => p.index < j.index && p.status !== 'Available')) return;
  const composed = composeChunkedPlaylists(
    master,
    'hls',
    parts.map((p) => ({ playlists: p.segments, done: p.status === 'Available' })),
    ids.preset.segmentSeconds,
  );
  const prefix = outputPrefix(j.tenantId, j.assetId, j.outputId);
  await Promise.all(Object.entries(composed.playlists).map(([path, text]) => ctx.store.putObject(prefix + path, text, contentTypeOf(path))));
  const [o] = await tx.select({ endpoints: vodOutputs.endpoints }).from(vodOutputs).where(outputWhere(j));
  if (!composed.playable || (o?.endpoints.length ?? 0) > 0) return;
  await ctx.store.putObject(prefix + MASTER, master, contentTypeOf(MASTER));
  await announcePlayable(ctx, tx, ids, [{ format: 'HLS', manifest: MASTER }], sourceMs, and(outputWhere(j), eq(vodOutputs.endpoints, sql`'[]'::jsonb`)));
}

/** Adds what a part has stored to its row while this worker holds it; false when it does not. */
async function recordSegments(tx: Queryable, j: ChunkJob, playlists: PartPlaylists): Promise<boolean> {
  const held = and(partWhere(j), lease.heldBy(PART_LEASE, WORKER_ID));
  const [part] = await tx.select({ segments: vodOutputChunks.segments }).from(vodOutputChunks).where(held);
  if (!part) return false;
  await tx
    .update(vodOutputChunks)
    .set({ segments: mergeSegments(part.segments, playlists) })
    .where(held);
  return true;
}

/** Where a running chunk stores its segments: the output's prefix, its row, and the output's playlists after them. */
export function chunkSink(ctx: PlatformContext, j: ChunkJob, ids: OutputIds, sourceMs: number): ChunkSink {
  const prefix = outputPrefix(j.tenantId, j.assetId, j.outputId);
  return {
    putFile: (path, absolutePath) => ctx.store.putFile(prefix + path, absolutePath, contentTypeOf(path)),
    segments: (playlists, master) =>
      ctx.db.transaction(async (tx) => {
        if ((await lockChunked(tx, j)) && (await recordSegments(tx, j, playlists))) await publishChunked(ctx, tx, j, master, ids, sourceMs);
      }),
    failed: (e) => ctx.log.warn({ err: e, assetId: j.assetId, outputId: j.outputId, index: j.index }, 'publishing a chunk failed; the next pass tries again'),
  };
}
