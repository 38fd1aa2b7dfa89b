import { eq } from 'drizzle-orm';
import type { PlatformContext } from '../../context.ts';
import { CAPTION_TRACK, captionVttKey } from '../../media/live/captions/subtitles.ts';
import { copyObject, eachLimited } from './copy.ts';
import { copiesOf } from './drm.ts';
import type { ArchiveJob } from './jobs.ts';
import { recordedSegments, writePlaylists } from './record.ts';
import { recordRecorderEvent } from './service.ts';
import { archivePrefix, MASTER, mediaPrefix } from './storageKeys.ts';
import { recorderRecordings, type ArchiveRow } from './tables.ts';

const COPY_CONCURRENCY = 16;

async function setArchive(ctx: PlatformContext, j: ArchiveJob, change: Partial<ArchiveRow>, event?: 'recorder.archive.available' | 'recorder.archive.failed') {
  await ctx.db.transaction(async (tx) => {
    const [row] = await tx.select().from(recorderRecordings).where(eq(recorderRecordings.id, j.recordingId)).for('update');
    // Made (or failed) already: by the worker's own pass, or by the fallback job that ran beside it.
    if (!row || row.archive.status !== 'Processing') return;
    await tx
      .update(recorderRecordings)
      .set({ archive: { ...row.archive, ...change }, lastModificationDate: new Date() })
      .where(eq(recorderRecordings.id, j.recordingId));
    if (event) await recordRecorderEvent(tx, j.tenantId, event, { id: j.recordingId, ...(change.errorMessage ? { errorMessage: change.errorMessage } : {}) });
  });
}

/**
 * The archive: the recorded copy copied again, byte for byte, under the recording's archive prefix, with `VOD`
 * playlists; it outlives the catch-up copy and the channel's retention, until `archive.expirationDate`.
 */
export async function runArchive(ctx: PlatformContext, j: ArchiveJob): Promise<void> {
  const [rec] = await ctx.db.select().from(recorderRecordings).where(eq(recorderRecordings.id, j.recordingId));
  if (!rec || rec.archive.status !== 'Processing') return;
  if (rec.catchupExpired) {
    return setArchive(ctx, j, { status: 'Error', errorMessage: 'The recorded media expired before the archive was made' }, 'recorder.archive.failed');
  }
  const from = mediaPrefix(rec.tenantId, rec.id);
  const to = archivePrefix(rec.tenantId, rec.id);
  const rows = await recordedSegments(ctx, rec.id);
  const captions = rows.filter((s) => s.track === CAPTION_TRACK).map((s) => captionVttKey(s.key));
  // Of a DRM recording, each protected endpoint's copies too (drm.ts).
  const keys = [
    ...new Set([...rows.map((s) => s.key), ...rows.map((s) => s.initKey), ...captions].flatMap((k) => copiesOf(rec.drm, k).map((c) => c.to))),
    MASTER,
  ];
  await eachLimited(keys, COPY_CONCURRENCY, async (k) => void (await copyObject(ctx, from + k, to + k)));
  await writePlaylists(ctx, rec, to, [...new Set(rows.map((s) => s.track))], { type: 'VOD', ended: true });
  await setArchive(ctx, j, { status: 'Available', archivisationCompletedDate: new Date().toISOString(), errorMessage: null }, 'recorder.archive.available');
}

export async function failArchive(ctx: PlatformContext, j: ArchiveJob, message: string): Promise<void> {
  await setArchive(ctx, j, { status: 'Error', errorMessage: message }, 'recorder.archive.failed');
}
