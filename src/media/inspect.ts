import { runFfprobe, type RunOptions } from './ffmpeg.ts';

/**
 * What the pipeline needs to know about a source (or an output, in tests): its streams by their index in the file,
 * picture size as displayed (sample aspect ratio and rotation applied), duration. The files module's probe fills the
 * API's tracks; this is the transcoder's own, smaller view.
 */
export interface StreamInfo {
  index: number;
  type: 'video' | 'audio' | 'subtitle' | 'data' | 'attachment';
  codec: string;
  profile?: string;
  level?: number;
  width?: number;
  height?: number;
  /** Picture size a player shows: SAR applied, then rotation. */
  displayWidth?: number;
  displayHeight?: number;
  /** A cover picture in an audio file, not a video track. */
  attachedPicture: boolean;
  frameRate?: number;
  channels?: number;
  sampleRate?: number;
  language?: string;
  title?: string;
  startTime?: number;
  durationMs?: number;
  bitRate?: number;
}

export interface MediaInfo {
  formatName: string;
  durationMs: number;
  startTime: number;
  size?: number;
  bitRate?: number;
  streams: StreamInfo[];
}

const num = (v: unknown): number | undefined => {
  const n = typeof v === 'number' ? v : typeof v === 'string' && v !== 'N/A' ? Number(v) : NaN;
  return Number.isFinite(n) ? n : undefined;
};

const ratio = (v: unknown): number | undefined => {
  if (typeof v !== 'string') return undefined;
  const [a, b] = v.split(':').length === 2 ? v.split(':') : v.split('/');
  const n = Number(a) / Number(b);
  return Number.isFinite(n) && n > 0 ? n : undefined;
};

/**
 * The version of `MediaInfo`'s shape. A source's probe is kept with its file when the upload completes, so that an
 * encode need not probe again (docs/decisions/vod-assets.md, "Fast start"); one kept under another version is taken
 * again. Raise it whenever `mediaInfoOf` reads a field more or reads one differently.
 */
export const MEDIA_INFO_VERSION = 1;

/** `inputArgs` go before the input (`-allowed_extensions ALL` lets the DASH reader open side-loaded `.vtt` captions). */
export async function inspect(input: string, opts: RunOptions & { inputArgs?: string[] } = {}): Promise<MediaInfo> {
  return mediaInfoOf(JSON.parse(await runFfprobe(['-show_format', '-show_streams', '-of', 'json', ...(opts.inputArgs ?? []), input], opts)));
}

/** The transcoder's view of ffprobe's JSON answer (`-show_format -show_streams -of json`). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- ffprobe's JSON is read field by field
export function mediaInfoOf(json: { format?: Record<string, any>; streams?: Record<string, any>[] }): MediaInfo {
  const format = json.format ?? {};
  const streams = (json.streams ?? []).map(streamInfo);
  const durationMs = Math.round((num(format.duration) ?? Math.max(0, ...streams.map((s) => (s.durationMs ?? 0) / 1000))) * 1000);
  return {
    formatName: String(format.format_name ?? ''),
    durationMs,
    startTime: num(format.start_time) ?? 0,
    size: num(format.size),
    bitRate: num(format.bit_rate),
    streams,
  };
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- ffprobe's JSON is read field by field
function streamInfo(s: Record<string, any>): StreamInfo {
  const type = (['video', 'audio', 'subtitle', 'data', 'attachment'].includes(s.codec_type) ? s.codec_type : 'data') as StreamInfo['type'];
  const info: StreamInfo = {
    index: Number(s.index),
    type,
    codec: String(s.codec_name ?? 'unknown'),
    profile: typeof s.profile === 'string' ? s.profile : undefined,
    level: num(s.level),
    attachedPicture: s.disposition?.attached_pic === 1,
    language: s.tags?.language && s.tags.language !== 'und' ? String(s.tags.language) : undefined,
    title: s.tags?.title ? String(s.tags.title) : undefined,
    startTime: num(s.start_time),
    durationMs: num(s.duration) !== undefined ? Math.round(num(s.duration)! * 1000) : undefined,
    bitRate: num(s.bit_rate),
  };
  if (type === 'video') {
    info.width = num(s.width);
    info.height = num(s.height);
    info.frameRate = ratio(s.avg_frame_rate) ?? ratio(s.r_frame_rate);
    if (info.width && info.height) {
      const sar = ratio(s.sample_aspect_ratio) ?? 1;
      const w = Math.round(info.width * sar);
      const quarterTurn = Math.abs(rotationOf(s)) % 180 === 90;
      info.displayWidth = quarterTurn ? info.height : w;
      info.displayHeight = quarterTurn ? w : info.height;
    }
  }
  if (type === 'audio') {
    info.channels = num(s.channels);
    info.sampleRate = num(s.sample_rate);
  }
  return info;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- ffprobe's JSON is read field by field
function rotationOf(s: Record<string, any>): number {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- ffprobe's JSON is read field by field
  const side = (s.side_data_list as Record<string, any>[] | undefined)?.find((d) => d.rotation !== undefined);
  return num(side?.rotation) ?? num(s.tags?.rotate) ?? 0;
}

/** The first real video track (cover pictures excluded), the one the spec assigns automatically. */
export const firstVideo = (info: MediaInfo): StreamInfo | undefined => info.streams.find((s) => s.type === 'video' && !s.attachedPicture);

/** Still images (png, jpeg, webp, bmp…) as opposed to video files; overlays loop the former. */
export const isStillImage = (info: MediaInfo): boolean =>
  /^(image2|.*_pipe)$/.test(info.formatName) ||
  (info.streams.length === 1 && ['png', 'mjpeg', 'webp', 'bmp'].includes(info.streams[0].codec) && !(info.durationMs > 0));
