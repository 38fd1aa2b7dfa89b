import type { Preset } from '../modules/transcoder/presets.ts';
import { MediaError } from './ffmpeg.ts';
import { firstVideo, inspect, isStillImage, type MediaInfo, type StreamInfo } from './inspect.ts';
import { planRenditions, scaleGraph, type PlannedRendition } from './ladder.ts';
import { overlayFilterGraph, overlayInputArgs, overlayWindows, placementProblems, type PlacedOverlay } from './overlays.ts';
import { outputArgs, packagingOf, type EncodeLayout, type OutputTrack } from './packaging.ts';

/** A track picked in the request (the spec's TranscodingTrack, resolved by the caller to a stream index). */
export interface SourceTrack {
  type: 'Video' | 'Audio' | 'Caption';
  /** The stream's index in its file, as ffprobe numbers it. */
  index: number;
  /** The file holding the track when it is not the main input: a separate audio or caption file (path or URL). */
  input?: string;
  language?: string;
  name?: string;
}

export interface TranscodeRequest {
  /** The source: a local path or a URL ffmpeg can read (a presigned GET on S3). */
  input: string;
  /** The source duration (from the file's probe); progress is measured against it. Probed when omitted. */
  durationMs?: number;
  /** Selected tracks. The first video track is used when none is listed; audio only when listed (spec). */
  tracks: SourceTrack[];
  preset: Preset;
  overlays?: PlacedOverlay[];
  /** An empty local directory that receives the output files. */
  outDir: string;
  onProgress?: (percent: number) => void;
  signal?: AbortSignal;
}

/** The encoding step, planned: the exact ffmpeg arguments, and what the finishing steps need to know about them. */
export interface TranscodePlan {
  args: string[];
  layout: EncodeLayout;
  source: MediaInfo;
  durationMs: number;
  /** Paths and URLs error messages must not show, with what to say instead. */
  redact: Record<string, string>;
}

const TEXT_SUBTITLES = new Set(['subrip', 'srt', 'ass', 'ssa', 'webvtt', 'mov_text', 'text', 'microdvd', 'subviewer', 'subviewer1', 'jacosub', 'realtext', 'sami', 'stl', 'pjs', 'vplayer', 'mpl2']);
const COPYABLE_VIDEO = new Set(['h264', 'hevc']);
const COPYABLE_AUDIO = new Set(['aac', 'mp3', 'ac3', 'eac3']);

/** ffmpeg's inputs in order, each with its options; a file named twice is opened once. */
class Inputs {
  readonly args: string[] = [];
  private readonly index = new Map<string, number>();
  private count = 0;

  add(source: string, options: string[] = []): number {
    const known = this.index.get(source);
    if (known !== undefined && options.length === 0) return known;
    this.args.push(...options, '-i', source);
    if (options.length === 0) this.index.set(source, this.count);
    return this.count++;
  }

  /** Adds an input whose options already end with `-i <source>`. */
  addRaw(args: string[]): number {
    this.args.push(...args);
    return this.count++;
  }
}

async function inspectOrFail(source: string, what: string, redact: Record<string, string>, signal?: AbortSignal): Promise<MediaInfo> {
  try {
    return await inspect(source, { signal, redact });
  } catch (e) {
    if (signal?.aborted || !(e instanceof MediaError)) throw e;
    throw new MediaError(`${what} could not be read as media: ${e.message.replace(/^ffprobe failed: /, '')}`, e.exitCode, e.stderrTail);
  }
}

const label = (t: SourceTrack, s: StreamInfo, k: number, kind: string) => t.name || t.language || s.title || s.language || `${kind} ${k + 1}`;

/**
 * Reads the source, checks the request against it and the preset, and builds the one ffmpeg command that encodes the
 * whole ladder. Everything a user can get wrong is reported here as a MediaError with a message they can act on.
 */
export async function planTranscode(req: TranscodeRequest): Promise<TranscodePlan> {
  const { preset, signal } = req;
  const redact: Record<string, string> = { [req.outDir]: 'output', [req.input]: 'source' };
  packagingOf(preset); // refuses a preset that combines packagings we cannot make from one encode
  const source = await inspectOrFail(req.input, 'The source', redact, signal);
  const infos = new Map<string, MediaInfo>([[req.input, source]]);
  const inputs = new Inputs();
  inputs.add(req.input);

  const streamOf = async (t: SourceTrack, expected: StreamInfo['type'], what: string): Promise<{ input: number; stream: StreamInfo }> => {
    const file = t.input ?? req.input;
    if (!infos.has(file)) {
      redact[file] = `${what} file`;
      infos.set(file, await inspectOrFail(file, `The ${what} file`, redact, signal));
    }
    const stream = infos.get(file)!.streams.find((s) => s.index === t.index);
    if (!stream || stream.type !== expected) {
      throw new MediaError(`${what[0].toUpperCase()}${what.slice(1)} track ${t.index} is not a${expected === 'audio' ? 'n' : ''} ${expected} stream of its file`);
    }
    return { input: inputs.add(file), stream };
  };

  // Video: the listed one, else the first one (the spec assigns it automatically); none for audio presets.
  let video: { input: number; stream: StreamInfo } | undefined;
  if (preset.mediaType === 'video') {
    const listed = req.tracks.find((t) => t.type === 'Video');
    if (listed) video = await streamOf(listed, 'video', 'video');
    else {
      const first = firstVideo(source);
      if (first) video = { input: 0, stream: first };
    }
    if (!video) throw new MediaError(`The source has no video track; preset ${preset.id} makes video (use an audio preset for audio files)`);
  }

  const audio: OutputTrack[] = [];
  for (const t of req.tracks.filter((t) => t.type === 'Audio')) {
    const { input, stream } = await streamOf(t, 'audio', 'audio');
    if (preset.noTranscoding && !COPYABLE_AUDIO.has(stream.codec)) {
      throw new MediaError(`Preset ${preset.id} copies audio without re-encoding, but audio track ${t.index} is ${stream.codec}; it needs AAC, MP3, AC-3 or E-AC-3`);
    }
    audio.push({ map: `${input}:${stream.index}`, name: label(t, stream, audio.length, 'Audio'), language: t.language ?? stream.language });
  }
  if (preset.mediaType === 'audio' && audio.length === 0) {
    throw new MediaError(`Preset ${preset.id} makes audio only, but no audio track was selected (audio tracks are never assigned automatically)`);
  }

  const captions: OutputTrack[] = [];
  for (const t of req.tracks.filter((t) => t.type === 'Caption')) {
    const { input, stream } = await streamOf(t, 'subtitle', 'caption');
    if (!TEXT_SUBTITLES.has(stream.codec)) {
      throw new MediaError(`Caption track ${t.index} is ${stream.codec}, a picture-based subtitle format that cannot be converted to WebVTT text`);
    }
    captions.push({ map: `${input}:${stream.index}`, name: label(t, stream, captions.length, 'Subtitles'), language: t.language ?? stream.language });
  }

  const overlays = req.overlays ?? [];
  if (overlays.length > 0 && (preset.noTranscoding || !video)) {
    throw new MediaError(`Preset ${preset.id} does not encode video, so overlays cannot be burned in`);
  }
  const problems = placementProblems(overlays);
  if (problems.length > 0) throw new MediaError(`Invalid overlay: ${problems.map((p) => `${p.field} ${p.message}`).join('; ')}`);

  const graph: string[] = [];
  let renditions: PlannedRendition[] = [];
  let videoMaps: string[] = [];
  if (video) {
    const s = video.stream;
    const width = s.displayWidth ?? 0;
    const height = s.displayHeight ?? 0;
    if (preset.noTranscoding) {
      if (!COPYABLE_VIDEO.has(s.codec)) throw new MediaError(`Preset ${preset.id} copies video without re-encoding, but the source video is ${s.codec}; it needs H.264 or HEVC`);
      renditions = [{ name: `${height}p`, width, height, pictureWidth: width, pictureHeight: height, videoBitrateKbps: Math.round((s.bitRate ?? 0) / 1000), maxrateKbps: 0, profile: 'high' }];
      videoMaps = [`${video.input}:${s.index}`];
    } else {
      if (!(width > 0 && height > 0)) throw new MediaError('The source video has no picture size');
      renditions = planRenditions(preset, width, height);
      let picture = `${video.input}:${s.index}`;
      if (overlays.length > 0) {
        const placed = [];
        for (const [i, o] of overlays.entries()) {
          redact[o.source] = `overlay ${i + 1} input`;
          const info = await inspectOrFail(o.source, `The picture of overlay ${i + 1}`, redact, signal);
          placed.push({ ...o, still: isStillImage(info) });
        }
        const windows = overlayWindows(placed, s.frameRate);
        const indices = windows.map((w) => inputs.addRaw(overlayInputArgs(w, s.frameRate ?? 30)));
        const burned = overlayFilterGraph(windows, indices[0], picture);
        graph.push(...burned.graph);
        picture = burned.out;
      }
      const scaled = scaleGraph(picture, renditions);
      graph.push(...scaled.graph);
      videoMaps = scaled.outputs.map((o) => `[${o}]`);
    }
  }

  const layout: EncodeLayout = { outDir: req.outDir, preset, renditions, videoMaps, audio, captions };
  const args = [
    '-y',
    '-progress', 'pipe:1',
    '-stats_period', '0.5',
    ...inputs.args,
    ...(graph.length > 0 ? ['-filter_complex', graph.join(';')] : []),
    ...(await outputArgs(layout)),
  ];
  return { args, layout, source, durationMs: req.durationMs ?? source.durationMs, redact };
}
