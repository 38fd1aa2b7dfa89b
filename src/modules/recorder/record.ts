import { and, asc, eq, gte, inArray } from 'drizzle-orm';
import type { PlatformContext } from '../../context.ts';
import { readObjectIfAny } from '../../storage/readObject.ts';
import * as lease from '../../db/lease.ts';
import { rangeMpd } from '../../media/live/packaging/rangeMpd.ts';
import { MEDIA_CLOCK_PATH } from '../../platform/playback.ts';
import { rangeMediaPlaylist } from '../../media/live/packaging/rangePlaylist.ts';
import { AUDIO_TRACK } from '../../media/live/args.ts';
import { captionRendition, rangeMaster } from '../../media/live/packaging/rangePlaylist.ts';
import { CAPTION_TRACK, captionVttKey, subtitleKey, subtitleMedia } from '../../media/live/captions/subtitles.ts';
import {
  channelMaster,
  channelPrefix,
  channelRunning,
  masterTracks,
  RANGE_SETTLE_MS,
  rangeCaptionPlaylist,
  rangeDashTracks,
  rangeEnded,
  rangeMasterOf,
  rangeSegments,
  type TimelineSegment,
} from '../live/index.ts';
import { copyObject, eachLimited } from './copy.ts';
import { copiesOf, writeProtectedPlaylists } from './drm.ts';
import { ARCHIVE_FALLBACK_S, archiveJob, outputJob } from './jobs.ts';
import { recordRecorderEvent } from './service.ts';
import { MASTER, mediaPrefix, MPD } from './storageKeys.ts';
import { recorderOutputs, recorderRecordings, recorderSegments, type RecordingRow } from './tables.ts';

/** One recording's copy is claimed by one worker at a time; a claim not renewed for this long is taken over. */
export const RECORD_LEASE_MS = 30_000;
export const RECORD_LEASE = { owner: recorderRecordings.leaseOwner, until: recorderRecordings.leaseUntil };
const COPY_CONCURRENCY = 8;
/** The caption rendition of a recording whose channel named none when it began, though captions were recorded. */
const UNNAMED_CAPTIONS = subtitleMedia({ language: 'und', name: 'Captions', segments: () => [] });
/** An open range whose channel stopped ends once nothing new came for this long (its last segments are flushed). */
const OPEN_RANGE_QUIET_MS = 5000;

export type SegmentRow = typeof recorderSegments.$inferSelect;

/**
 * How long each encoder run of a range lasts, by run: its longest track's segments (a run's audio often ends a few ms
 * after its video). The recording lasts their sum: its outputs lay the runs end to end so, every next run starting at
 * the same time in each track (picture and sound together), and with two run changes or more the sum of the runs'
 * longest tracks is longer than any one track's sum.
 */
export function runDurations(rows: Pick<SegmentRow, 'run' | 'track' | 'durationMs'>[], tracks: string[]): Map<number, number> {
  const byRunAndTrack = new Map<string, number>();
  for (const s of rows) {
    if (!tracks.includes(s.track)) continue;
    const key = `${s.run} ${s.track}`;
    byRunAndTrack.set(key, (byRunAndTrack.get(key) ?? 0) + s.durationMs);
  }
  const runs = new Map<number, number>();
  for (const [key, ms] of byRunAndTrack) {
    const run = Number(key.split(' ')[0]);
    runs.set(run, Math.max(runs.get(run) ?? 0, ms));
  }
  return runs;
}

/**
 * The recording's playlists, from what it has copied: `EVENT` (appended to) until recorded, then with the end tag;
 * and its MPD over the same segments, dynamic until recorded, then static.
 */
export async function writePlaylists(ctx: PlatformContext, rec: RecordingRow, prefix: string, tracks: string[], o: { type: 'EVENT' | 'VOD'; ended: boolean }) {
  const rows = await recordedSegments(ctx, rec.id);
  const segmentSeconds = ctx.config.live.segmentSeconds;
  const toRange = (s: SegmentRow) => ({ uri: s.key, initUri: s.initKey, startMs: s.startMs, durationMs: s.durationMs, run: s.run });
  const stored = (await readObjectIfAny(ctx.store, prefix + MASTER))?.toString('utf8');
  const captions = rows.filter((s) => s.track === CAPTION_TRACK);
  // Captions when some were recorded, or, while the range runs, when the channel was captioned as it began (they come
  // seconds after their audio); a range that ended without any lists none.
  const captioned = captions.length > 0 || (!o.ended && !!stored && captionRendition(stored) !== undefined);
  for (const track of tracks) {
    if (track === CAPTION_TRACK) {
      if (!captioned) continue;
      const audio = rows.filter((s) => s.track === AUDIO_TRACK);
      const body = rangeCaptionPlaylist(audio, captions, subtitleKey, { ...o, segmentSeconds });
      await ctx.store.putObject(`${prefix}${track}.m3u8`, body, 'application/vnd.apple.mpegurl');
      continue;
    }
    const body = rangeMediaPlaylist(rows.filter((s) => s.track === track).map(toRange), { ...o, segmentSeconds });
    await ctx.store.putObject(`${prefix}${track}.m3u8`, body, 'application/vnd.apple.mpegurl');
  }
  if (!stored) return;
  const master = rangeMaster(stored, captioned ? (captionRendition(stored) ?? UNNAMED_CAPTIONS) : undefined);
  if (master !== stored) await ctx.store.putObject(prefix + MASTER, master, 'application/vnd.apple.mpegurl');
  if (rows.length === 0) return writeProtectedPlaylists(ctx, rec, prefix, tracks);
  const dashTracks = await rangeDashTracks(
    master,
    rows.map((s) => ({ ...toRange(s), track: s.track, sequence: s.sequence })),
    (uri) => readObjectIfAny(ctx.store, prefix + uri),
  );
  const mpd = rangeMpd(dashTracks, {
    type: o.ended ? 'static' : 'dynamic',
    segmentSeconds,
    now: Date.now(),
    // Stored as a file: the player asks the delivery's public clock for the time (the MPD's own address may need a
    // playback token, which a clock URL written here cannot carry).
    clock: { isoUrl: ctx.config.publicUrl.origin + MEDIA_CLOCK_PATH },
  });
  await ctx.store.putObject(prefix + MPD, mpd, 'application/dash+xml');
  await writeProtectedPlaylists(ctx, rec, prefix, tracks);
}

export const recordedSegments = (ctx: PlatformContext, recordingId: string): Promise<SegmentRow[]> =>
  ctx.db
    .select()
    .from(recorderSegments)
    .where(eq(recorderSegments.recordingId, recordingId))
    .orderBy(asc(recorderSegments.track), asc(recorderSegments.startMs));

/** The tracks of a recording: the variants of the master playlist copied with its first segments. */
async function recordedTracks(ctx: PlatformContext, rec: RecordingRow): Promise<string[]> {
  const rows = await ctx.db.selectDistinct({ track: recorderSegments.track }).from(recorderSegments).where(eq(recorderSegments.recordingId, rec.id));
  return rows.map((r) => r.track);
}

/**
 * Copies what the channel's timeline has of the range since the last pass (segments, their init segments, the master
 * playlist), rewrites the recording's playlists, and finishes the recording once its range is over. Run by the worker
 * that holds the recording's lease. True when the recording became Available with its archive due now (the caller makes it).
 */
export async function recordStep(ctx: PlatformContext, rec: RecordingRow, owner: string): Promise<boolean> {
  const held = and(eq(recorderRecordings.id, rec.id), lease.heldBy(RECORD_LEASE, owner));
  const now = Date.now();
  const startMs = rec.start.getTime();
  const endMs = rec.end?.getTime();
  if (rec.status === 'Live' && endMs !== undefined && now >= endMs) {
    await ctx.db.transaction(async (tx) => {
      const moved = await tx
        .update(recorderRecordings)
        .set({ status: 'Processing', lastModificationDate: new Date() })
        .where(held)
        .returning({ id: recorderRecordings.id });
      if (moved.length) await recordRecorderEvent(tx, rec.tenantId, 'recorder.recording.processing', { id: rec.id });
    });
  }
  if (endMs !== undefined) await trimPastEnd(ctx, rec, endMs);
  const timeline = await rangeSegments(ctx, rec.tenantId, rec.channelId, startMs, endMs);
  const fresh = timeline.filter((s) => s.sequence > (rec.copied[s.track] ?? -1));
  const prefix = mediaPrefix(rec.tenantId, rec.id);
  let tracks = await recordedTracks(ctx, rec);
  if (fresh.length > 0) {
    const channel = await channelMaster(ctx, rec.tenantId, rec.channelId);
    if (channel) {
      // The channel's master names its variants relatively: the copy's playlists have the same names. Its caption
      // rendition is kept when the range has captions (writePlaylists drops it if none are recorded by the end).
      if (tracks.length === 0) {
        const master = await rangeMasterOf(ctx, rec.tenantId, rec.channelId, startMs, endMs, channel);
        await ctx.store.putObject(prefix + MASTER, master, 'application/vnd.apple.mpegurl');
      }
      tracks = [...masterTracks(rangeMaster(channel, undefined)), CAPTION_TRACK];
    }
    const from = channelPrefix(rec.tenantId, rec.channelId);
    const inits = [...new Set(fresh.map((s) => s.initKey))];
    const missingInits = new Set<string>();
    await eachLimited(inits, COPY_CONCURRENCY, async (k) => {
      if (await ctx.store.head(prefix + k)) return;
      // Gone with the channel's retention: its segments cannot play; they are left out (a gap).
      for (const c of copiesOf(rec.drm, k, k.startsWith(`${CAPTION_TRACK}/`)))
        await copyObject(ctx, from + c.from, prefix + c.to).catch(() => missingInits.add(k));
    });
    const sizes = new Map<TimelineSegment, number>();
    const copied: TimelineSegment[] = [];
    await eachLimited(
      fresh.filter((s) => !missingInits.has(s.initKey)),
      COPY_CONCURRENCY,
      async (s) => {
        try {
          // Of a DRM channel, each protected endpoint's encrypted copy too (drm.ts); the size is the clear one's.
          const caption = s.track === CAPTION_TRACK;
          const copy = (k: string) => Promise.all(copiesOf(rec.drm, k, caption).map((c) => copyObject(ctx, from + c.from, prefix + c.to))).then((n) => n[0]!);
          let size = await copy(s.key);
          // A caption segment is its wvtt (DASH) and its WebVTT (HLS).
          if (caption) size += await copy(captionVttKey(s.key));
          sizes.set(s, size);
          copied.push(s);
        } catch (err) {
          // Gone past the channel's retention meanwhile: the recording has a gap rather than no end.
          ctx.log.warn({ err, recordingId: rec.id, key: s.key }, 'a segment of a recording could not be copied');
        }
      },
    );
    const watermark = { ...rec.copied };
    for (const s of fresh) watermark[s.track] = Math.max(watermark[s.track] ?? -1, s.sequence);
    await ctx.db.transaction(async (tx) => {
      if (copied.length)
        await tx
          .insert(recorderSegments)
          .values(
            copied.map((s) => ({
              recordingId: rec.id,
              track: s.track,
              sequence: s.sequence,
              key: s.key,
              initKey: s.initKey,
              startMs: s.startMs,
              durationMs: s.durationMs,
              run: s.run,
              size: sizes.get(s) ?? 0,
            })),
          )
          .onConflictDoNothing();
      await tx.update(recorderRecordings).set({ copied: watermark, recordedAt: new Date() }).where(held);
    });
    rec.copied = watermark;
    rec.recordedAt = new Date();
  }
  // An open range whose channel runs but has made nothing of it yet: the stop that follows must end it too (as one with
  // nothing recorded), not leave it Live for good.
  if (endMs === undefined && rec.recordedAt === null && (await channelRunning(ctx, rec.tenantId, rec.channelId))) {
    rec.recordedAt = new Date();
    await ctx.db.update(recorderRecordings).set({ recordedAt: rec.recordedAt }).where(held);
  }
  // Captions come seconds after their audio: the range never waits for them (one not yet made is left out).
  const media = tracks.filter((t) => t !== CAPTION_TRACK);
  const over =
    endMs !== undefined
      ? (media.length ? media : [undefined]).every((t) => rangeEnded(t ? timeline.filter((s) => s.track === t) : timeline, endMs, now)) ||
        // A channel that is not running adds nothing more: a range that ended is over.
        (now >= endMs && !(await channelRunning(ctx, rec.tenantId, rec.channelId)))
      : // An open range ends once its channel stopped (nothing new for a few seconds after something was recorded).
        rec.recordedAt !== null &&
        fresh.length === 0 &&
        (now - rec.recordedAt.getTime() > RANGE_SETTLE_MS ||
          (now - rec.recordedAt.getTime() > OPEN_RANGE_QUIET_MS && !(await channelRunning(ctx, rec.tenantId, rec.channelId))));
  if (fresh.length > 0 || over) await writePlaylists(ctx, rec, prefix, tracks, { type: 'EVENT', ended: over });
  return over ? finish(ctx, rec, owner, media) : false;
}

/**
 * An open range given its end while it was recorded (an automatic recording: its session ended, autoRecord.ts) may have
 * copied segments that begin at or after that end (the input-loss picture of the reconnect window): they go, rows and
 * files, so that the recording is its range and no more.
 */
async function trimPastEnd(ctx: PlatformContext, rec: RecordingRow, endMs: number): Promise<void> {
  const gone = await ctx.db
    .delete(recorderSegments)
    .where(and(eq(recorderSegments.recordingId, rec.id), gte(recorderSegments.startMs, endMs)))
    .returning({ key: recorderSegments.key, track: recorderSegments.track });
  if (!gone.length) return;
  const prefix = mediaPrefix(rec.tenantId, rec.id);
  await eachLimited(gone, COPY_CONCURRENCY, async (g) => {
    const caption = g.track === CAPTION_TRACK;
    const keys = [g.key, ...(caption ? [captionVttKey(g.key)] : [])];
    for (const k of keys) for (const c of copiesOf(rec.drm, k, caption)) await ctx.store.delete(prefix + c.to).catch(() => {});
  });
}

/**
 * The range is over: Available with what was recorded (outputs queued, archive scheduled), or Error if nothing was.
 * True when the archive is due now.
 */
async function finish(ctx: PlatformContext, rec: RecordingRow, owner: string, tracks: string[]): Promise<boolean> {
  const rows = await recordedSegments(ctx, rec.id);
  const held = and(eq(recorderRecordings.id, rec.id), lease.heldBy(RECORD_LEASE, owner));
  return ctx.db.transaction(async (tx) => {
    if (rows.length === 0) {
      const retention = ctx.config.live.retentionSeconds;
      const lost = rec.start.getTime() < Date.now() - retention * 1000;
      const errorMessage = lost
        ? `Nothing was recorded: the channel has no output for the range: it was off, or the range is older than the channel's retention window (the last ${retention} s)`
        : 'Nothing was recorded: the channel produced no output during the range (it was off)';
      const done = await tx
        .update(recorderRecordings)
        .set({ status: 'Error', errorMessage, ...lease.release(), lastModificationDate: new Date() })
        .where(held)
        .returning({ id: recorderRecordings.id });
      if (!done.length) return false;
      await recordRecorderEvent(tx, rec.tenantId, 'recorder.recording.failed', { id: rec.id, errorMessage });
      const failed = await tx
        .update(recorderOutputs)
        .set({ status: 'Error', errorMessage })
        .where(eq(recorderOutputs.recordingId, rec.id))
        .returning({ id: recorderOutputs.id });
      for (const o of failed) await recordRecorderEvent(tx, rec.tenantId, 'recorder.output.failed', { id: o.id, recordingId: rec.id, errorMessage });
      return false;
    }
    // The runs' durations end to end, as the outputs lay them (`runDurations`).
    const durationMilliseconds = [...runDurations(rows, tracks.length ? tracks : [rows[0]!.track]).values()].reduce((a, ms) => a + ms, 0);
    const end = rec.end ?? new Date(Math.max(...rows.map((s) => s.startMs + s.durationMs)));
    const archive = { ...rec.archive };
    // An archive already due (no delay, or a range that ended long ago) is queued now, not at the next pass.
    let archiveNow = false;
    if (archive.enabled) {
      archive.dueAt = new Date(end.getTime() + archive.delaySeconds * 1000).toISOString();
      archiveNow = Date.parse(archive.dueAt) <= Date.now();
      archive.status = archiveNow ? 'Processing' : 'Pending';
    }
    const done = await tx
      .update(recorderRecordings)
      .set({ status: 'Available', errorMessage: null, durationMilliseconds, archive, ...lease.release(), lastModificationDate: new Date() })
      .where(held)
      .returning({ id: recorderRecordings.id });
    if (!done.length) return false;
    await recordRecorderEvent(tx, rec.tenantId, 'recorder.recording.available', { id: rec.id, durationMilliseconds });
    if (archiveNow) {
      await recordRecorderEvent(tx, rec.tenantId, 'recorder.archive.processing', { id: rec.id });
      await ctx.jobs.send(archiveJob, { tenantId: rec.tenantId, recordingId: rec.id }, { tx, startAfter: ARCHIVE_FALLBACK_S });
    }
    const queued = await tx
      .update(recorderOutputs)
      .set({ status: 'Queued' })
      .where(and(eq(recorderOutputs.recordingId, rec.id), inArray(recorderOutputs.status, ['Pending'])))
      .returning({ id: recorderOutputs.id });
    for (const o of queued) await ctx.jobs.send(outputJob, { tenantId: rec.tenantId, recordingId: rec.id, outputId: o.id }, { tx });
    return archiveNow;
  });
}
