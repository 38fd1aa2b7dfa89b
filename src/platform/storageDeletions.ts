import { and, asc, eq, inArray, lte, sql } from 'drizzle-orm';
import type { PlatformContext } from '../context.ts';
import type { Queryable } from '../db/client.ts';
import { storageDeletions } from '../db/storageDeletions.ts';
import { startPeriodic } from './periodic.ts';

/**
 * How long after a deletion its prefix is deleted again: longer than any worker may go on writing into a prefix whose
 * rows are gone (a transcode notices at its next lease renewal, a few seconds; a recorder pass within its interval).
 */
const SECOND_PASS_MS = 10 * 60_000;

/**
 * Records, in the transaction that deletes their rows, the prefixes whose files go with them. After the commit the
 * caller deletes them at once (`deleteFilesNow`); what that misses (the process stopped, the store failed, a worker
 * wrote on) the sweep deletes.
 */
export async function deleteFilesLater(tx: Queryable, prefixes: string[]): Promise<void> {
  if (prefixes.length === 0) return;
  const dueAt = new Date(Date.now() + SECOND_PASS_MS);
  await tx
    .insert(storageDeletions)
    .values(prefixes.map((prefix) => ({ prefix, dueAt })))
    .onConflictDoUpdate({ target: storageDeletions.prefix, set: { dueAt: sql`excluded.due_at` } });
}

/**
 * In the transaction that creates rows whose files go under these prefixes again (an output added with the id of one
 * deleted minutes ago, which a client may choose): their pending second pass would delete the new files, so it goes.
 */
export async function keepFiles(tx: Queryable, prefixes: string[]): Promise<void> {
  if (prefixes.length > 0) await tx.delete(storageDeletions).where(inArray(storageDeletions.prefix, prefixes));
}

/** Deletes the prefixes' files now; a failure is left to the sweep, whose row the transaction wrote. */
export async function deleteFilesNow(ctx: PlatformContext, prefixes: string[]): Promise<void> {
  for (const prefix of prefixes) {
    await ctx.store.deletePrefix(prefix).catch((err) => ctx.log.warn({ err, prefix }, 'deleting files failed; the sweep deletes them later'));
  }
}

/** Deletes the files of prefixes whose second pass is due, and forgets them. */
export async function sweepStorageDeletions(ctx: PlatformContext, limit = 100): Promise<number> {
  const due = await ctx.db
    .select({ prefix: storageDeletions.prefix })
    .from(storageDeletions)
    .where(lte(storageDeletions.dueAt, sql`now()`))
    .orderBy(asc(storageDeletions.dueAt))
    .limit(limit);
  for (const { prefix } of due) {
    await ctx.store.deletePrefix(prefix);
    // Only while still due: a deletion of the same prefix recorded meanwhile keeps its own later pass.
    await ctx.db.delete(storageDeletions).where(and(eq(storageDeletions.prefix, prefix), lte(storageDeletions.dueAt, sql`now()`)));
  }
  return due.length;
}

/** The sweep of a worker process, every `MEDIAPLANE_SWEEP_INTERVAL_MS`. */
export function startStorageDeletions(ctx: PlatformContext): () => Promise<void> {
  const task = startPeriodic('storage deletions', ctx.config.sweepIntervalMs, () => sweepStorageDeletions(ctx).then(() => {}), ctx.log);
  return () => task.stop();
}
