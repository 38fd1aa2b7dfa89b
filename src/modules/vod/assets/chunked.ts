import { createWriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { and, asc, eq, inArray, ne, sql } from 'drizzle-orm';
import type { PlatformContext } from '../../../context.ts';
import type { Queryable } from '../../../db/client.ts';
import * as lease from '../../../db/lease.ts';
import { workUnderLease, type LeasedWork } from '../../../db/leasedWork.ts';
import { defineJob } from '../../../jobs/queue.ts';
import { encodeAudioPart, encodeVideoChunk, splitSource, stitch, type SourceChunk } from '../../../media/chunks.ts';
import type { SourceTrack, TranscodeRequest } from '../../../media/transcode.ts';
import { recordEvent } from '../../../platform/events.ts';
import { contentTypeOf } from '../../../storage/contentTypes.ts';
import { keyModeOf, outputEncryption } from '../../drm/index.ts';
import { presetById, type Preset } from '../../transcoder/index.ts';
import { outputPrefix, outputWorkPrefix } from '../storageKeys.ts';
import {
  completeOutput,
  fail,
  failsPermanently,
  LEASE,
  MAX_ATTEMPTS,
  outputWhere,
  PermanentError,
  placeOverlays,
  QUEUED,
  QUEUED_LEASE_MS,
  WORKER_ID,
  type TranscodeJob,
} from './outputs.ts';
import { outputPublisher } from './publish.ts';
import { loadSourceFiles } from './sourceFiles.ts';
import { vodAssets, vodOutputChunks, vodOutputs, type VodSourceRow } from './tables.ts';

/**
 * The chunked path (docs/decisions/vod-chunked.md): the transcode job of a long source splits it into parts, each a job
 * any worker process takes (`vod.transcode.chunk`); the part that completes last, in the transaction that records it,
 * sends the stitch (`vod.transcode.stitch`), which packages the parts into the output as the one-pass encode would.
 */
export interface ChunkJob extends TranscodeJob {
  index: number;
}

/** A part's claim is renewed by its worker like an output's; a dead worker's part is queued again by the sweeper. */
export const chunkJob = defineJob<ChunkJob>('vod.transcode.chunk', { retryLimit: MAX_ATTEMPTS, retryDelaySeconds: 5, expireInSeconds: 6 * 3600 });
export const stitchJob = defineJob<TranscodeJob>('vod.transcode.stitch', { retryLimit: MAX_ATTEMPTS, retryDelaySeconds: 5, expireInSeconds: 6 * 3600 });

/** The owner of an output whose parts are out with the workers; renewed as they work, taken by the stitch. */
export const CHUNKED = 'chunked';
const CHUNKED_LEASE_MS = 6 * 3600_000;
const PART_LEASE = { owner: vodOutputChunks.leaseOwner, until: vodOutputChunks.leaseUntil };
/** The audio part's weight in the output's progress, against the video's 1 (it encodes far faster). */
const AUDIO_WEIGHT = 0.05;
/** The parts' share of the progress; the stitch makes the rest. */
const PARTS_SHARE = 95;
const PROGRESS_EVENT_STEP = 10;
const PROGRESS_WRITE_MS = 1000;

const partsOf = (j: TranscodeJob) =>
  and(eq(vodOutputChunks.tenantId, j.tenantId), eq(vodOutputChunks.assetId, j.assetId), eq(vodOutputChunks.outputId, j.outputId));
const partWhere = (j: ChunkJob) => and(partsOf(j), eq(vodOutputChunks.index, j.index));
const partDir = (j: TranscodeJob, index: number) => `${outputWorkPrefix(j.tenantId, j.assetId, j.outputId)}part-${String(index).padStart(5, '0')}/`;

const tracksOf = (source: VodSourceRow): SourceTrack[] =>
  source.transcodingTracks.map((t) => ({ type: t.type as SourceTrack['type'], index: Number(t.trackSelector.trackId), language: t.language, name: t.name }));

/**
 * Splits a claimed output's source into parts and queues them, in one transaction with the output handed to the parts
 * (`CHUNKED`): either every part's job exists or none does. The video is cut on segment boundaries; the audio and the
 * captions are one part of their own, encoded once over the whole source.
 */
export async function startChunked(ctx: PlatformContext, j: TranscodeJob, source: VodSourceRow, sourceMs: number, preset: Preset): Promise<void> {
  const chunks = splitSource(sourceMs, ctx.config.chunkSeconds, preset.segmentSeconds);
  const audio = source.transcodingTracks.some((t) => t.type === 'Audio' || t.type === 'Caption');
  const parts = [
    ...chunks.map((c) => ({
      index: c.index,
      kind: 'video' as const,
      startMs: Math.round(c.startS * 1000),
      endMs: c.endS === undefined ? null : Math.round(c.endS * 1000),
    })),
    ...(audio ? [{ index: chunks.length, kind: 'audio' as const, startMs: 0, endMs: null }] : []),
  ];
  await ctx.db.transaction(async (tx) => {
    const rows = await tx
      .update(vodOutputs)
      .set({ ...lease.take(CHUNKED, CHUNKED_LEASE_MS), progressPercent: 0 })
      .where(and(outputWhere(j), lease.heldBy(LEASE, WORKER_ID)))
      .returning({ id: vodOutputs.id });
    if (!rows.length) return;
    await tx.delete(vodOutputChunks).where(partsOf(j));
    await tx
      .insert(vodOutputChunks)
      .values(parts.map((p) => ({ ...p, tenantId: j.tenantId, assetId: j.assetId, outputId: j.outputId, ...lease.take(QUEUED, QUEUED_LEASE_MS) })));
    // The audio part first: it is short, and its worker is then free for a chunk.
    for (const p of [...parts].reverse())
      await ctx.jobs.send(chunkJob, { tenantId: j.tenantId, assetId: j.assetId, outputId: j.outputId, index: p.index }, { tx });
  });
  ctx.log.info({ assetId: j.assetId, outputId: j.outputId, chunks: chunks.length, audio }, 'transcoding in chunks');
}

/**
 * Whether the output is still waiting for its parts. A finished one's leftover parts (its worker stopped between the
 * completion and their removal) are removed here; a part of an output being stitched or split again is given back.
 */
async function stillChunked(ctx: PlatformContext, j: ChunkJob): Promise<boolean> {
  const [o] = await ctx.db.select({ status: vodOutputs.status, owner: vodOutputs.leaseOwner }).from(vodOutputs).where(outputWhere(j));
  if (o?.status === 'Processing' && o.owner === CHUNKED) return true;
  if (o?.status === 'Processing')
    await ctx.db
      .update(vodOutputChunks)
      .set(lease.release())
      .where(and(partWhere(j), lease.heldBy(PART_LEASE, WORKER_ID)));
  else await ctx.db.delete(vodOutputChunks).where(partsOf(j));
  return false;
}

/**
 * The output's progress from its parts' (each weighted by the source time it covers), never falling, with a
 * `vod.output.progress` event on each new step of ten: several workers write it, so the step is decided under the
 * output row's lock, in the transaction that writes it.
 */
async function combineProgress(tx: Queryable, j: TranscodeJob, sourceMs: number): Promise<void> {
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
function partProgress(ctx: PlatformContext, j: ChunkJob, sourceMs: number) {
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

/** What every part and the stitch read: the asset, its preset and source, the source's location and length. */
async function loadSource(ctx: PlatformContext, j: TranscodeJob) {
  const [output] = await ctx.db.select().from(vodOutputs).where(outputWhere(j));
  const [asset] = await ctx.db.select().from(vodAssets).where(eq(vodAssets.id, j.assetId));
  const preset = output && presetById(output.preset);
  if (!output || !asset || !preset) throw new PermanentError(!asset || !output ? 'The asset was deleted' : `Preset ${output.preset} no longer exists`);
  const source = asset.sources[0];
  const file = (await loadSourceFiles(ctx.db, j.tenantId, [source.fileId])).get(source.fileId);
  if (!file) throw new PermanentError(`Source file ${source.fileId} was deleted`);
  return { output, asset, preset, source, input: await ctx.store.readableLocation(file.fileKey), sourceMs: file.durationMs ?? asset.durationMilliseconds ?? 0 };
}

/** Encodes one part, stores its files under the output's work prefix, and records it done (the last one sends the stitch). */
async function runPart(ctx: PlatformContext, j: ChunkJob, stopping: AbortSignal): Promise<void> {
  const [part] = await ctx.db
    .update(vodOutputChunks)
    .set({ ...lease.take(WORKER_ID, ctx.config.transcodeLeaseSeconds * 1000), status: 'Processing', attempts: sql`${vodOutputChunks.attempts} + 1` })
    .where(and(partWhere(j), inArray(vodOutputChunks.status, ['Pending', 'Processing']), lease.claimable(PART_LEASE, WORKER_ID, QUEUED)))
    .returning();
  if (!part) return;
  if (!(await stillChunked(ctx, j))) return;
  if (part.attempts > MAX_ATTEMPTS) return fail(ctx, j, `Transcoding part ${part.index + 1} of the source failed ${MAX_ATTEMPTS} times; giving up`);
  const leaseMs = ctx.config.transcodeLeaseSeconds * 1000;
  const partHeld = and(partWhere(j), lease.heldBy(PART_LEASE, WORKER_ID));
  const held: LeasedWork = {
    leaseMs,
    renew: () => ctx.db.update(vodOutputChunks).set(lease.renew(leaseMs)).where(partHeld),
    giveBack: () => ctx.db.update(vodOutputChunks).set(lease.release()).where(partHeld),
    stopping,
    workDir: join(ctx.config.dataDir, 'work', j.assetId, `${j.outputId}.part-${j.index}`),
    ...failsPermanently(ctx, j),
  };
  await workUnderLease(held, async (signal) => {
    const { output, preset, source, input, sourceMs } = await loadSource(ctx, j);
    const progress = partProgress(ctx, j, sourceMs);
    const req: TranscodeRequest = {
      input,
      durationMs: sourceMs,
      tracks: tracksOf(source),
      preset,
      outDir: join(held.workDir, 'out'),
      signal,
      onProgress: (p) => progress.report(p),
    };
    let files: string[];
    if (part.kind === 'video') {
      const chunk: SourceChunk = { index: part.index, startS: part.startMs / 1000, ...(part.endMs === null ? {} : { endS: part.endMs / 1000 }) };
      req.overlays = await placeOverlays(ctx, j, output.overlays, held.workDir);
      await encodeVideoChunk(req, chunk).catch((e: Error) => {
        throw new PermanentError(e.message);
      });
      files = ['video.mp4'];
    } else {
      files = await encodeAudioPart(req).catch((e: Error) => {
        throw new PermanentError(e.message);
      });
    }
    await progress.settled();
    for (const f of files) await ctx.store.putFile(partDir(j, part.index) + f, join(req.outDir, f), contentTypeOf(f));
    const last = await ctx.db.transaction(async (tx) => {
      // Under the output's lock: of two parts finishing at once, exactly one sees the other done and sends the stitch.
      const [out] = await tx.select({ owner: vodOutputs.leaseOwner, status: vodOutputs.status }).from(vodOutputs).where(outputWhere(j)).for('update');
      if (out?.status !== 'Processing' || out.owner !== CHUNKED) return false;
      const rows = await tx
        .update(vodOutputChunks)
        .set({ status: 'Available', progressPercent: 100, leaseOwner: null, leaseUntil: null })
        .where(and(partWhere(j), lease.heldBy(PART_LEASE, WORKER_ID)))
        .returning({ index: vodOutputChunks.index });
      if (!rows.length) return false;
      const [{ left }] = await tx
        .select({ left: sql<number>`count(*)::int` })
        .from(vodOutputChunks)
        .where(and(partsOf(j), ne(vodOutputChunks.status, 'Available')));
      await combineProgress(tx, j, sourceMs);
      ctx.log.info({ assetId: j.assetId, outputId: j.outputId, index: j.index, kind: part.kind, left }, 'part transcoded');
      if (left > 0) return false;
      await ctx.jobs.send(stitchJob, { tenantId: j.tenantId, assetId: j.assetId, outputId: j.outputId }, { tx });
      return true;
    });
    if (last) ctx.log.info({ assetId: j.assetId, outputId: j.outputId }, 'every part transcoded; stitching');
  });
}

async function download(ctx: PlatformContext, key: string, path: string): Promise<void> {
  await pipeline(await ctx.store.getStream(key), createWriteStream(path));
}

/** Puts the parts together into the output (media/chunks.ts `stitch`), then finishes it as the one-pass path does. */
async function runStitch(ctx: PlatformContext, j: TranscodeJob, stopping: AbortSignal): Promise<void> {
  const [claimed] = await ctx.db
    .update(vodOutputs)
    .set(lease.take(WORKER_ID, ctx.config.transcodeLeaseSeconds * 1000))
    .where(and(outputWhere(j), eq(vodOutputs.status, 'Processing'), lease.claimable(LEASE, WORKER_ID, CHUNKED)))
    .returning();
  if (!claimed) return;
  const owned = and(outputWhere(j), lease.heldBy(LEASE, WORKER_ID));
  const leaseMs = ctx.config.transcodeLeaseSeconds * 1000;
  const workDir = join(ctx.config.dataDir, 'work', j.assetId, j.outputId);
  const held: LeasedWork = {
    leaseMs,
    renew: () => ctx.db.update(vodOutputs).set(lease.renew(leaseMs)).where(owned),
    // Back to the parts' owner: the queue's retry (or the sweeper) stitches again from the stored parts.
    giveBack: () => ctx.db.update(vodOutputs).set(lease.take(CHUNKED, CHUNKED_LEASE_MS)).where(owned),
    stopping,
    workDir,
    ...failsPermanently(ctx, j),
  };
  await workUnderLease(held, async (signal) => {
    const parts = await ctx.db.select().from(vodOutputChunks).where(partsOf(j)).orderBy(asc(vodOutputChunks.index));
    if (parts.length === 0 || parts.some((p) => p.status !== 'Available')) {
      // Not every part is done (a stitch sent twice, the output started over): the parts' own jobs go on.
      await ctx.db.update(vodOutputs).set(lease.take(CHUNKED, CHUNKED_LEASE_MS)).where(owned);
      return;
    }
    const { output, asset, preset, source, input, sourceMs } = await loadSource(ctx, j);
    const partsDir = join(workDir, 'parts');
    await mkdir(partsDir, { recursive: true });
    const chunks: { chunk: SourceChunk; file: string }[] = [];
    let audioDir: string | undefined;
    const tracks = tracksOf(source);
    for (const p of parts) {
      const dir = join(partsDir, String(p.index));
      await mkdir(dir, { recursive: true });
      if (p.kind === 'video') {
        await download(ctx, partDir(j, p.index) + 'video.mp4', join(dir, 'video.mp4'));
        chunks.push({
          chunk: { index: p.index, startS: p.startMs / 1000, ...(p.endMs === null ? {} : { endS: p.endMs / 1000 }) },
          file: join(dir, 'video.mp4'),
        });
      } else {
        audioDir = dir;
        if (tracks.some((t) => t.type === 'Audio')) await download(ctx, partDir(j, p.index) + 'audio.mp4', join(dir, 'audio.mp4'));
        for (const [k] of tracks.filter((t) => t.type === 'Caption').entries()) {
          await download(ctx, partDir(j, p.index) + `sub_${k}.vtt`, join(dir, `sub_${k}.vtt`));
        }
      }
    }
    const prefix = outputPrefix(j.tenantId, j.assetId, j.outputId);
    await ctx.store.deletePrefix(prefix);
    const encryption = preset.protection
      ? await outputEncryption(ctx, j.tenantId, j.assetId, preset.protection.scheme, keyModeOf(asset.drmKeyMode))
      : undefined;
    const ids = { assetId: j.assetId, outputId: j.outputId, tenantId: j.tenantId, preset, keyId: encryption?.keyId, drmKeyMode: keyModeOf(asset.drmKeyMode) };
    const started = performance.now();
    const result = await stitch({
      input,
      durationMs: sourceMs,
      tracks,
      preset,
      outDir: join(workDir, 'out'),
      signal,
      encryption,
      publish: outputPublisher(ctx, prefix, ids, owned, sourceMs),
      chunks,
      audioDir,
    }).catch((e: Error) => {
      throw new PermanentError(e.message);
    });
    ctx.log.info({ assetId: j.assetId, outputId: j.outputId, ms: Math.round(performance.now() - started), timings: result.timings }, 'stitched');
    await completeOutput(ctx, j, output.preset, asset.preset, asset.durationMilliseconds, join(workDir, 'out'), result, ids);
    await ctx.db.delete(vodOutputChunks).where(partsOf(j));
    await ctx.store.deletePrefix(outputWorkPrefix(j.tenantId, j.assetId, j.outputId));
  });
}

/** Queues the stitch of an output whose parts are all done but whose stitching worker died (the sweeper). */
export async function restitch(ctx: PlatformContext, j: TranscodeJob): Promise<void> {
  await ctx.db.transaction(async (tx) => {
    await tx.update(vodOutputs).set(lease.take(CHUNKED, CHUNKED_LEASE_MS)).where(outputWhere(j));
    await ctx.jobs.send(stitchJob, { tenantId: j.tenantId, assetId: j.assetId, outputId: j.outputId }, { tx });
  });
}

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
