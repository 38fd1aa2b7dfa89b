import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runFfmpeg } from './ffmpeg.ts';
import { finishOutputs } from './finish.ts';
import { firstVideo, type MediaInfo } from './inspect.ts';
import { audioEncoderArgs, planRenditions, videoEncoderArgs } from './ladder.ts';
import { outputArgs, packagingOf, type EncodeLayout } from './packaging.ts';
import { pickTracks, planVideo, Sources, type TranscodeRequest } from './plan.ts';
import { ProgressParser } from './progress.ts';
import { protectOutput } from './protect.ts';
import { publishWhileEncoding } from './progressive.ts';
import { transcodeResult, type TranscodeResult } from './transcode.ts';

/**
 * The chunked path (docs/decisions/vod-chunked.md): a long source's video is encoded in chunks, each by its own job on
 * any worker; its audio and captions once, by one more; a stitch puts them together into the usual packaging. Every
 * time here is in seconds from the source's start (its container's start time), as the one-pass encode counts them.
 */

/** One chunk of the source's video: `[startS, endS)`; the last has no end (it runs to the source's last frame). */
export interface SourceChunk {
  index: number;
  startS: number;
  endS?: number;
}

/** Where the chunks are cut: every `chunkSeconds` rounded up to whole segments, so that a chunk starts a segment. */
export function splitSource(durationMs: number, chunkSeconds: number, segmentSeconds: number): SourceChunk[] {
  const size = Math.max(1, Math.ceil(chunkSeconds / segmentSeconds)) * segmentSeconds;
  const count = Math.max(1, Math.ceil(durationMs / 1000 / size - 1e-9));
  return Array.from({ length: count }, (_, index) => ({ index, startS: index * size, ...(index < count - 1 ? { endS: (index + 1) * size } : {}) }));
}

/** Frames within this of a boundary count as on it (timestamps in a file's time base are rarely exact). */
const EPSILON_S = 0.001;

const sec = (s: number) => s.toFixed(6);

/** How far past `at` the first frame at or after it lies, for a constant frame rate (0 when the rate is unknown). */
function firstFrameShift(at: number, frameRate?: number): number {
  if (!frameRate || at === 0) return 0;
  const frame = Math.ceil((at - EPSILON_S) * frameRate) / frameRate;
  return Math.max(0, frame - at);
}

/** Progress of one part as ffmpeg reports it, from the part's own start (a chunk's clock reads source times). */
export function progressOf(req: TranscodeRequest, durationS: number, startS: number) {
  let last = -1;
  return new ProgressParser(
    durationS * 1000,
    (p) => {
      if (p > last && p < 100) req.onProgress?.((last = p));
    },
    startS * 1000,
  );
}

/**
 * What encoding one chunk's video reads and how: the source sought a little early with its own times kept (`-copyts
 * -start_at_zero`; the trim cuts exactly), the rungs, and the filter graph that trims, draws the overlays at their
 * source times and scales. `durationS` is the chunk's length, for progress.
 */
export async function planChunk(req: TranscodeRequest, chunk: SourceChunk) {
  const sources = new Sources(req);
  const source = await sources.main(() => ['-ss', sec(Math.max(0, chunk.startS - 1)), '-copyts', '-start_at_zero']);
  const { video, audio, captions } = await pickTracks(req, sources, source);
  if (!video) throw new Error('the chunked path encodes video presets only');
  const videoStart = Math.max(0, (video.stream.startTime ?? source.startTime) - source.startTime);
  const start = videoStart + chunk.startS - EPSILON_S;
  const end = chunk.endS === undefined ? undefined : videoStart + chunk.endS - EPSILON_S;
  const { graph, renditions, videoMaps } = await planVideo(req, sources, video, { start: chunk.index === 0 ? 0 : start, end });
  const durationS = (chunk.endS ?? (req.durationMs ?? source.durationMs) / 1000) - chunk.startS;
  const head = ['-y', '-progress', 'pipe:1', '-stats_period', '0.5', ...sources.inputs.args, '-filter_complex', graph.join(';')];
  return { sources, source, video, audio, captions, renditions, videoMaps, head, durationS, progress: progressOf(req, durationS, chunk.startS) };
}

/**
 * Encodes one chunk's video for every rung into `<outDir>/video.mp4` (one track per rung, in ladder order), with the
 * source's own timestamps: the overlays are drawn at their source times, the keyframes fall where the one-pass encode
 * puts them (on the preset's segment boundaries), and the stitch lays the chunks end to end by these times.
 */
export async function encodeVideoChunk(req: TranscodeRequest, chunk: SourceChunk): Promise<{ file: string; renditions: number }> {
  await mkdir(req.outDir, { recursive: true });
  const { sources, video, renditions, videoMaps, head, progress } = await planChunk(req, chunk);
  const file = join(req.outDir, 'video.mp4');
  const args = [
    ...head,
    ...videoMaps.flatMap((m) => ['-map', m]),
    ...videoEncoderArgs(req.preset, renditions, { shiftS: firstFrameShift(chunk.startS, video.stream.frameRate) }),
    '-an',
    '-sn',
    '-f',
    'mp4',
    file,
  ];
  await runFfmpeg(args, { signal: req.signal, redact: sources.redact, onStdout: (c) => progress.push(c), background: true });
  return { file, renditions: renditions.length };
}

/**
 * Encodes the whole source's audio tracks (once: no border, no click) into `<outDir>/audio.mp4`, one track per listed
 * audio track, and its captions into `<outDir>/sub_<k>.vtt`. Returns the files written (names inside `outDir`).
 */
export async function encodeAudioPart(req: TranscodeRequest): Promise<string[]> {
  await mkdir(req.outDir, { recursive: true });
  const sources = new Sources(req);
  const source = await sources.main();
  const { audio, captions } = await pickTracks(req, sources, source);
  const files: string[] = [];
  const args = ['-y', '-progress', 'pipe:1', '-stats_period', '0.5', ...sources.inputs.args];
  if (audio.length > 0) {
    args.push(...audio.flatMap((a) => ['-map', a.map]), ...audioEncoderArgs(req.preset), '-vn', '-sn', '-f', 'mp4', join(req.outDir, 'audio.mp4'));
    files.push('audio.mp4');
  }
  captions.forEach((c, k) => {
    args.push('-map', c.map, '-c:s', 'webvtt', '-f', 'webvtt', join(req.outDir, `sub_${k}.vtt`));
    files.push(`sub_${k}.vtt`);
  });
  if (files.length === 0) return files;
  const parser = progressOf(req, (req.durationMs ?? source.durationMs) / 1000, 0);
  await runFfmpeg(args, { signal: req.signal, redact: sources.redact, onStdout: (c) => parser.push(c), background: true });
  return files;
}

/** Whether a preset's outputs can take the chunked path: it encodes video (a copy or audio alone is one pass anyway). */
export const chunkable = (preset: TranscodeRequest['preset']): boolean => preset.mediaType === 'video' && !preset.noTranscoding && preset.ladder.length > 0;

export interface StitchRequest extends TranscodeRequest {
  /** The chunks' `video.mp4` files, local, in order, with their chunks. */
  chunks: { chunk: SourceChunk; file: string }[];
  /** The audio part's directory (`audio.mp4`, `sub_<k>.vtt`), local. */
  audioDir?: string;
}

/** What the parts of a source encode, read again from it by the step that puts them together: rungs, audio, captions. */
export async function sourceLadder(req: TranscodeRequest) {
  const sources = new Sources(req);
  const source: MediaInfo = await sources.main();
  const { audio, captions } = await pickTracks(req, sources, source);
  const listed = req.tracks.find((t) => t.type === 'Video');
  const stream = (listed && source.streams.find((s) => s.index === listed.index)) || firstVideo(source);
  if (!stream) throw new Error('the source has no video');
  const renditions = planRenditions(req.preset, stream.displayWidth ?? 0, stream.displayHeight ?? 0);
  return { sources, source, audio, captions, renditions };
}

/**
 * Lays the chunks end to end (ffmpeg's concat demuxer: each chunk enters at its source time, so the timestamps run on
 * without a gap) beside the audio encoded once, and packages them as the one-pass encode does, without encoding
 * anything again: the same muxers, finishing steps and encryption (`transcode.ts`).
 */
export async function stitch(req: StitchRequest): Promise<TranscodeResult> {
  const started = performance.now();
  await mkdir(req.outDir, { recursive: true });
  const { sources, source, audio, captions, renditions } = await sourceLadder(req);

  // The concat list: chunk k enters at k's start (`inpoint`, its files' own times) and lasts to the next one's.
  const list = join(req.outDir, '..', `chunks-${Math.random().toString(36).slice(2, 8)}.txt`);
  const quote = (p: string) => `'${p.replace(/'/g, "'\\''")}'`;
  await writeFile(
    list,
    req.chunks
      .map(({ chunk, file }) =>
        [`file ${quote(file)}`, `inpoint ${sec(chunk.startS)}`, ...(chunk.endS === undefined ? [] : [`duration ${sec(chunk.endS - chunk.startS)}`])].join('\n'),
      )
      .join('\n') + '\n',
  );
  const inputs = ['-f', 'concat', '-safe', '0', '-i', list];
  let next = 1;
  const audioInput = audio.length > 0 && req.audioDir ? next++ : -1;
  if (audioInput > 0) inputs.push('-i', join(req.audioDir!, 'audio.mp4'));
  const captionInputs = captions.map(() => next++);
  for (const k of captions.keys()) inputs.push('-i', join(req.audioDir!, `sub_${k}.vtt`));

  const layout: EncodeLayout = {
    outDir: req.outDir,
    preset: req.preset,
    renditions,
    videoMaps: renditions.map((_, i) => `0:v:${i}`),
    audio: audio.map((a, k) => ({ ...a, map: `${audioInput}:a:${k}` })),
    captions: captions.map((c, k) => ({ ...c, map: `${captionInputs[k]}:s:0` })),
    copy: true,
  };
  packagingOf(req.preset);
  // `-copyts`: the chunks' and the audio's times are the source's already, as one pass would have them.
  const args = ['-y', '-progress', 'pipe:1', '-stats_period', '0.5', '-copyts', ...inputs, ...(await outputArgs(layout))];
  const planned = performance.now();
  const publisher = req.publish && !req.preset.protection ? publishWhileEncoding(layout, req.publish) : undefined;
  try {
    await runFfmpeg(args, { signal: req.signal, redact: { ...sources.redact, [list]: 'chunk list' }, background: true });
  } finally {
    await publisher?.stop();
  }
  const encoded = performance.now();
  const endpoints = await finishOutputs({ layout, source, signal: req.signal, redact: sources.redact });
  if (req.encryption && req.preset.protection) await protectOutput(layout, req.encryption);
  const finished = performance.now();
  return transcodeResult({ renditions, audio, captions }, endpoints, source.durationMs, args, publisher?.stored ?? [], [started, planned, encoded, finished]);
}
