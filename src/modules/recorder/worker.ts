import { hostname } from 'node:os';
import { and, eq, inArray, isNotNull, lt, lte, sql } from 'drizzle-orm';
import type { PlatformContext, WorkerStarter } from '../../context.ts';
import * as lease from '../../db/lease.ts';
import { startPeriodic } from '../../platform/periodic.ts';
import { listenForCommits } from '../../platform/wakeup.ts';
import { channelEndpoints } from '../live/index.ts';
import { failArchive, runArchive } from './archive.ts';
import { autoRecordPass } from './autoRecord.ts';
import { ARCHIVE_FALLBACK_S, archiveJob, outputJob, RECORDER_CHANNEL, type ArchiveJob } from './jobs.ts';
import { runOutput } from './outputs.ts';
import { RECORD_LEASE, RECORD_LEASE_MS, recordStep } from './record.ts';
import { deleteRecording, recordRecorderEvent } from './service.ts';
import { archivePrefix, mediaPrefix, outputPrefix, recordingPrefix } from './storageKeys.ts';
import { recorderOutputs, recorderRecordings } from './tables.ts';
import { deleteFilesLater, deleteFilesNow } from '../../platform/storageDeletions.ts';

/** How often the Recorder looks at its schedule: a running recording's copy is at most this far behind the channel. */
const PASS_MS = 1000;
/** Expirations are looked for this often. */
const EXPIRY_MS = 10_000;
const OWNER = `recorder@${hostname()}:${process.pid}:${Math.random().toString(36).slice(2, 8)}`;

const r = recorderRecordings;

/** Pending recordings whose start has come: `Live` while the range runs, `Processing` when it is already over. */
async function begin(ctx: PlatformContext): Promise<void> {
  const due = await ctx.db
    .select({ id: r.id, tenantId: r.tenantId, channelId: r.channelId, end: r.end })
    .from(r)
    .where(and(eq(r.status, 'Pending'), lte(r.start, new Date())))
    .limit(100);
  for (const d of due) {
    const status = d.end && d.end.getTime() <= Date.now() ? 'Processing' : 'Live';
    // The channel's protection as the copy begins: endpoints changed since the recording was created count.
    const channel = await channelEndpoints(ctx, d.tenantId, d.channelId);
    await ctx.db.transaction(async (tx) => {
      const moved = await tx
        .update(r)
        .set({ status, ...(channel ? { drm: channel.drm ?? null } : {}), lastModificationDate: new Date() })
        .where(and(eq(r.id, d.id), eq(r.status, 'Pending')))
        .returning({ id: r.id });
      if (moved.length)
        await recordRecorderEvent(tx, d.tenantId, status === 'Live' ? 'recorder.recording.live' : 'recorder.recording.processing', { id: d.id });
    });
  }
}

/**
 * An archive that became due in this pass is made now (a copy inside the store: seconds even for hours), not after the
 * job queue's poll; its queued job is the fallback should this fail or the process die.
 */
async function archiveNow(ctx: PlatformContext, j: ArchiveJob): Promise<void> {
  await runArchive(ctx, j).catch((err) =>
    ctx.log.warn({ err, recordingId: j.recordingId }, `archive failed in the recorder's pass; its job retries in ${ARCHIVE_FALLBACK_S} s`),
  );
}

/** Claims the recordings being recorded that no live worker holds, and copies what is new of each. */
async function record(ctx: PlatformContext): Promise<void> {
  const mine = await ctx.db
    .update(r)
    .set(lease.take(OWNER, RECORD_LEASE_MS))
    .where(and(inArray(r.status, ['Live', 'Processing']), lease.claimable(RECORD_LEASE, OWNER)))
    .returning();
  await Promise.all(
    mine.map(async (rec) => {
      const due = await recordStep(ctx, rec, OWNER).catch((err) => {
        ctx.log.warn({ err, recordingId: rec.id }, 'recording step failed; retried at the next pass');
        return false;
      });
      if (due) await archiveNow(ctx, { tenantId: rec.tenantId, recordingId: rec.id });
      await removeIfDeleted(ctx, rec);
    }),
  );
}

/**
 * A recording deleted while its step was copying: the delete removed its files, then the step wrote more (segments, its
 * playlists). Those would stay in the store with no row to find them by, so they go now that the step is done.
 */
async function removeIfDeleted(ctx: PlatformContext, rec: { id: string; tenantId: string }): Promise<void> {
  const [kept] = await ctx.db.select({ id: r.id }).from(r).where(eq(r.id, rec.id));
  if (!kept) await ctx.store.deletePrefix(recordingPrefix(rec.tenantId, rec.id));
}

/** Archives whose delay is over are queued (the status change and the job in one transaction), then made. */
async function queueArchives(ctx: PlatformContext): Promise<void> {
  const due = await ctx.db.transaction(async (tx) => {
    const due = await tx
      .update(r)
      .set({ archive: sql`jsonb_set(${r.archive}, '{status}', '"Processing"')`, lastModificationDate: new Date() })
      .where(and(eq(r.status, 'Available'), sql`${r.archive}->>'status' = 'Pending'`, sql`(${r.archive}->>'dueAt')::timestamptz <= now()`))
      .returning({ id: r.id, tenantId: r.tenantId });
    for (const d of due) {
      await recordRecorderEvent(tx, d.tenantId, 'recorder.archive.processing', { id: d.id });
      await ctx.jobs.send(archiveJob, { tenantId: d.tenantId, recordingId: d.id }, { tx, startAfter: ARCHIVE_FALLBACK_S });
    }
    return due;
  });
  for (const d of due) await archiveNow(ctx, { tenantId: d.tenantId, recordingId: d.id });
}

/** Recordings, archives, recorded copies (catch-up) and outputs past their expiration are removed with their files. */
async function expire(ctx: PlatformContext): Promise<void> {
  const now = new Date();
  const gone = await ctx.db
    .select({ id: r.id, tenantId: r.tenantId })
    .from(r)
    .where(and(isNotNull(r.expirationDate), lt(r.expirationDate, now)))
    .limit(100);
  for (const g of gone) await deleteRecording(ctx, g.tenantId, g.id, 'expired').catch(() => {});

  const archives = await ctx.db
    .select({ id: r.id, tenantId: r.tenantId })
    .from(r)
    .where(and(sql`${r.archive}->>'status' = 'Available'`, sql`(${r.archive}->>'expirationDate')::timestamptz < now()`))
    .limit(100);
  for (const a of archives) {
    await ctx.db.transaction(async (tx) => {
      await tx
        .update(r)
        .set({ archive: sql`jsonb_set(${r.archive}, '{status}', '"Finished"')`, lastModificationDate: new Date() })
        .where(eq(r.id, a.id));
      await recordRecorderEvent(tx, a.tenantId, 'recorder.archive.deleted', { id: a.id, reason: 'expired' });
      await deleteFilesLater(tx, [archivePrefix(a.tenantId, a.id)]);
    });
    await deleteFilesNow(ctx, [archivePrefix(a.tenantId, a.id)]);
  }

  const copies = await ctx.db
    .select({ id: r.id, tenantId: r.tenantId })
    .from(r)
    .where(and(eq(r.catchupExpired, false), inArray(r.status, ['Available', 'Error']), lt(r.catchupExpirationTime, now)))
    .limit(100);
  for (const c of copies) {
    await ctx.db.transaction(async (tx) => {
      await tx.update(r).set({ catchupExpired: true, lastModificationDate: new Date() }).where(eq(r.id, c.id));
      await recordRecorderEvent(tx, c.tenantId, 'recorder.catchup.expired', { id: c.id });
      await deleteFilesLater(tx, [mediaPrefix(c.tenantId, c.id)]);
    });
    await deleteFilesNow(ctx, [mediaPrefix(c.tenantId, c.id)]);
  }

  // Each output's row, its event and its files' deletion in one transaction: none of them without the others.
  const expired = and(isNotNull(recorderOutputs.expirationDate), lt(recorderOutputs.expirationDate, now));
  const outputs = await ctx.db
    .select({ id: recorderOutputs.id, recordingId: recorderOutputs.recordingId, tenantId: recorderOutputs.tenantId })
    .from(recorderOutputs)
    .where(expired)
    .limit(100);
  for (const o of outputs) {
    const files = [outputPrefix(o.tenantId, o.recordingId, o.id)];
    const deleted = await ctx.db.transaction(async (tx) => {
      const rows = await tx
        .delete(recorderOutputs)
        .where(and(eq(recorderOutputs.recordingId, o.recordingId), eq(recorderOutputs.id, o.id), expired))
        .returning({ id: recorderOutputs.id });
      if (!rows.length) return false;
      await recordRecorderEvent(tx, o.tenantId, 'recorder.output.deleted', { id: o.id, recordingId: o.recordingId, reason: 'expired' });
      await deleteFilesLater(tx, files);
      return true;
    });
    if (deleted) await deleteFilesNow(ctx, files);
  }
}

/**
 * The Recorder's schedule lives in its rows: one periodic pass (and one at once when a change is notified on
 * RECORDER_CHANNEL) makes and ends the recordings of live sessions with `autoRecord` (autoRecord.ts), starts recordings whose time has come, copies running ones, makes archives whose delay is over
 * and removes what expired. A restart changes nothing: a dead worker's
 * recording is claimed again once its lease runs out.
 */
export const startRecorderWorkers: WorkerStarter = async (ctx) => {
  await ctx.jobs.work(archiveJob, async (j, meta) => {
    try {
      await runArchive(ctx, j);
    } catch (err) {
      if (meta.retryCount >= 3) await failArchive(ctx, j, 'The archive could not be copied');
      throw err;
    }
  });
  await ctx.jobs.work(outputJob, (j) => runOutput(ctx, j), { concurrency: ctx.config.transcodeConcurrency });
  let lastExpiry = 0;
  const pass = startPeriodic(
    'recorder',
    PASS_MS,
    async () => {
      await autoRecordPass(ctx);
      await begin(ctx);
      await record(ctx);
      await queueArchives(ctx);
      if (Date.now() - lastExpiry >= EXPIRY_MS) {
        lastExpiry = Date.now();
        await expire(ctx);
      }
    },
    ctx.log,
  );
  // A recording created (or its source or archive changed) is seen at once, not at the next pass.
  const unlisten = await listenForCommits(ctx, RECORDER_CHANNEL, () => pass.wake());
  return async () => {
    await unlisten();
    await pass.stop();
  };
};
