import type { Preset } from './preset.ts';
import { MediaError } from './ffmpeg.ts';
import { firstVideo, inspect, isStillImage, type MediaInfo, type StreamInfo } from './inspect.ts';
import { planRenditions, scaleGraph, type PlannedRendition } from './ladder.ts';
import { overlayFilterGraph, overlayInputArgs, overlayWindows, placementProblems, type PlacedOverlay } from './overlays.ts';
import { fastStartArgs, outputArgs, packagingOf, startsFast, type EncodeLayout, type OutputTrack } from './packaging.ts';
import type { OutputEncryption } from './protect.ts';
import type { PublishSink } from './progressive.ts';

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
  /** The source's probe, taken when it was uploaded: an encode that starts from it spawns no ffprobe first. */
  sourceInfo?: MediaInfo;
  /** Selected tracks. The first video track is used when none is listed; audio only when listed (spec). */
  tracks: SourceTrack[];
  preset: Preset;
  overlays?: PlacedOverlay[];
  /** An empty local directory that receives the output files. */
  outDir: string;
  /** Called synchronously as ffmpeg reports; if it throws, ffmpeg is killed and the transcode fails with that error. */
  onProgress?: (percent: number) => void;
  signal?: AbortSignal;
  /** The key of a preset with `protection` (required then): the finished output is encrypted with it. */
  encryption?: OutputEncryption;
  /**
   * Where the streaming output is published while it is encoded (progressive.ts). Not used for a preset with
   * `protection`: its segments are encrypted only once the encode is done, and clear ones must never be served.
   */
  publish?: PublishSink;
}

/** The encoding step, planned: the exact ffmpeg arguments, and what the finishing steps need to know about them. */
export interface TranscodePlan {
  args: string[];
  /** An HLS fast start (`startsFast`): `args` encodes the video rungs only, and the caller writes the master playlist. */
  fastStart: boolean;
  /** A fast start's second process, when the output has audio or captions: they are made beside `args`. */
  sideArgs?: string[];
  layout: EncodeLayout;
  source: MediaInfo;
  durationMs: number;
  /** Paths and URLs error messages must not show, with what to say instead. */
  redact: Record<string, string>;
}

const TEXT_SUBTITLES = new Set([
  'subrip',
  'srt',
  'ass',
  'ssa',
  'webvtt',
  'mov_text',
  'text',
  'microdvd',
  'subviewer',
  'subviewer1',
  'jacosub',
  'realtext',
  'sami',
  'stl',
  'pjs',
  'vplayer',
  'mpl2',
]);
const COPYABLE_VIDEO = new Set(['h264', 'hevc']);
const COPYABLE_AUDIO = new Set(['aac', 'mp3', 'ac3', 'eac3']);

/** ffmpeg's inputs in order, each with its options; a file named twice is opened once. */
class Inputs {
  readonly args: string[] = [];
  private readonly index = new Map<string, number>();
  private count = 0;

  /** `shared`: later tracks of the same file read this input (a seek of the chunked path applies to all of them). */
  add(source: string, options: string[] = [], shared = options.length === 0): number {
    const known = this.index.get(source);
    if (known !== undefined && options.length === 0) return known;
    this.args.push(...options, '-i', source);
    if (shared) this.index.set(source, this.count);
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

export type Picked = { input: number; stream: StreamInfo };

/** The files of one request: each read once, each given an ffmpeg input index, each named in error messages. */
export class Sources {
  readonly inputs = new Inputs();
  readonly redact: Record<string, string>;
  private readonly infos = new Map<string, MediaInfo>();

  constructor(private readonly req: TranscodeRequest) {
    this.redact = { [req.outDir]: 'output', [req.input]: 'source' };
  }

  /** `options`: input options of the main file (a chunk's seek), which every track read from it shares. */
  async main(options: (info: MediaInfo) => string[] = () => []): Promise<MediaInfo> {
    const info = this.req.sourceInfo ?? (await inspectOrFail(this.req.input, 'The source', this.redact, this.req.signal));
    this.infos.set(this.req.input, info);
    this.inputs.add(this.req.input, options(info), true);
    return info;
  }

  /** The stream a listed track names, checked to be of the expected kind. */
  async track(t: SourceTrack, expected: StreamInfo['type'], what: string): Promise<Picked> {
    const file = t.input ?? this.req.input;
    if (!this.infos.has(file)) {
      this.redact[file] = `${what} file`;
      this.infos.set(file, await inspectOrFail(file, `The ${what} file`, this.redact, this.req.signal));
    }
    const stream = this.infos.get(file)!.streams.find((s) => s.index === t.index);
    if (!stream || stream.type !== expected) {
      throw new MediaError(
        `${what[0].toUpperCase()}${what.slice(1)} track ${t.index} is not a${expected === 'audio' ? 'n' : ''} ${expected} stream of its file`,
      );
    }
    return { input: this.inputs.add(file), stream };
  }

  async overlay(o: PlacedOverlay, i: number): Promise<PlacedOverlay & { still: boolean }> {
    this.redact[o.source] = `overlay ${i + 1} input`;
    const info = await inspectOrFail(o.source, `The picture of overlay ${i + 1}`, this.redact, this.req.signal);
    return { ...o, still: isStillImage(info) };
  }
}

/** The tracks the output carries: the listed video (else the source's first), and only the listed audio and captions. */
export async function pickTracks(req: TranscodeRequest, sources: Sources, source: MediaInfo) {
  const { preset } = req;
  let video: Picked | undefined;
  if (preset.mediaType === 'video') {
    const listed = req.tracks.find((t) => t.type === 'Video');
    const first = firstVideo(source);
    video = listed ? await sources.track(listed, 'video', 'video') : first && { input: 0, stream: first };
    if (!video) throw new MediaError(`The source has no video track; preset ${preset.id} makes video (use an audio preset for audio files)`);
    if (preset.noTranscoding && !COPYABLE_VIDEO.has(video.stream.codec)) {
      throw new MediaError(`Preset ${preset.id} copies video without re-encoding, but the source video is ${video.stream.codec}; it needs H.264 or HEVC`);
    }
  }

  const audio: OutputTrack[] = [];
  for (const t of req.tracks.filter((t) => t.type === 'Audio')) {
    const { input, stream } = await sources.track(t, 'audio', 'audio');
    if (preset.noTranscoding && !COPYABLE_AUDIO.has(stream.codec)) {
      throw new MediaError(
        `Preset ${preset.id} copies audio without re-encoding, but audio track ${t.index} is ${stream.codec}; it needs AAC, MP3, AC-3 or E-AC-3`,
      );
    }
    audio.push({ map: `${input}:${stream.index}`, name: label(t, stream, audio.length, 'Audio'), language: t.language ?? stream.language });
  }
  if (preset.mediaType === 'audio' && audio.length === 0) {
    throw new MediaError(`Preset ${preset.id} makes audio only, but no audio track was selected (audio tracks are never assigned automatically)`);
  }

  const captions: OutputTrack[] = [];
  for (const t of req.tracks.filter((t) => t.type === 'Caption')) {
    const { input, stream } = await sources.track(t, 'subtitle', 'caption');
    if (!TEXT_SUBTITLES.has(stream.codec)) {
      throw new MediaError(`Caption track ${t.index} is ${stream.codec}, a picture-based subtitle format that cannot be converted to WebVTT text`);
    }
    captions.push({ map: `${input}:${stream.index}`, name: label(t, stream, captions.length, 'Subtitles'), language: t.language ?? stream.language });
  }
  return { video, audio, captions };
}

/**
 * The picture side: the rungs, and the filter graph that burns the overlays in and scales to each rung (or a copy).
 * `trim`: the chunked path's source times (seconds, as the input's timestamps read) of the one chunk to encode.
 */
export async function planVideo(req: TranscodeRequest, sources: Sources, video: Picked, trim?: { start: number; end?: number }) {
  const s = video.stream;
  const width = s.displayWidth ?? 0;
  const height = s.displayHeight ?? 0;
  const source = `${video.input}:${s.index}`;
  if (req.preset.noTranscoding) {
    // The source stream as it is: one "rung" of its own size (bitrate for information; nothing is encoded).
    const rendition: PlannedRendition = {
      name: `${height}p`,
      width,
      height,
      pictureWidth: width,
      pictureHeight: height,
      videoBitrateKbps: Math.round((s.bitRate ?? 0) / 1000),
      maxrateKbps: 0,
      profile: 'high',
    };
    return { graph: [], renditions: [rendition], videoMaps: [source] };
  }
  if (!(width > 0 && height > 0)) throw new MediaError('The source video has no picture size');
  const renditions = planRenditions(req.preset, width, height);
  const graph: string[] = [];
  let picture = source;
  if (trim) {
    // Cut by the frames' own times, start included and end excluded: neighbouring chunks share no frame and miss none.
    graph.push(`[${source}]trim=start=${trim.start.toFixed(6)}${trim.end === undefined ? '' : `:end=${trim.end.toFixed(6)}`}[trimmed]`);
    picture = 'trimmed';
  }
  const overlays = req.overlays ?? [];
  if (overlays.length > 0) {
    const placed = [];
    for (const [i, o] of overlays.entries()) placed.push(await sources.overlay(o, i));
    const windows = overlayWindows(placed, s.frameRate);
    const indices = windows.map((w) => sources.inputs.addRaw(overlayInputArgs(w, s.frameRate ?? 30)));
    const burned = overlayFilterGraph(windows, indices[0], picture);
    graph.push(...burned.graph);
    picture = burned.out;
  }
  const scaled = scaleGraph(picture, renditions);
  return { graph: [...graph, ...scaled.graph], renditions, videoMaps: scaled.outputs.map((o) => `[${o}]`) };
}

/**
 * Reads the source, checks the request against it and the preset, and builds the one ffmpeg command that encodes the
 * whole ladder. Everything a user can get wrong is reported here as a MediaError with a message they can act on.
 */
export async function planTranscode(req: TranscodeRequest): Promise<TranscodePlan> {
  const { preset } = req;
  packagingOf(preset); // refuses a preset that combines packagings we cannot make from one encode
  if (preset.protection && req.encryption?.scheme !== preset.protection.scheme) {
    throw new MediaError(`Preset ${preset.id} encrypts its output (${preset.protection.scheme}), but no key of that scheme was given`);
  }
  const sources = new Sources(req);
  const source = await sources.main();
  const { video, audio, captions } = await pickTracks(req, sources, source);
  // The files the audio and captions come from: every input so far (the overlays' pictures come after).
  const trackInputs = [...sources.inputs.args];

  const overlays = req.overlays ?? [];
  if (overlays.length > 0 && (preset.noTranscoding || !video)) {
    throw new MediaError(`Preset ${preset.id} does not encode video, so overlays cannot be burned in`);
  }
  const problems = placementProblems(overlays);
  if (problems.length > 0) throw new MediaError(`Invalid overlay: ${problems.map((p) => `${p.field} ${p.message}`).join('; ')}`);

  const { graph, renditions, videoMaps } = video ? await planVideo(req, sources, video) : { graph: [], renditions: [], videoMaps: [] };
  const layout: EncodeLayout = { outDir: req.outDir, preset, renditions, videoMaps, audio, captions };
  const head = ['-y', '-progress', 'pipe:1', '-stats_period', '0.5'];
  const filters = graph.length > 0 ? ['-filter_complex', graph.join(';')] : [];
  const plan = { layout, source, durationMs: req.durationMs ?? source.durationMs, redact: sources.redact };
  // Only an output published while it encodes has a first segment worth hurrying.
  const fast = req.publish !== undefined && startsFast(layout);
  if (fast && packagingOf(preset).streaming === 'hls') {
    const { video: videoArgs, side } = await fastStartArgs(layout);
    return {
      ...plan,
      fastStart: true,
      args: [...head, ...sources.inputs.args, ...filters, ...videoArgs],
      sideArgs: side.length > 0 ? ['-y', ...trackInputs, ...side] : undefined,
    };
  }
  return { ...plan, fastStart: false, args: [...head, ...sources.inputs.args, ...filters, ...(await outputArgs(layout, { fast }))] };
}
