import { rm } from 'node:fs/promises';
import { join, posix } from 'node:path';
import { and, eq } from 'drizzle-orm';
import type { PlatformContext, WorkerStarter } from '../../../context.ts';
import { defineJob } from '../../../jobs/queue.ts';
import { MediaError } from '../../../media/ffmpeg.ts';
import { mpegtsZero } from '../../../media/finish.ts';
import { parseMediaPlaylist, subtitlePlaylistText, withSubtitleRendition, withTimestampMap } from '../../../media/hls.ts';
import { inspect } from '../../../media/inspect.ts';
import { captionModel, captioningOf } from '../../../media/live/index.ts';
import { RecognizerError } from '../../../media/live/captions/recognizer.ts';
import { mpdWithCaptions } from '../../../media/packaging.ts';
import { captionsFromSpeech } from '../../../media/speechCaptions.ts';
import { recordEvent } from '../../../platform/events.ts';
import { readObject } from '../../../storage/readObject.ts';
import { assetWorkPrefix, outputPrefix } from '../storageKeys.ts';
import { loadSourceFiles } from './sourceFiles.ts';
import { vodAssets, vodOutputs, type EndpointRow } from './tables.ts';

/**
 * Captions made from an asset's speech (docs/decisions/vod-assets.md, "Generated captions"), as the hosted platforms
 * make them: beside the transcode, not in its way. A job recognizes the asset's audio track once and keeps the WebVTT
 * under the asset's work prefix; every output that is finished then (and every one that finishes later) gets it as one
 * more subtitle track of its HLS master playlist and its MPD, at the same URLs.
 */
export interface CaptionsJob {
  tenantId: string;
  assetId: string;
}

export const captionsJob = defineJob<CaptionsJob>('vod.captions', { retryLimit: 2, retryDelaySeconds: 10, expireInSeconds: 6 * 3600 });

/** Where the recognized captions are kept (not served: each output gets its own copy beside its playlists). */
const keptVtt = (tenantId: string, assetId: string, code: string) => `${assetWorkPrefix(tenantId, assetId)}captions/${code}.vtt`;
/** The captions' files inside an output's streaming folder (`hls/`, `dash/`, `cmaf/`). */
const vttName = (code: string) => `subs/generated_${code}.vtt`;
const playlistName = (code: string) => `subs/generated_${code}.m3u8`;

class CaptionsError extends Error {}

export async function runCaptions(ctx: PlatformContext, j: CaptionsJob, stopping: AbortSignal): Promise<void> {
  const own = and(eq(vodAssets.id, j.assetId), eq(vodAssets.tenantId, j.tenantId));
  const [asset] = await ctx.db.select().from(vodAssets).where(own);
  const code = asset?.aiCaptioningLanguageCode;
  if (!asset || !code || asset.aiCaptioningStatus === 'Available' || asset.aiCaptioningStatus === 'Error') return;
  await ctx.db.update(vodAssets).set({ aiCaptioningStatus: 'Processing' }).where(own);
  const workDir = join(ctx.config.dataDir, 'work', j.assetId, 'captions');
  try {
    const model = captionModel(ctx.config.live.captionModelsDir, code);
    if (!model) throw new CaptionsError(`No speech model for ${code} is installed any more`);
    const source = asset.sources[0];
    const audio = source.transcodingTracks.find((t) => t.type === 'Audio');
    const file = (await loadSourceFiles(ctx.db, j.tenantId, [source.fileId])).get(source.fileId);
    if (!audio || !file) throw new CaptionsError(!audio ? 'The asset has no audio track to make captions from' : `Source file ${source.fileId} was deleted`);
    const { vtt, cues } = await captionsFromSpeech({
      input: await ctx.store.readableLocation(file.fileKey),
      stream: Number(audio.trackSelector.trackId),
      model,
      durationMs: file.durationMs ?? asset.durationMilliseconds ?? 0,
      workDir,
      signal: stopping,
    });
    await ctx.store.putObject(keptVtt(j.tenantId, j.assetId, code), vtt, 'text/vtt');
    await ctx.db.transaction(async (tx) => {
      const rows = await tx.update(vodAssets).set({ aiCaptioningStatus: 'Available', aiCaptioningError: null }).where(own).returning({ id: vodAssets.id });
      if (rows.length) await recordEvent(tx, j.tenantId, 'vod.captions.available', { id: j.assetId, languageCode: code, cues });
    });
  } catch (e) {
    // Stopping, or a store or database failure: the queue's retry makes them again.
    if (stopping.aborted || !(e instanceof CaptionsError || e instanceof MediaError || e instanceof RecognizerError)) throw e;
    await ctx.db.transaction(async (tx) => {
      await tx.update(vodAssets).set({ aiCaptioningStatus: 'Error', aiCaptioningError: e.message }).where(own);
      await recordEvent(tx, j.tenantId, 'vod.captions.failed', { id: j.assetId, languageCode: code, errorMessage: e.message });
    });
    return;
  } finally {
    await rm(workDir, { recursive: true, force: true });
  }
  const outputs = await ctx.db
    .select({ id: vodOutputs.id })
    .from(vodOutputs)
    .where(and(eq(vodOutputs.assetId, j.assetId), eq(vodOutputs.status, 'Available')));
  for (const o of outputs) await attachGeneratedCaptions(ctx, j.tenantId, j.assetId, o.id);
}

/**
 * Adds the asset's generated captions to a finished output, if they are made (else their job adds them when they
 * are): the WebVTT and its playlist beside the output's manifests, then the manifests naming them. Under the output
 * row's lock, and skipped where a manifest names them already: the captions job and the output's completion may both
 * get here. `unpublished`: the endpoints of an output this worker is finishing, stored but not yet `Available` (nobody
 * else writes them): its manifests name the captions from the moment it is, and a call after it is `Available` covers
 * captions made in between. Answers whether the captions were made (so there was something to add).
 */
export async function attachGeneratedCaptions(
  ctx: PlatformContext,
  tenantId: string,
  assetId: string,
  outputId: string,
  unpublished?: EndpointRow[],
): Promise<boolean> {
  // The output plays without them: a failure here is logged, not the output's or the job's.
  return attachTo(ctx, tenantId, assetId, outputId, unpublished).catch((err) => {
    ctx.log.warn({ err, assetId, outputId }, 'adding the generated captions to an output failed');
    return false;
  });
}

async function attachTo(ctx: PlatformContext, tenantId: string, assetId: string, outputId: string, unpublished?: EndpointRow[]): Promise<boolean> {
  const [asset] = await ctx.db
    .select({ code: vodAssets.aiCaptioningLanguageCode, status: vodAssets.aiCaptioningStatus, sources: vodAssets.sources })
    .from(vodAssets)
    .where(and(eq(vodAssets.id, assetId), eq(vodAssets.tenantId, tenantId)));
  if (!asset?.code || asset.status !== 'Available') return false;
  const { code } = asset;
  const captions: GeneratedCaptions = {
    code,
    vtt: (await readObject(ctx.store, keptVtt(tenantId, assetId, code))).toString('utf8'),
    name: `${captioningOf(code).language?.name ?? code} (generated)`,
    prefix: outputPrefix(tenantId, assetId, outputId),
    // Read before the transaction: the embedded database has one connection, which the transaction holds.
    sourceKey: (await loadSourceFiles(ctx.db, tenantId, [asset.sources[0].fileId])).get(asset.sources[0].fileId)?.fileKey,
  };
  if (unpublished) {
    await writeCaptions(ctx, unpublished, captions);
    return true;
  }
  await ctx.db.transaction(async (tx) => {
    const [o] = await tx
      .select({ endpoints: vodOutputs.endpoints, status: vodOutputs.status })
      .from(vodOutputs)
      .where(and(eq(vodOutputs.assetId, assetId), eq(vodOutputs.id, outputId)))
      .for('update');
    if (o?.status === 'Available') await writeCaptions(ctx, o.endpoints, captions);
  });
  return true;
}

interface GeneratedCaptions {
  code: string;
  vtt: string;
  name: string;
  /** The output's prefix in the store. */
  prefix: string;
  sourceKey: string | undefined;
}

/** The captions' files beside each manifest of an output, and the manifests naming them (unless they do already). */
async function writeCaptions(ctx: PlatformContext, endpoints: EndpointRow[], c: GeneratedCaptions): Promise<void> {
  const { code, vtt, name, prefix } = c;
  for (const e of endpoints) {
    const dir = posix.dirname(e.manifest);
    const text = (await readObject(ctx.store, prefix + e.manifest)).toString('utf8');
    if (e.format === 'HLS' && !text.includes(playlistName(code))) {
      // MPEG-TS cue times count from the output's zero on its clock (as the uploaded captions'); fMP4's is 0.
      const zero = dir === 'hls' ? await outputZero(ctx, prefix, e.manifest, text, c.sourceKey) : 0;
      const file = dir === 'hls' ? withTimestampMap(vtt, zero) : vtt;
      await ctx.store.putObject(`${prefix}${dir}/${vttName(code)}`, file, 'text/vtt');
      await ctx.store.putObject(
        `${prefix}${dir}/${playlistName(code)}`,
        subtitlePlaylistText(posix.basename(vttName(code)), e.durationMilliseconds / 1000),
        'application/vnd.apple.mpegurl',
      );
      await ctx.store.putObject(
        prefix + e.manifest,
        withSubtitleRendition(text, { uri: playlistName(code), name, language: code }),
        'application/vnd.apple.mpegurl',
      );
    } else if (e.format === 'DASH' && !text.includes(vttName(code))) {
      // A CMAF output's HLS endpoint wrote the same file (no map: its segments are fMP4).
      if (dir !== 'cmaf') await ctx.store.putObject(`${prefix}${dir}/${vttName(code)}`, vtt, 'text/vtt');
      const sets = [{ id: 200, representation: `generated_${code}`, name, language: code, file: vttName(code) }];
      await ctx.store.putObject(prefix + e.manifest, mpdWithCaptions(text, sets), 'application/dash+xml');
    }
  }
}

/** Where an MPEG-TS HLS output's clock reads zero: its first segment's start, less where the source's video began. */
async function outputZero(ctx: PlatformContext, prefix: string, master: string, text: string, sourceKey: string | undefined): Promise<number> {
  const variant = text
    .split('\n')
    .find((l) => l.trim() && !l.startsWith('#'))!
    .trim();
  const playlistKey = `${prefix}${posix.dirname(master)}/${variant}`;
  const first = parseMediaPlaylist((await readObject(ctx.store, playlistKey)).toString('utf8')).segments[0];
  if (!first || !sourceKey) return 0;
  const [segment, source] = await Promise.all([
    inspect(await ctx.store.readableLocation(`${posix.dirname(playlistKey)}/${first.uri}`)),
    inspect(await ctx.store.readableLocation(sourceKey)),
  ]);
  return mpegtsZero(source, segment);
}

/** The captions workers of a worker process: one recognizer at a time (it takes a core), stopped with the process. */
export const startCaptionsWorkers: WorkerStarter = async (ctx) => {
  const stopping = new AbortController();
  const running = new Set<Promise<void>>();
  await ctx.jobs.work(captionsJob, (job) => {
    const run = runCaptions(ctx, job, stopping.signal);
    running.add(run);
    return run.finally(() => running.delete(run));
  });
  return async () => {
    stopping.abort();
    await Promise.allSettled([...running]);
  };
};
