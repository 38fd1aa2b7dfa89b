import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runFfmpeg } from './ffmpeg.ts';
import { finishOutputs, mediaPlaylists, type TranscodeEndpoint } from './finish.ts';
import { growingMasterText } from './hls.ts';
import { validLanguage, type EncodeLayout } from './packaging.ts';
import { planTranscode, type TranscodePlan, type TranscodeRequest } from './plan.ts';
import { ProgressParser } from './progress.ts';
import { protectOutput } from './protect.ts';
import { publishWhileEncoding } from './progressive.ts';

export type { SourceTrack, TranscodeRequest } from './plan.ts';
export type { PublishSink } from './progressive.ts';
export interface TranscodeResult {
  durationMilliseconds: number;
  endpoints: TranscodeEndpoint[];
  /** The rungs encoded for this source (after dropping those above its size). */
  renditions: { name: string; width: number; height: number; videoBitrateKbps: number }[];
  audioTracks: number;
  captionTracks: number;
  /** Files stored while the encode ran (`publish`), final as they are: the upload of the finished output skips them. */
  published: ReadonlySet<string>;
  /** The encoding command's arguments (after `ffmpeg`), for logs and the benchmark. */
  ffmpegArgs: string[];
  /** Where the time went: reading the source and planning, the ffmpeg encode, the finishing steps. */
  timings: { planMs: number; encodeMs: number; finishMs: number };
}

/**
 * Transcodes one source with a preset into `outDir`: one ffmpeg process encodes the whole ladder and writes the
 * streaming packaging (or the MP4 files) and the captions; the finishing steps write master playlists and cut MP4
 * downloads. A pure function on local files: the caller uploads `outDir` (see `listFiles`) and records the endpoints.
 *
 * Progress is whole percents of the source duration as ffmpeg reports it, never falling; 100 only once every file is
 * written. Rejects with a MediaError whose message suits an asset's `errorMessage`, or with the signal's reason when
 * aborted (ffmpeg is killed); `outDir` may then hold partial files, which the caller removes.
 */
export async function transcode(req: TranscodeRequest): Promise<TranscodeResult> {
  const started = performance.now();
  await mkdir(req.outDir, { recursive: true });
  const plan = await planTranscode(req);
  const planned = performance.now();
  let last = -1;
  const report = (p: number) => {
    if (p > last) {
      last = p;
      req.onProgress?.(p);
    }
  };
  const parser = new ProgressParser(plan.durationMs, (p) => report(Math.min(p, 99)));
  // Neither process of a fast start writes one (with audio, each sees half of the output; without, the video's muxer
  // is told not to, as with audio).
  if (plan.fastStart) await writeFastStartMaster(plan.layout);
  const publisher = req.publish && !req.preset.protection ? publishWhileEncoding(plan.layout, req.publish) : undefined;
  try {
    await encodeBeside(plan, req.signal, (chunk) => parser.push(chunk));
  } finally {
    await publisher?.stop();
  }
  const encoded = performance.now();
  const endpoints = await finishOutputs({ layout: plan.layout, source: plan.source, signal: req.signal, redact: plan.redact });
  // Encrypted last: the finishing steps read the clear segments (codecs, measured bandwidth).
  if (req.encryption && req.preset.protection) await protectOutput(plan.layout, req.encryption);
  const finished = performance.now();
  report(100);
  return transcodeResult(plan.layout, endpoints, plan.durationMs, plan.args, publisher?.stored ?? [], [started, planned, encoded, finished]);
}

/**
 * What a transcode answers, from its layout, its endpoints and its published files; `marks` are the `performance.now()`
 * of its start, the end of planning, of encoding and of the finishing steps.
 */
export function transcodeResult(
  { renditions, audio, captions }: Pick<EncodeLayout, 'renditions' | 'audio' | 'captions'>,
  endpoints: TranscodeEndpoint[],
  sourceMs: number,
  ffmpegArgs: string[],
  published: Iterable<string>,
  [started, planned, encoded, finished]: [number, number, number, number],
): TranscodeResult {
  return {
    durationMilliseconds: endpoints[0]?.durationMilliseconds ?? sourceMs,
    endpoints,
    renditions: renditions.map((r) => ({ name: r.name, width: r.width, height: r.height, videoBitrateKbps: r.videoBitrateKbps })),
    audioTracks: audio.length,
    captionTracks: captions.length,
    ffmpegArgs,
    published: new Set(published),
    timings: { planMs: Math.round(planned - started), encodeMs: Math.round(encoded - planned), finishMs: Math.round(finished - encoded) },
  };
}

/**
 * A fast start's second process (audio and captions) runs below the video's priority: it needs little of the machine
 * and is seconds ahead at once, while the video's first segment is what a player waits for. Measured on a 1080p
 * ladder, time to first playable through the API: 3.3-3.7 s at equal priority, 3.0-3.5 s with the audio at 15 or 19.
 */
const SIDE_NICE = 15;

/** Runs the plan's encoding process, and a fast start's second one beside it: either failing stops the other. */
export async function encodeBeside(
  plan: Pick<TranscodePlan, 'args' | 'sideArgs' | 'redact'>,
  signal: AbortSignal | undefined,
  onStdout: (chunk: string) => void,
): Promise<void> {
  if (!plan.sideArgs) return void (await runFfmpeg(plan.args, { signal, redact: plan.redact, onStdout, background: true }));
  const failed = new AbortController();
  const both = signal ? AbortSignal.any([signal, failed.signal]) : failed.signal;
  const run = (args: string[], out?: (chunk: string) => void, nice: true | number = true) =>
    runFfmpeg(args, { signal: both, redact: plan.redact, onStdout: out, background: nice }).catch((e: unknown) => {
      failed.abort(e);
      throw e;
    });
  const results = await Promise.allSettled([run(plan.args, onStdout), run(plan.sideArgs, undefined, SIDE_NICE)]);
  // The first failure is the cause; the other process was stopped because of it.
  const first = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (first) throw failed.signal.aborted && !signal?.aborted ? failed.signal.reason : first.reason;
}

/** A fast start's master playlist: its two processes each mux half of the output, so neither writes one. */
async function writeFastStartMaster(layout: EncodeLayout): Promise<void> {
  await writeFile(join(layout.outDir, 'hls', 'master.m3u8'), fastStartMaster(layout));
}

/**
 * The master playlist of an HLS output that starts fast (`hls/master.m3u8`), or of a CMAF one whose chunks write it
 * (`cmaf/master.m3u8`), with the ladder's settings as bandwidths.
 */
export function fastStartMaster(layout: EncodeLayout, streaming: 'hls' | 'cmaf' = 'hls'): string {
  const dir = join(layout.outDir, streaming);
  const { video, audio } = mediaPlaylists(layout, dir, streaming === 'cmaf');
  return growingMasterText(dir, {
    variants: layout.renditions.map((r, i) => ({
      playlist: video[i],
      width: r.width,
      height: r.height,
      peakKbps: r.maxrateKbps,
      averageKbps: r.videoBitrateKbps,
    })),
    audio: layout.audio.map((a, k) => ({ playlist: audio[k], name: a.name, language: validLanguage(a.language), kbps: layout.preset.audio.bitrateKbps })),
  });
}
