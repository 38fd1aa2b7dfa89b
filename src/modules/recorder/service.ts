import { and, count, eq, gt, inArray, isNull, lt, or, sql } from 'drizzle-orm';
import type { Static } from 'typebox';
import type { PlatformContext } from '../../context.ts';
import type { Queryable } from '../../db/client.ts';
import { overlayProblems, type Overlay } from '../../media/overlays.ts';
import { ApiError, conflict, fieldPath, notFound, validationError, type FieldError } from '../../platform/errors.ts';
import { recordEvent } from '../../platform/events.ts';
import { arrayParam, dateRange, hasAllAttributes, hasAllTags, oneOf, textSearch } from '../../platform/filters.ts';
import { isUuid, newId } from '../../platform/ids.ts';
import { multiDelete } from '../../platform/multiDelete.ts';
import { envelope, orderBy, pageWindow, type PageRequest } from '../../platform/paging.ts';
import { channelEndpoints, channelsWithDash, retainedSince } from '../live/index.ts';
import { presetById } from '../transcoder/index.ts';
import type { RecorderEventType } from './eventTypes.ts';
import { outputJob, RECORDER_CHANNEL } from './jobs.ts';
import { presentRecording, presentSummary } from './present.ts';
import type * as s from './schemas.ts';
import { outputPrefix, recordingPrefix } from './storageKeys.ts';
import { recorderOutputs, recorderRecordings, type ArchiveRow, type RecordingStatus } from './tables.ts';
import { deleteFilesLater, deleteFilesNow, keepFiles } from '../../platform/storageDeletions.ts';

type CreateBody = Static<typeof s.RecordingCreate>;
type PatchBody = Static<typeof s.RecordingPatch>;
type ListQuery = Static<typeof s.RecordingListQuery>;
type OutputBody = Static<typeof s.OutputCreate>;

/** The catch-up address (and the recorded copy behind it) lives this long after the range ends (spec: typically 14 days). */
export const CATCHUP_DAYS = 14;
const STATUSES: readonly RecordingStatus[] = ['Pending', 'Live', 'Processing', 'Available', 'Error'];

/** Wakes the Recorder's workers when `tx` commits: the schedule changed (they would otherwise see it at their next pass). */
export const wakeRecorder = (tx: Queryable) => tx.execute(sql`select pg_notify(${RECORDER_CHANNEL}, '')`);

export const recordRecorderEvent = (tx: Queryable, tenantId: string, type: RecorderEventType, data: { id: string } & Record<string, unknown>) =>
  recordEvent(tx, tenantId, type, data);

function requirePreset(id: string, field: string) {
  const preset = presetById(id);
  if (!preset)
    throw new ApiError(400, 'preset_not_found', `Preset "${id}" does not exist; see GET /transcoder/v1/presets`, [{ field, message: 'unknown preset' }]);
  return preset;
}

function checkOverlays(overlays: Overlay[] | undefined, field: string): Overlay[] {
  const problems = overlayProblems(overlays ?? [], field);
  if (problems.length) throw new ApiError(400, 'validation_failed', problems.map((p) => `${p.field}: ${p.message}`).join('; '), problems);
  return overlays ?? [];
}

const future = (value: string | undefined, field: string): Date | null => {
  if (value === undefined) return null;
  const d = new Date(value);
  if (d.getTime() <= Date.now()) throw validationError(field, 'must be in the future');
  return d;
};

/** The range asked for: `start` defaults to now; `end`, when given, is after `start`. */
async function checkSource(ctx: PlatformContext, tenantId: string, d: { channelId: string; start?: string; end?: string }, field: string) {
  const start = d.start ? new Date(d.start) : new Date();
  const end = d.end ? new Date(d.end) : null;
  if (end && end.getTime() <= start.getTime()) throw validationError(`${field}.end`, 'must be after start');
  const channelId = d.channelId.toLowerCase();
  const channel = await channelEndpoints(ctx, tenantId, channelId);
  if (!channel) throw notFound('channel_not_found', 'Live channel', d.channelId);
  if (end && end.getTime() <= Date.now()) await checkRetained(ctx, tenantId, channelId, end, `${field}.end`);
  // Of a DRM channel, the recording copies the protected endpoints' encrypted files too and plays only those.
  return { channelId, start, end, drm: channel.drm ?? null };
}

/**
 * A range that ended before the channel's retained timeline begins has nothing left to record: refused now rather than
 * accepted and turned `Error` later. Ranges that end later (also in the future) are recorded from what is kept.
 */
async function checkRetained(ctx: PlatformContext, tenantId: string, channelId: string, end: Date, field: string): Promise<void> {
  const since = await retainedSince(ctx, tenantId, channelId);
  if (since !== undefined && end.getTime() > since) return;
  const retention = `channels keep the last MEDIAPLANE_LIVE_RETENTION_SECONDS = ${ctx.config.live.retentionSeconds} s of their timeline`;
  const message =
    since === undefined
      ? `the range ended at ${end.toISOString()} and the channel holds no segments (${retention})`
      : `the range ended at ${end.toISOString()}, before the channel's retained timeline begins at ${new Date(since).toISOString()} (${retention})`;
  throw new ApiError(400, 'range_not_retained', `${field}: ${message}`, [{ field, message }]);
}

const catchupExpiration = (start: Date, end: Date | null) => new Date(Math.max(Date.now(), (end ?? start).getTime()) + CATCHUP_DAYS * 86400_000);

/**
 * `claim`, run first in the creating transaction: the recording is made only if it answers true (an automatic
 * recording claims its session there, so that two workers never record one session twice).
 */
export async function createRecording(
  ctx: PlatformContext,
  tenantId: string,
  body: CreateBody,
  opts: { claim?: (tx: Queryable, recordingId: string) => Promise<boolean> } = {},
): Promise<{ id: string }> {
  const { channelId, start, end, drm } = await checkSource(ctx, tenantId, body.source.liveChannelDetails, 'source.liveChannelDetails');
  const requested = [...(body.outputs ?? []).map((o, i) => ({ o, field: `outputs[${i}]` })), ...(body.output ? [{ o: body.output, field: 'output' }] : [])];
  const overlays = checkOverlays(body.overlays, 'overlays');
  const outputs = requested.map(({ o, field }) => {
    const preset = requirePreset(o.preset, `${field}.preset`);
    if (overlays.length && preset.noTranscoding) throw validationError('overlays', `cannot be burned in by preset "${preset.id}", which does not transcode`);
    return { preset: preset.id, expirationDate: future(o.expirationDate, `${field}.expirationDate`) };
  });
  const expirationDate = future(body.expirationDate, 'expirationDate');
  const archiveExpiration = future(body.archive?.expirationDate, 'archive.expirationDate');
  const archive: ArchiveRow = {
    enabled: body.archive?.enabled ?? false,
    delaySeconds: body.archive?.delaySeconds ?? 0,
    public: body.archive?.public ?? false,
    expirationDate: archiveExpiration?.toISOString() ?? null,
    status: null,
    dueAt: null,
    archivisationCompletedDate: null,
  };
  const id = newId();
  await ctx.db.transaction(async (tx) => {
    if (opts.claim && !(await opts.claim(tx, id))) return;
    await tx.insert(recorderRecordings).values({
      id,
      tenantId,
      channelId,
      sourceType: body.source.type ?? 'LiveChannel',
      start,
      end,
      title: body.title ?? null,
      metadata: body.metadata ?? {},
      tags: body.tags ?? [],
      attributes: body.attributes ?? [],
      status: 'Pending',
      catchupEnabled: body.catchup?.enabled ?? false,
      catchupExpirationTime: catchupExpiration(start, end),
      archive,
      expirationDate,
      overlays,
      accessPolicyId: body.distributionInfo?.accessPolicyId ?? null,
      drm,
    });
    await recordRecorderEvent(tx, tenantId, 'recorder.recording.created', { id, channelId, status: 'Pending' });
    await wakeRecorder(tx);
    for (const o of outputs) {
      const outputId = newId();
      await tx.insert(recorderOutputs).values({ recordingId: id, id: outputId, tenantId, preset: o.preset, overlays, expirationDate: o.expirationDate });
      await recordRecorderEvent(tx, tenantId, 'recorder.output.created', { id: outputId, recordingId: id, preset: o.preset });
    }
  });
  return { id };
}

export async function recordingRow(db: Queryable, tenantId: string, id: string, lock = false) {
  if (!isUuid(id)) throw notFound('recording_not_found', 'Recording', id);
  const q = db
    .select()
    .from(recorderRecordings)
    .where(and(eq(recorderRecordings.tenantId, tenantId), eq(recorderRecordings.id, id.toLowerCase())));
  const [row] = lock ? await q.for('update') : await q;
  if (!row) throw notFound('recording_not_found', 'Recording', id);
  return row;
}

export async function getRecording(ctx: PlatformContext, tenantId: string, id: string) {
  const row = await recordingRow(ctx.db, tenantId, id);
  const outputs = await ctx.db.select().from(recorderOutputs).where(eq(recorderOutputs.recordingId, row.id));
  const dash = (await channelsWithDash(ctx, tenantId, [row.channelId])).has(row.channelId);
  return presentRecording(ctx.config, row, outputs, dash);
}

const SORTS = {
  CreateDate: recorderRecordings.createDate,
  LastModificationDate: recorderRecordings.lastModificationDate,
  Id: recorderRecordings.id,
  Title: recorderRecordings.title,
  'Metadata.Title': sql`coalesce(${recorderRecordings.metadata}->>'title', ${recorderRecordings.title})`,
  Status: recorderRecordings.status,
  'Source.LiveChannelDetails.Start': recorderRecordings.start,
  'Source.LiveChannelDetails.End': recorderRecordings.end,
  'Source.LiveChannelDetails.ChannelId': recorderRecordings.channelId,
  DurationMilliseconds: recorderRecordings.durationMilliseconds,
};

export async function listRecordings(ctx: PlatformContext, tenantId: string, q: ListQuery) {
  const r = recorderRecordings;
  const ids = arrayParam(q.ids);
  if (ids.some((id) => !isUuid(id))) throw validationError('ids', 'every id must be a uuid');
  const channels = [...arrayParam(q.channels), ...(q.channelId ? [q.channelId] : [])];
  if (channels.some((c) => !isUuid(c))) throw validationError('channels', 'every channel id must be a uuid');
  const statuses = arrayParam(q.statuses).map((status) => oneOf('statuses', status, STATUSES));
  const where = and(
    eq(r.tenantId, tenantId),
    ids.length
      ? inArray(
          r.id,
          ids.map((i) => i.toLowerCase()),
        )
      : undefined,
    channels.length
      ? inArray(
          r.channelId,
          channels.map((c) => c.toLowerCase()),
        )
      : undefined,
    statuses.length ? inArray(r.status, statuses) : undefined,
    // searchStart/searchEnd: recordings whose range overlaps them (an open range runs on).
    q.searchEnd ? lt(r.start, new Date(q.searchEnd)) : undefined,
    q.searchStart ? or(isNull(r.end), gt(r.end, new Date(q.searchStart))) : undefined,
    dateRange(r.createDate, q.createDateStart, q.createDateEnd),
    dateRange(r.lastModificationDate, q.lastModificationDateStart, q.lastModificationDateEnd),
    hasAllTags(r.tags, q.tags),
    hasAllAttributes(r.attributes, q.attributes),
    textSearch(q.query, r.title, sql`${r.metadata}::text`),
  );
  const { limit, offset } = pageWindow(q);
  const [rows, [{ total }]] = await Promise.all([
    ctx.db
      .select()
      .from(r)
      .where(where)
      .orderBy(...orderBy(q, SORTS, 'CreateDate', r.id))
      .limit(limit)
      .offset(offset),
    ctx.db.select({ total: count() }).from(r).where(where),
  ]);
  return envelope(rows.map(presentSummary), total, q as PageRequest);
}

export async function updateRecording(ctx: PlatformContext, tenantId: string, id: string, patch: PatchBody) {
  const source = patch.source ? await checkSource(ctx, tenantId, patch.source.liveChannelDetails, 'source.liveChannelDetails') : undefined;
  const row = await ctx.db.transaction(async (tx) => {
    const before = await recordingRow(tx, tenantId, id, true);
    if (source && before.status !== 'Pending') {
      throw conflict('recording_not_pending', `The source of recording ${before.id} can only change while it is Pending; it is ${before.status}`);
    }
    const archive = { ...before.archive };
    if (patch.archive?.public !== undefined) archive.public = patch.archive.public;
    if (patch.archive?.delaySeconds !== undefined) archive.delaySeconds = patch.archive.delaySeconds;
    if (patch.archive?.enabled !== undefined) archive.enabled = patch.archive.enabled;
    // Enabled (or delayed) after the recording was recorded: the archive is due from the recording's end.
    if (archive.enabled && before.status === 'Available' && (archive.status === null || archive.status === 'Pending')) {
      archive.status = 'Pending';
      archive.dueAt = new Date((before.end ?? before.recordedAt ?? new Date()).getTime() + archive.delaySeconds * 1000).toISOString();
    }
    if (!archive.enabled && archive.status === 'Pending') archive.status = null;
    const [after] = await tx
      .update(recorderRecordings)
      .set({
        ...(source
          ? {
              channelId: source.channelId,
              start: source.start,
              end: source.end,
              sourceType: patch.source!.type,
              catchupExpirationTime: catchupExpiration(source.start, source.end),
              drm: source.drm,
            }
          : {}),
        ...(patch.catchup?.enabled !== undefined ? { catchupEnabled: patch.catchup.enabled } : {}),
        archive,
        ...(patch.title !== undefined ? { title: patch.title } : {}),
        ...(patch.metadata !== undefined ? { metadata: patch.metadata } : {}),
        ...(patch.tags !== undefined ? { tags: patch.tags } : {}),
        ...(patch.attributes !== undefined ? { attributes: patch.attributes } : {}),
        lastModificationDate: new Date(),
      })
      .where(eq(recorderRecordings.id, before.id))
      .returning();
    await recordRecorderEvent(tx, tenantId, 'recorder.recording.updated', { id: before.id });
    if (source || patch.archive) await wakeRecorder(tx);
    return after!;
  });
  return presentSummary(row);
}

/** Deletes the recording and every file it has (copy, archive, outputs). */
export async function deleteRecording(ctx: PlatformContext, tenantId: string, id: string, reason?: 'expired'): Promise<void> {
  const row = await ctx.db.transaction(async (tx) => {
    const r = await recordingRow(tx, tenantId, id, true);
    await tx.delete(recorderRecordings).where(eq(recorderRecordings.id, r.id));
    await recordRecorderEvent(tx, tenantId, reason === 'expired' ? 'recorder.recording.expired' : 'recorder.recording.deleted', { id: r.id });
    await deleteFilesLater(tx, [recordingPrefix(tenantId, r.id)]);
    return r;
  });
  await deleteFilesNow(ctx, [recordingPrefix(tenantId, row.id)]);
}

export const deleteRecordings = (ctx: PlatformContext, tenantId: string, ids: string[]) => multiDelete(ids, (id) => deleteRecording(ctx, tenantId, id));

export async function addOutput(ctx: PlatformContext, tenantId: string, recordingId: string, body: OutputBody) {
  const preset = requirePreset(body.preset, 'preset');
  const overlays = checkOverlays(body.overlays, 'overlays');
  if (overlays.length && preset.noTranscoding) throw validationError('overlays', `cannot be burned in by preset "${preset.id}", which does not transcode`);
  const expirationDate = future(body.expirationDate, 'expirationDate');
  const outputId = body.id ?? newId();
  await ctx.db.transaction(async (tx) => {
    const r = await recordingRow(tx, tenantId, recordingId, true);
    if (r.status === 'Error') throw conflict('recording_failed', `Recording ${r.id} failed: ${r.errorMessage ?? 'nothing was recorded'}`);
    if (r.catchupExpired) throw conflict('recording_media_expired', `The recorded media of recording ${r.id} expired; no output can be made from it`);
    const [existing] = await tx
      .select({ id: recorderOutputs.id })
      .from(recorderOutputs)
      .where(and(eq(recorderOutputs.recordingId, r.id), eq(recorderOutputs.id, outputId)));
    if (existing) throw conflict('output_exists', `Recording ${r.id} already has an output ${outputId}`);
    const ready = r.status === 'Available';
    await keepFiles(tx, [outputPrefix(tenantId, r.id, outputId)]);
    await tx.insert(recorderOutputs).values({
      recordingId: r.id,
      id: outputId,
      tenantId,
      preset: preset.id,
      overlays: overlays.length ? overlays : r.overlays,
      expirationDate,
      status: ready ? 'Queued' : 'Pending',
    });
    if (ready) await ctx.jobs.send(outputJob, { tenantId, recordingId: r.id, outputId }, { tx });
    await tx.update(recorderRecordings).set({ lastModificationDate: new Date() }).where(eq(recorderRecordings.id, r.id));
    await recordRecorderEvent(tx, tenantId, 'recorder.output.created', { id: outputId, recordingId: r.id, preset: preset.id });
  });
  return envelope([{ id: outputId }], 1, { page: 1, limit: 100 } as PageRequest);
}

export async function removeOutput(ctx: PlatformContext, tenantId: string, recordingId: string, outputId: string): Promise<void> {
  const r = await ctx.db.transaction(async (tx) => {
    const rec = await recordingRow(tx, tenantId, recordingId);
    const rows = await tx
      .delete(recorderOutputs)
      .where(and(eq(recorderOutputs.recordingId, rec.id), eq(recorderOutputs.id, outputId)))
      .returning({ id: recorderOutputs.id });
    if (!rows.length) throw notFound('output_not_found', 'Output', outputId);
    await tx.update(recorderRecordings).set({ lastModificationDate: new Date() }).where(eq(recorderRecordings.id, rec.id));
    await recordRecorderEvent(tx, tenantId, 'recorder.output.deleted', { id: outputId, recordingId: rec.id });
    await deleteFilesLater(tx, [outputPrefix(tenantId, rec.id, outputId)]);
    return rec;
  });
  await deleteFilesNow(ctx, [outputPrefix(tenantId, r.id, outputId)]);
}

export async function outputProgress(ctx: PlatformContext, tenantId: string, recordingId: string, outputId: string) {
  if (!isUuid(recordingId)) throw notFound('recording_not_found', 'Recording', recordingId);
  const [row] = await ctx.db
    .select({ progressPercent: recorderOutputs.progressPercent })
    .from(recorderOutputs)
    .where(and(eq(recorderOutputs.tenantId, tenantId), eq(recorderOutputs.recordingId, recordingId.toLowerCase()), eq(recorderOutputs.id, outputId)));
  if (!row) {
    await recordingRow(ctx.db, tenantId, recordingId);
    throw notFound('output_not_found', 'Output', outputId);
  }
  return row;
}

/** Every recording and output asked for is answered in order; an id the tenant does not have is a 404 naming it (as VOD). */
export async function outputsProgress(ctx: PlatformContext, tenantId: string, wanted: { id: string; outputs: { id: string }[] }[]) {
  const ids = wanted.map((w) => w.id.toLowerCase()).filter(isUuid);
  const [rows, recordings] = ids.length
    ? await Promise.all([
        ctx.db
          .select({ recordingId: recorderOutputs.recordingId, id: recorderOutputs.id, progressPercent: recorderOutputs.progressPercent })
          .from(recorderOutputs)
          .where(and(eq(recorderOutputs.tenantId, tenantId), inArray(recorderOutputs.recordingId, ids))),
        ctx.db
          .select({ id: recorderRecordings.id })
          .from(recorderRecordings)
          .where(and(eq(recorderRecordings.tenantId, tenantId), inArray(recorderRecordings.id, ids))),
      ])
    : [[], []];
  const known = new Set(recordings.map((r) => r.id));
  const missing: FieldError[] = [];
  const answer = wanted.map((w, i) => {
    const id = w.id.toLowerCase();
    if (!known.has(id)) {
      missing.push({ field: fieldPath([i, 'id']), message: `Recording ${w.id} was not found` });
      return { id: w.id, outputs: [] };
    }
    const outputs = w.outputs.map((o, j) => {
      const row = rows.find((r) => r.recordingId === id && r.id === o.id);
      if (!row) missing.push({ field: fieldPath([i, 'outputs', j, 'id']), message: `Recording ${w.id} has no output ${o.id}` });
      return { id: o.id, progressPercent: row?.progressPercent ?? 0 };
    });
    return { id: w.id, outputs };
  });
  if (missing.length) {
    const code = missing.some((m) => !m.field.includes('outputs')) ? 'recording_not_found' : 'output_not_found';
    throw new ApiError(404, code, missing.map((m) => m.message).join('; '), missing);
  }
  return answer;
}
