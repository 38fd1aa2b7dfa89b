import { and, inArray } from 'drizzle-orm';
import type { PlatformContext } from '../../../../context.ts';
import * as lease from '../../../../db/lease.ts';
import { QUEUED, QUEUED_LEASE_MS } from '../outputs.ts';
import { vodOutputChunks } from '../tables.ts';
import { runPart } from './part.ts';
import { chunkJob, PART_LEASE, stitchJob } from './parts.ts';
import { runStitch } from './stitch.ts';

/** Parts whose worker died (claim expired while Processing) are queued again: a dead worker costs its part only. */
export async function sweepChunks(ctx: PlatformContext): Promise<void> {
  const orphans = await ctx.db
    .update(vodOutputChunks)
    .set(lease.take(QUEUED, QUEUED_LEASE_MS))
    .where(and(inArray(vodOutputChunks.status, ['Pending', 'Processing']), lease.expired(PART_LEASE)))
    .returning({ tenantId: vodOutputChunks.tenantId, assetId: vodOutputChunks.assetId, outputId: vodOutputChunks.outputId, index: vodOutputChunks.index });
  for (const o of orphans) await ctx.jobs.send(chunkJob, o);
}

/** The part and stitch workers of a worker process; returns what stops them (their encodes release their claims). */
export async function startChunkWorkers(ctx: PlatformContext): Promise<() => Promise<void>> {
  const stopping = new AbortController();
  const running = new Set<Promise<void>>();
  const track = (run: Promise<void>) => {
    running.add(run);
    return run.finally(() => running.delete(run));
  };
  await ctx.jobs.work(chunkJob, (job) => track(runPart(ctx, job, stopping.signal)), { concurrency: ctx.config.transcodeConcurrency });
  await ctx.jobs.work(stitchJob, (job) => track(runStitch(ctx, job, stopping.signal)), { concurrency: 1 });
  return async () => {
    stopping.abort();
    await Promise.allSettled([...running]);
  };
}
