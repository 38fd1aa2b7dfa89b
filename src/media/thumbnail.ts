import { readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { runFfmpeg } from './ffmpeg.ts';

/**
 * Pictures made on request from an asset's video (docs/decisions/streaming.md, "Thumbnails on the fly"): a still at any
 * time and size, and an animated preview of a range. The video is a file ffmpeg seeks in, or an HLS media playlist
 * (a recording, a live channel's window), of which only the segments the picture needs are read.
 */

/** How a picture fits the asked size: Mux's `fit_mode` values, less its smart crop. */
export const FIT_MODES = ['preserve', 'stretch', 'crop', 'pad'] as const;
export type FitMode = (typeof FIT_MODES)[number];

export interface PictureSize {
  width?: number;
  height?: number;
  fit: FitMode;
}

/** The video a picture is made of: a location ffmpeg opens, or an HLS media playlist's text naming such locations. */
export interface PictureSource {
  location?: string;
  playlist?: string;
}

/** What ffmpeg reads for a picture at `atS` (seconds into the video) or of a range: its input and where to start in it. */
interface Located {
  inputArgs: string[];
  input: string;
  /** Seconds into `input` of the first frame wanted. */
  offsetS: number;
  /** An HLS input: an output-side seek (a segment's timestamps need not start at 0). */
  hls: boolean;
}

const isPlaylist = (location: string) => /\.m3u8(\?|$)/.test(location);

async function readLocation(location: string): Promise<string> {
  if (/^https?:\/\//.test(location)) {
    const res = await fetch(location);
    if (!res.ok) throw new Error(`the video's playlist answered ${res.status}`);
    return res.text();
  }
  return readFile(location, 'utf8');
}

const resolve = (uri: string, base: string) =>
  /^[a-z]+:/i.test(uri) || uri.startsWith('/') ? uri : /^https?:\/\//.test(base) ? new URL(uri, base).toString() : join(dirname(base), uri);

/** The first variant of a master playlist (the ladder's top, listed first), else the playlist itself. */
async function mediaPlaylistOf(location: string): Promise<{ text: string; base: string }> {
  const text = await readLocation(location);
  if (!text.includes('#EXT-X-STREAM-INF')) return { text, base: location };
  const variant = text.split('\n').find((l) => l.trim() && !l.startsWith('#'));
  if (!variant) throw new Error('the video has no variant');
  const base = resolve(variant.trim(), location);
  return { text: await readLocation(base), base };
}

interface PlaylistSegment {
  uri: string;
  durationS: number;
  /** An fMP4 segment's initialisation segment (`#EXT-X-MAP`). */
  map?: string;
}

/** A media playlist's segments, each with the initialisation segment it plays after. */
function segmentsOf(text: string): PlaylistSegment[] {
  const segments: PlaylistSegment[] = [];
  let pending: number | undefined;
  let map: string | undefined;
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (line.startsWith('#EXT-X-MAP:')) map = /URI="([^"]+)"/.exec(line)?.[1];
    else if (line.startsWith('#EXTINF:')) pending = Number.parseFloat(line.slice(8));
    else if (line && !line.startsWith('#') && pending !== undefined) {
      segments.push({ uri: line, durationS: pending, ...(map ? { map } : {}) });
      pending = undefined;
    }
  }
  return segments;
}

const HLS_INPUT = ['-allowed_extensions', 'ALL', '-protocol_whitelist', 'file,crypto,data,http,https,tcp,tls'];

/**
 * Where the frames from `startS` (to `endS`) are: a file is sought in directly; of a playlist, the segments that hold
 * the range are laid in a playlist of their own (`work`: a folder for it), so ffmpeg reads nothing before them.
 * `startS` `'latest'`: the first frame of the newest segment (a live channel's latest picture).
 */
export async function locatePicture(source: PictureSource, startS: number | 'latest', endS: number | undefined, work: string): Promise<Located> {
  let text = source.playlist;
  let base = '';
  if (text === undefined) {
    const location = source.location!;
    if (!isPlaylist(location)) {
      if (startS === 'latest') throw new Error('a file has no latest picture');
      return { inputArgs: ['-ss', startS.toFixed(3)], input: location, offsetS: 0, hls: false };
    }
    ({ text, base } = await mediaPlaylistOf(location));
  }
  const segments = segmentsOf(text);
  if (segments.length === 0) throw new Error('the video has no segment yet');
  const picked: PlaylistSegment[] = [];
  let offsetS = 0;
  if (startS === 'latest') picked.push(segments.at(-1)!);
  else {
    let at = 0;
    for (const s of segments) {
      const end = at + s.durationS;
      if (end > startS && at < (endS ?? startS + 1e-6)) {
        if (picked.length === 0) offsetS = Math.max(0, startS - at);
        picked.push(s);
      }
      at = end;
    }
  }
  // Past the end: the last frame of the last segment.
  if (picked.length === 0) {
    picked.push(segments.at(-1)!);
    offsetS = Math.max(0, segments.at(-1)!.durationS - 0.1);
  }
  const playlist = join(work, 'range.m3u8');
  const target = Math.ceil(Math.max(...picked.map((s) => s.durationS)));
  const lines = ['#EXTM3U', '#EXT-X-VERSION:7', `#EXT-X-TARGETDURATION:${target}`, '#EXT-X-PLAYLIST-TYPE:VOD'];
  const at = (uri: string) => (base ? resolve(uri, base) : uri);
  let map: string | undefined;
  for (const s of picked) {
    if (s.map && s.map !== map) lines.push(...(map ? ['#EXT-X-DISCONTINUITY'] : []), `#EXT-X-MAP:URI="${at(s.map)}"`);
    map = s.map;
    lines.push(`#EXTINF:${s.durationS.toFixed(6)},`, at(s.uri));
  }
  await writeFile(playlist, `${lines.join('\n')}\n#EXT-X-ENDLIST\n`);
  return { inputArgs: HLS_INPUT, input: playlist, offsetS, hls: true };
}

/** The filters that bring a picture to the asked size (square pixels first: a source may have another aspect). */
export function sizeFilter({ width, height, fit }: PictureSize): string {
  const square = 'scale=trunc(iw*sar/2)*2:ih,setsar=1';
  if (width === undefined && height === undefined) return square;
  if (width === undefined || height === undefined) return `${square},scale=${width ?? -2}:${height ?? -2}`;
  const within = `scale=${width}:${height}:force_original_aspect_ratio=decrease:force_divisible_by=2`;
  switch (fit) {
    case 'stretch':
      return `${square},scale=${width}:${height}`;
    case 'crop':
      return `${square},scale=${width}:${height}:force_original_aspect_ratio=increase,crop=${width}:${height}`;
    case 'pad':
      return `${square},${within},pad=${width}:${height}:(ow-iw)/2:(oh-ih)/2:black`;
    default:
      return `${square},${within}`;
  }
}

const seek = (l: Located) => (l.hls || l.offsetS > 0 ? ['-ss', l.offsetS.toFixed(3)] : []);

/** A still: JPEG or WebP, written to `out`. */
export async function renderStill(l: Located, size: PictureSize, format: 'jpg' | 'webp', out: string, redact: Record<string, string>, signal?: AbortSignal) {
  const codec = format === 'jpg' ? ['-c:v', 'mjpeg', '-q:v', '3', '-f', 'image2'] : ['-c:v', 'libwebp', '-quality', '80', '-f', 'webp'];
  await runFfmpeg(['-y', ...l.inputArgs, '-i', l.input, ...seek(l), '-map', '0:v:0', '-frames:v', '1', '-vf', sizeFilter(size), ...codec, out], {
    redact,
    signal,
  });
  return readFile(out);
}

/** An animated preview of `seconds` from the located start: a GIF (a palette of its own) or an animated WebP. */
export async function renderAnimated(
  l: Located,
  seconds: number,
  fps: number,
  size: PictureSize,
  format: 'gif' | 'webp',
  out: string,
  redact: Record<string, string>,
  signal?: AbortSignal,
) {
  const frames = `fps=${fps},${sizeFilter(size)}`;
  const graph =
    format === 'gif'
      ? ['-filter_complex', `[0:v:0]${frames},split[a][b];[a]palettegen=stats_mode=diff[p];[b][p]paletteuse=dither=bayer:bayer_scale=4`]
      : ['-vf', frames];
  const codec = format === 'gif' ? ['-f', 'gif', '-loop', '0'] : ['-map', '0:v:0', '-c:v', 'libwebp_anim', '-quality', '70', '-loop', '0', '-f', 'webp'];
  await runFfmpeg(['-y', ...l.inputArgs, '-i', l.input, ...seek(l), '-t', seconds.toFixed(3), '-an', '-sn', ...graph, ...codec, out], { redact, signal });
  return readFile(out);
}
