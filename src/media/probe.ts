import { MediaError, MediaToolMissingError, redact, runFfprobe } from './ffmpeg.ts';
import type { FileType } from './fileTypes.ts';
import { mediaInfoOf, type MediaInfo } from './inspect.ts';
import { normalizeLanguage } from './languages.ts';

type TrackType = 'Video' | 'Audio' | 'Caption';

/** One track of a media file, in the spec's TranscodingTrack terms plus what the pipeline needs to plan a ladder. */
export interface MediaTrack {
  /** ffprobe's stream index: what `-map 0:<trackId>` selects. */
  trackId: string;
  type: TrackType;
  language?: string;
  name: string;
  codec: string;
  width?: number;
  height?: number;
  /** Frames per second (a video's average rate, 29.97 for 30000/1001). */
  frameRate?: number;
  durationMs?: number;
  /** Bits per second, when the container or the stream says. */
  bitRate?: number;
  channels?: number;
  sampleRate?: number;
}

/** What the files API reports of a stored file (`inspect.ts` is the transcoder's own view of a source). */
export interface ProbedFile {
  formatName: string;
  durationMs?: number;
  /** The whole file's bits per second. */
  bitRate?: number;
  /** Video when there is a picture, Audio when there is sound only, Caption for subtitle files. */
  fileType: FileType;
  tracks: MediaTrack[];
  /** The same answer as the transcoder reads it, kept with the file so that its encodes need not probe again. */
  mediaInfo: MediaInfo;
}

/** ffprobe could not read the input as media (not a media file, or damaged). */
/** ffprobe itself cannot run (not installed, FFPROBE_PATH wrong): the platform's fault, not the file's. */
export class ProbeUnavailableError extends Error {}

export class NotMediaError extends Error {}

const TYPES: Record<string, TrackType> = { video: 'Video', audio: 'Audio', subtitle: 'Caption' };
/** Below this, ffprobe guessed a format from a few matching bytes (random data can look like MP3): not media. */
const MIN_PROBE_SCORE = 25;

interface FfprobeStream {
  index: number;
  codec_type?: string;
  codec_name?: string;
  width?: number;
  height?: number;
  channels?: number;
  sample_rate?: string;
  avg_frame_rate?: string;
  r_frame_rate?: string;
  duration?: string;
  bit_rate?: string;
  disposition?: Record<string, number>;
  tags?: Record<string, string>;
}

interface FfprobeOutput {
  streams?: FfprobeStream[];
  format?: { format_name?: string; duration?: string; bit_rate?: string; probe_score?: number };
}

/**
 * ffprobe through the one runner (`ffmpeg.ts`), its failures said in the files API's terms. Tenants read these
 * messages: the input (a host path or a signed URL) is told as `name`, and the configured path of the binary is left
 * out (the host's business).
 */
async function run(input: string, timeoutMs: number, name: string): Promise<FfprobeOutput> {
  let stdout: string;
  try {
    stdout = await runFfprobe(['-print_format', 'json', '-show_format', '-show_streams', input], {
      signal: AbortSignal.timeout(timeoutMs),
      redact: { [input]: name },
    });
  } catch (e) {
    if (e instanceof MediaToolMissingError) throw new ProbeUnavailableError('ffprobe was not found; the operator must install ffmpeg or set FFPROBE_PATH');
    if (e instanceof MediaError)
      throw new NotMediaError(
        redact(e.stderrTail, { [input]: name })
          .trim()
          .split('\n')
          .at(-1) || 'ffprobe could not read the file',
      );
    throw new NotMediaError(`ffprobe did not finish reading the file within ${timeoutMs} ms`);
  }
  try {
    return JSON.parse(stdout) as FfprobeOutput;
  } catch {
    throw new NotMediaError('ffprobe gave no readable answer');
  }
}

/**
 * Reads a media file's tracks and duration with ffprobe; `input` is a local path or a URL ffprobe can open. Errors
 * call the input `name` (a store key, say): they reach tenants, and the input is the host's path or a signed URL.
 */
export async function probeMedia(input: string, { timeoutMs = 30_000, name = 'the file' } = {}): Promise<ProbedFile> {
  const out = await run(input, timeoutMs, name);
  if ((out.format?.probe_score ?? 0) < MIN_PROBE_SCORE) throw new NotMediaError('the file is not in a media format ffprobe recognises');
  const counts: Record<TrackType, number> = { Video: 0, Audio: 0, Caption: 0 };
  const tracks: MediaTrack[] = [];
  for (const s of out.streams ?? []) {
    const type = TYPES[s.codec_type ?? ''];
    // Cover art travels as a one-frame video stream; it is no video track.
    if (!type || s.disposition?.attached_pic) continue;
    counts[type]++;
    const language = normalizeLanguage(s.tags?.language);
    tracks.push({
      trackId: String(s.index),
      type,
      ...(language ? { language } : {}),
      name: s.tags?.title || `${type} ${counts[type]}`,
      codec: s.codec_name ?? 'unknown',
      ...defined({
        width: type === 'Video' ? s.width : undefined,
        height: type === 'Video' ? s.height : undefined,
        frameRate: type === 'Video' ? (frameRate(s.avg_frame_rate) ?? frameRate(s.r_frame_rate)) : undefined,
        durationMs: milliseconds(Number(s.duration)) ?? milliseconds(clockSeconds(s.tags?.DURATION)),
        // Matroska keeps a stream's rate in its statistics tags (BPS), MP4 in the stream itself.
        bitRate: positive(Number(s.bit_rate)) ?? positive(Number(s.tags?.BPS)),
        channels: type === 'Audio' ? s.channels : undefined,
        sampleRate: type === 'Audio' ? positive(Number(s.sample_rate)) : undefined,
      }),
    });
  }
  if (!tracks.length) throw new NotMediaError('the file has no video, audio or subtitle track');
  const bitRate = positive(Number(out.format?.bit_rate));
  return {
    formatName: out.format?.format_name ?? 'unknown',
    durationMs: milliseconds(Number(out.format?.duration)),
    ...(bitRate ? { bitRate } : {}),
    fileType: counts.Video ? 'Video' : counts.Audio ? 'Audio' : 'Caption',
    tracks,
    mediaInfo: mediaInfoOf(out),
  };
}

const positive = (n: number): number | undefined => (Number.isFinite(n) && n > 0 ? Math.round(n) : undefined);
const milliseconds = (seconds: number | undefined): number | undefined => positive((seconds ?? NaN) * 1000);

/** ffprobe's rates are fractions (`30000/1001`); `0/0` is its "unknown". Rounded to 3 decimals (29.97). */
function frameRate(rate: string | undefined): number | undefined {
  const [n, d] = (rate ?? '').split('/').map(Number);
  if (!(n > 0 && d > 0)) return undefined;
  return Math.round((n / d) * 1000) / 1000;
}

/** Matroska's DURATION tag: `00:00:02.000000000`. */
function clockSeconds(clock: string | undefined): number | undefined {
  const m = /^(\d+):(\d{2}):(\d{2}(?:\.\d+)?)$/.exec(clock ?? '');
  return m ? Number(m[1]) * 3600 + Number(m[2]) * 60 + Number(m[3]) : undefined;
}

/** Leaves out what ffprobe did not say (a JSON column and an API answer carry no undefined). */
function defined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
