import { mkdir, open, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { and, eq, inArray, sql } from 'drizzle-orm';
import type { PlatformContext } from '../../context.ts';
import { listFiles } from '../../media/files.ts';
import type { Overlay, PlacedOverlay } from '../../media/overlays.ts';
import { transcode, type SourceTrack } from '../../media/transcode.ts';
import { downloadToFile } from '../../platform/download.ts';
import { presetById } from '../transcoder/index.ts';
import { outputProtection } from './drm.ts';
import type { OutputJob } from './jobs.ts';
import { recordedSegments, runDurations, type SegmentRow } from './record.ts';
import { recordRecorderEvent } from './service.ts';
import { mediaPrefix, outputPrefix, recordingUrl } from './storageKeys.ts';
import { recorderOutputs, recorderRecordings, type EndpointRow } from './tables.ts';

const OVERLAY_MAX_BYTES = 64 * 1024 * 1024;
/** The output row's progress is written at most this often. */
const PROGRESS_WRITE_MS = 1000;

class PermanentError extends Error {}

const outputWhere = (j: OutputJob) => and(eq(recorderOutputs.recordingId, j.recordingId), eq(recorderOutputs.id, j.outputId));

/** Appends objects, in order, into one local file: an init segment and its run's media segments make one fMP4 file. */
async function concatObjects(ctx: PlatformContext, keys: string[], path: string): Promise<void> {
  const out = await open(path, 'w');
  try {
    for (const k of keys) for await (const chunk of await ctx.store.getStream(k)) await out.write(chunk as Buffer);
  } finally {
    await out.close();
  }
}

/** The tallest video rendition of a recording's tracks (`720p` before `360p`), if it has video. */
export const tallestVideoTrack = (tracks: string[]): string | undefined =>
  tracks.filter((t) => Number.parseInt(t) > 0).sort((a, b) => Number.parseInt(b) - Number.parseInt(a))[0];

/**
 * An ffconcat list of a track's runs, each with its duration on the timeline. A run's fragments keep its decode times
 * on the channel's timeline (tfdt: seconds or hours into the channel), and ffmpeg takes a fragmented MP4's duration to
 * be its end time, start offset included: without the duration, the concat demuxer put each next run that much later,
 * and the encode filled the gap with the last frame (a 40 s range gave a 54 s MP4).
 */
export const ffconcatList = (parts: { name: string; durationMs: number }[]): string =>
  `ffconcat version 1.0\n${parts.map((p) => `file ${p.name}\nduration ${(p.durationMs / 1000).toFixed(3)}`).join('\n')}\n`;

/**
 * The recorded range as local input files for the VOD pipeline, per track: each encoder run (its init segment and
 * its segments) is one fragmented MP4; several runs (the input dropped and came back) are joined by an ffconcat list,
 * decoded one after the other (their init segments may differ: the slate is encoded at the rung's size).
 */
async function localInput(ctx: PlatformContext, tenantId: string, recordingId: string, dir: string) {
  const rows = await recordedSegments(ctx, recordingId);
  const prefix = mediaPrefix(tenantId, recordingId);
  const tracks = [...new Set(rows.map((s) => s.track))];
  const audio = tracks.find((t) => t === 'audio');
  // The tallest rendition is the source of the transcode.
  const video = tallestVideoTrack(tracks);
  const used = [video, audio].filter((t): t is string => !!t);
  const runsOf = (track: string) => {
    const runs: SegmentRow[][] = [];
    for (const s of rows.filter((r) => r.track === track).sort((a, b) => a.startMs - b.startMs)) {
      const last = runs.at(-1);
      if (last && last[0]!.run === s.run) last.push(s);
      else runs.push([s]);
    }
    return runs;
  };
  // Both tracks' lists give a run its longest track's length, so that the next run starts at the same time in each.
  const runMs = runDurations(rows, used);
  const files: Record<string, string> = {};
  for (const track of used) {
    const parts: { name: string; durationMs: number }[] = [];
    for (const [i, run] of runsOf(track).entries()) {
      const name = `${track}-${i}.mp4`;
      await concatObjects(
        ctx,
        [run[0]!.initKey, ...run.map((s) => s.key)].map((k) => prefix + k),
        join(dir, name),
      );
      parts.push({ name, durationMs: runMs.get(run[0]!.run)! });
    }
    if (parts.length === 1) files[track] = join(dir, parts[0]!.name);
    else {
      const list = join(dir, `${track}.ffconcat`);
      await writeFile(list, ffconcatList(parts));
      files[track] = list;
    }
  }
  const durationMs = [...runMs.values()].reduce((a, ms) => a + ms, 0);
  return { video: video && files[video], audio: audio && files[audio], durationMs };
}

async function placeOverlays(ctx: PlatformContext, overlays: Overlay[], dir: string): Promise<PlacedOverlay[]> {
  return Promise.all(
    overlays.map(async (o, i) => {
      const url = o.input?.url;
      if (!url) throw new PermanentError(`Overlay ${i + 1}: only URL inputs are supported for recordings`);
      const path = join(dir, `overlay-${i + 1}`);
      await downloadToFile(url, path, {
        allowPrivate: ctx.config.fetchAllowPrivate,
        setting: 'MEDIAPLANE_FETCH_ALLOW_PRIVATE=true',
        maxBytes: OVERLAY_MAX_BYTES,
        timeoutMs: 30_000,
      }).catch((e: Error) => {
        throw new PermanentError(`The picture of overlay ${i + 1} could not be fetched from ${url}: ${e.message}`);
      });
      return { ...o, source: path };
    }),
  );
}

async function fail(ctx: PlatformContext, j: OutputJob, message: string): Promise<void> {
  await ctx.db.transaction(async (tx) => {
    const rows = await tx.update(recorderOutputs).set({ status: 'Error', errorMessage: message }).where(outputWhere(j)).returning({ id: recorderOutputs.id });
    if (rows.length) await recordRecorderEvent(tx, j.tenantId, 'recorder.output.failed', { id: j.outputId, recordingId: j.recordingId, errorMessage: message });
  });
}

/** Transcodes a recorded range with the output's preset through the VOD pipeline, and publishes the result. */
export async function runOutput(ctx: PlatformContext, j: OutputJob): Promise<void> {
  const claimed = await ctx.db.transaction(async (tx) => {
    const rows = await tx
      .update(recorderOutputs)
      .set({ status: 'Processing', attempts: sql`${recorderOutputs.attempts} + 1` })
      .where(and(outputWhere(j), inArray(recorderOutputs.status, ['Queued', 'Processing'])))
      .returning();
    if (rows.length) await recordRecorderEvent(tx, j.tenantId, 'recorder.output.processing', { id: j.outputId, recordingId: j.recordingId });
    return rows[0];
  });
  if (!claimed) return;
  const dir = join(ctx.config.dataDir, 'work', 'recorder', j.recordingId, j.outputId);
  try {
    const [rec] = await ctx.db.select().from(recorderRecordings).where(eq(recorderRecordings.id, j.recordingId));
    const preset = presetById(claimed.preset);
    if (!rec || !preset) throw new PermanentError(!rec ? 'The recording was deleted' : `Preset ${claimed.preset} no longer exists`);
    if (rec.catchupExpired) throw new PermanentError('The recorded media expired before this output was made');
    await rm(dir, { recursive: true, force: true });
    const inputDir = join(dir, 'input');
    const outDir = join(dir, 'out');
    await mkdir(inputDir, { recursive: true });
    const input = await localInput(ctx, j.tenantId, j.recordingId, inputDir);
    const main = input.video ?? input.audio;
    if (!main) throw new PermanentError('The recording holds no media');
    const tracks: SourceTrack[] = [];
    if (input.video) tracks.push({ type: 'Video', index: 0 });
    if (input.audio) tracks.push({ type: 'Audio', index: 0, ...(input.video ? { input: input.audio } : {}) });
    let lastWrite = 0;
    // A DRM preset encrypts with the channel's keys (a DRM recording) or the recording's own (drm.ts).
    const protection = await outputProtection(ctx, rec, preset);
    const result = await transcode({
      ...(protection ? { encryption: protection.encryption } : {}),
      input: main,
      durationMs: input.durationMs,
      tracks,
      preset,
      overlays: await placeOverlays(ctx, claimed.overlays, inputDir),
      outDir,
      onProgress: (p) => {
        if (Date.now() - lastWrite < PROGRESS_WRITE_MS || p >= 100) return;
        lastWrite = Date.now();
        void ctx.db
          .update(recorderOutputs)
          .set({ progressPercent: Math.min(99, Math.floor(p)) })
          .where(and(outputWhere(j), eq(recorderOutputs.status, 'Processing')))
          .catch(() => {});
      },
    }).catch((e: Error) => {
      throw new PermanentError(e.message);
    });
    const prefix = outputPrefix(j.tenantId, j.recordingId, j.outputId);
    await ctx.store.deletePrefix(prefix);
    for (const f of await listFiles(outDir)) await ctx.store.putFile(prefix + f.path, f.absolutePath, f.contentType);
    const endpoints: EndpointRow[] = result.endpoints.map((e) => ({
      id: `${j.outputId}-${e.format.toLowerCase()}${e.rendition ? `-${e.rendition}` : ''}`,
      accessType: 'Http',
      format: e.format,
      url: recordingUrl(ctx.config.publicUrl.origin, j.tenantId, j.recordingId, `outputs/${j.outputId}`, e.manifest),
      preset: preset.id,
      protection: 'None',
      ...protection?.endpoint,
      durationMilliseconds: e.durationMilliseconds,
      size: e.size,
      manifest: e.manifest,
      hasVerticalOrientation: e.hasVerticalOrientation,
    }));
    const finished = await ctx.db.transaction(async (tx) => {
      const rows = await tx
        .update(recorderOutputs)
        .set({ status: 'Available', progressPercent: 100, endpoints, completionDate: new Date(), errorMessage: null })
        .where(and(outputWhere(j), eq(recorderOutputs.status, 'Processing')))
        .returning({ id: recorderOutputs.id });
      if (rows.length)
        await recordRecorderEvent(tx, j.tenantId, 'recorder.output.available', { id: j.outputId, recordingId: j.recordingId, preset: preset.id });
      return rows.length > 0;
    });
    if (!finished) await ctx.store.deletePrefix(prefix);
  } catch (e) {
    if (e instanceof PermanentError) return fail(ctx, j, e.message);
    throw e;
  } finally {
    await rm(dir, { recursive: true, force: true }).catch(() => {});
  }
}
