import { and } from 'drizzle-orm';
import type { PlatformContext } from '../../../../context.ts';
import type { Queryable } from '../../../../db/client.ts';
import * as lease from '../../../../db/lease.ts';
import { recordEvent } from '../../../../platform/events.ts';
import { outputWhere, WORKER_ID, type TranscodeJob } from '../outputs.ts';
import { vodOutputChunks, vodOutputs } from '../tables.ts';
import { lockChunked } from './growing.ts';
import { CHUNKED, CHUNKED_LEASE_MS, PART_LEASE, partsOf, partWhere, type ChunkJob } from './parts.ts';

/** The audio part's weight in the output's progress, against the video's 1 (it encodes far faster). */
const AUDIO_WEIGHT = 0.05;
/** The parts' share of the progress; the stitch makes the rest. */
const PARTS_SHARE = 95;
const PROGRESS_EVENT_STEP = 10;
const PROGRESS_WRITE_MS = 1000;

/**
 * The output's progress from its parts' (each weighted by the source time it covers), never falling, with a
 * `vod.output.progress` event on each new step of ten: several workers write it, so the step is decided under the
 * output row's lock, in the transaction that writes it.
 */
export async function combineProgress(tx: Queryable, j: TranscodeJob, sourceMs: number): Promise<void> {
  const [out] = await tx
    .select({ progress: vodOutputs.progressPercent, status: vodOutputs.status, owner: vodOutputs.leaseOwner })
    .from(vodOutputs)
    .where(outputWhere(j))
    .for('update');
  if (!out || out.status !== 'Processing' || out.owner !== CHUNKED) return;
  const parts = await tx.select().from(vodOutputChunks).where(partsOf(j));
  let done = 0;
  let total = 0;
  for (const p of parts) {
    const weight = p.kind === 'audio' ? AUDIO_WEIGHT * sourceMs : Math.max(1, (p.endMs ?? sourceMs) - p.startMs);
    done += weight * (p.status === 'Available' ? 100 : p.progressPercent);
    total += weight;
  }
  const combined = Math.min(PARTS_SHARE, Math.floor(((total > 0 ? done / total : 0) * PARTS_SHARE) / 100));
  if (combined <= out.progress) return;
  await tx
    .update(vodOutputs)
    .set({ progressPercent: combined, ...lease.renew(CHUNKED_LEASE_MS) })
    .where(outputWhere(j));
  const step = Math.floor(combined / PROGRESS_EVENT_STEP) * PROGRESS_EVENT_STEP;
  if (step > Math.floor(out.progress / PROGRESS_EVENT_STEP) * PROGRESS_EVENT_STEP) {
    await recordEvent(tx, j.tenantId, 'vod.output.progress', { id: j.outputId, assetId: j.assetId, progressPercent: step });
  }
}

/** Writes a part's progress (at most once a second, in order) and the output's combined from it. */
export function partProgress(ctx: PlatformContext, j: ChunkJob, sourceMs: number) {
  let chain: Promise<void> = Promise.resolve();
  let last = 0;
  let written = -1;
  return {
    report(percent: number) {
      const now = Date.now();
      if (percent <= written || now - last < PROGRESS_WRITE_MS) return;
      written = percent;
      last = now;
      chain = chain
        .then(() =>
          ctx.db.transaction(async (tx) => {
            // The output row's lock before the part's row, as every transaction of the chunked path takes them (the
            // part's segments and its completion lock the output first): the other order deadlocked with them.
            if (!(await lockChunked(tx, j))) return;
            const rows = await tx
              .update(vodOutputChunks)
              .set({ progressPercent: percent })
              .where(and(partWhere(j), lease.heldBy(PART_LEASE, WORKER_ID)))
              .returning({ index: vodOutputChunks.index });
            if (rows.length) await combineProgress(tx, j, sourceMs);
          }),
        )
        // Progress is a hint: a failed write is not worth failing the part for.
        .catch(() => {});
    },
    settled: () => chain,
  };
}
