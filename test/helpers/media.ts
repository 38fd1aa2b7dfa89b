import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { runFfmpeg } from '../../src/media/ffmpeg.ts';
import { inspect, type MediaInfo } from '../../src/media/inspect.ts';
import { FAST_START_SEGMENT_S } from '../../src/media/packaging.ts';
import type { Preset, Rendition } from '../../src/modules/transcoder/presets.ts';

/** A temporary directory removed by the returned `cleanup`. */
export function tempDir(prefix = 'mediaplane-media-'): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export interface ClipOptions {
  seconds?: number;
  width?: number;
  height?: number;
  fps?: number;
  /** One sine tone per audio track; none for a silent (no audio track) clip. */
  audio?: { language: string; frequency: number }[];
  /** Subtitle tracks (mov_text in MP4, SubRip in MKV) with two cues each; none by default. */
  subtitles?: { language: string; text: string }[];
  /** `mp4` (default) or `mkv`; `m4a` writes the audio tracks only. */
  container?: 'mp4' | 'mkv' | 'm4a';
  /** A plain picture of this colour instead of the test pattern (for pixel checks). */
  color?: string;
  /** Video codec; H.264 unless a test needs another. */
  videoCodec?: string;
}

export const TWO_LANGUAGES = [
  { language: 'eng', frequency: 440 },
  { language: 'fra', frequency: 880 },
];

/**
 * A test clip from ffmpeg's own sources: `testsrc2` picture (a moving pattern and a clock), a sine tone per audio
 * track, two SubRip cues (0.5–1.5 s, then 2.0–2.8 s or earlier in a shorter clip) per subtitle track. Streams are
 * numbered video, audio…, subtitles….
 */
export async function makeClip(dir: string, name: string, opts: ClipOptions = {}): Promise<string> {
  const { seconds = 3, width = 320, height = 180, fps = 30, audio = TWO_LANGUAGES, subtitles = [], container = 'mp4', color, videoCodec = 'libx264' } = opts;
  const out = join(dir, `${name}.${container}`);
  const video = container !== 'm4a';
  const args: string[] = [];
  const picture = color ? `color=c=${color}:` : 'testsrc2=';
  if (video) args.push('-f', 'lavfi', '-i', `${picture}size=${width}x${height}:rate=${fps}:duration=${seconds}`);
  for (const a of audio) args.push('-f', 'lavfi', '-i', `sine=frequency=${a.frequency}:sample_rate=48000:duration=${seconds}`);
  subtitles.forEach((s, k) => {
    const srt = join(dir, `${name}-${k}.srt`);
    // The second cue ends before the picture does (at 2.0–2.8 s in a 3 s clip).
    const srtTime = (t: number) => `00:00:0${Math.floor(t)},${String(Math.round((t % 1) * 1000)).padStart(3, '0')}`;
    const second = `${srtTime(Math.min(2, seconds - 0.4))} --> ${srtTime(Math.min(2.8, seconds - 0.1))}`;
    writeFileSync(srt, `1\n00:00:00,500 --> 00:00:01,500\n${s.text}\n\n2\n${second}\n${s.text} again\n`);
    args.push('-i', srt);
  });
  const inputs = (video ? 1 : 0) + audio.length + subtitles.length;
  for (let i = 0; i < inputs; i++) args.push('-map', `${i}`);
  if (video) args.push('-c:v', videoCodec, ...(videoCodec === 'libx264' ? ['-preset', 'ultrafast'] : []), '-pix_fmt', 'yuv420p', '-g', String(fps));
  if (audio.length) args.push('-c:a', 'aac', '-b:a', '64k');
  if (subtitles.length) args.push('-c:s', container === 'mkv' ? 'srt' : 'mov_text');
  audio.forEach((a, k) => args.push(`-metadata:s:a:${k}`, `language=${a.language}`));
  subtitles.forEach((s, k) => args.push(`-metadata:s:s:${k}`, `language=${s.language}`));
  await runFfmpeg(['-y', ...args, out]);
  return out;
}

/** A PNG of one colour, optionally half transparent. */
export async function makeImage(dir: string, name: string, { width = 64, height = 64, color = 'red' } = {}): Promise<string> {
  const out = join(dir, `${name}.png`);
  await runFfmpeg(['-y', '-f', 'lavfi', '-i', `color=c=${color}:s=${width}x${height}`, '-frames:v', '1', out]);
  return out;
}

/** One decoded frame at `seconds` as RGB bytes, from any file or playlist ffmpeg can read. */
export async function frameAt(input: string, seconds: number): Promise<{ width: number; height: number; rgb: Buffer }> {
  const info = await inspect(input);
  const v = info.streams.find((s) => s.type === 'video')!;
  const { dir, cleanup } = tempDir('mediaplane-frame-');
  try {
    const raw = join(dir, 'frame.rgb');
    await runFfmpeg(['-y', '-ss', String(seconds), '-i', input, '-frames:v', '1', '-f', 'rawvideo', '-pix_fmt', 'rgb24', raw]);
    return { width: v.width!, height: v.height!, rgb: readFileSync(raw) };
  } finally {
    cleanup();
  }
}

/** Mean colour of a square of `size` pixels at (x, y) of a frame. */
export function meanColor(frame: { width: number; rgb: Buffer }, x: number, y: number, size = 8): [number, number, number] {
  const sum = [0, 0, 0];
  for (let dy = 0; dy < size; dy++) {
    for (let dx = 0; dx < size; dx++) {
      const o = ((y + dy) * frame.width + (x + dx)) * 3;
      for (let c = 0; c < 3; c++) sum[c] += frame.rgb[o + c];
    }
  }
  return sum.map((s) => Math.round(s / (size * size))) as [number, number, number];
}

/** A small preset for tests: the catalogue's shape with tiny rungs and short segments, so a test encodes in a second. */
export function testPreset(overrides: Partial<Preset> & { ladder?: Rendition[] } = {}): Preset {
  return {
    id: 'test-preset',
    name: 'Test preset',
    description: 'tiny ladder for tests',
    mediaType: 'video',
    packaging: ['hls'],
    ladder: [rung('360p', 640, 360, 600), rung('180p', 320, 180, 250), rung('144p', 256, 144, 150)],
    audio: { codec: 'aac', bitrateKbps: 64, channels: 2, sampleRate: 48000 },
    segmentSeconds: 1,
    x264Preset: 'ultrafast',
    createsDownload: false,
    noTranscoding: false,
    hasVerticalOrientation: false,
    allowedExtensionsFile: ['.mp4'],
    ...overrides,
  };
}

export const rung = (name: string, width: number, height: number, kbps: number): Rendition => ({
  name,
  width,
  height,
  videoBitrateKbps: kbps,
  maxrateKbps: Math.round(kbps * 1.5),
  profile: 'main',
});

/** Streams of a played manifest grouped the way the tests assert on them. */
export async function probeOutput(
  path: string,
): Promise<{ info: MediaInfo; video: MediaInfo['streams']; audio: MediaInfo['streams']; subtitles: MediaInfo['streams'] }> {
  const info = await inspect(path, { inputArgs: ['-allowed_extensions', 'ALL'] });
  return {
    info,
    video: info.streams.filter((s) => s.type === 'video'),
    audio: info.streams.filter((s) => s.type === 'audio'),
    subtitles: info.streams.filter((s) => s.type === 'subtitle'),
  };
}

export interface MasterPlaylist {
  media: Record<string, string>[];
  variants: (Record<string, string> & { uri: string })[];
}

/** The tags of a master playlist as attribute maps (quotes removed), the way a player reads them. */
export function parseMaster(text: string): MasterPlaylist {
  const attrs = (list: string) => Object.fromEntries([...list.matchAll(/([A-Z0-9-]+)=("[^"]*"|[^,]*)/g)].map((m) => [m[1], m[2].replace(/^"|"$/g, '')]));
  const lines = text.split('\n').map((l) => l.trim());
  const media = lines.filter((l) => l.startsWith('#EXT-X-MEDIA:')).map((l) => attrs(l.slice(13)));
  const variants = lines.flatMap((l, i) => (l.startsWith('#EXT-X-STREAM-INF:') ? [{ ...attrs(l.slice(18)), uri: lines[i + 1] }] : []));
  return { media, variants };
}

/** How many segments a fast start cuts the preset's first segment into (docs/decisions/vod-assets.md). */
export const fastStartSegments = (segmentSeconds = 4) => Math.round(segmentSeconds / FAST_START_SEGMENT_S);

/**
 * A fast start's segment durations: the preset's first `segmentSeconds` in segments of FAST_START_SEGMENT_S, then the
 * preset's, as many as `after` say (each within 10 ms, as the chunked path's check of its 4 s segments). The short
 * segments end on the first frame at or past each step of FAST_START_SEGMENT_S (where the keyframes are forced), so
 * at a rate whose frames do not divide it they are a frame apart (25 fps: 0.52, 0.48, ...): each cut is checked to lie
 * on its step or less than one frame (`fps`) past it.
 */
export function expectFastStart(durations: number[], { segmentSeconds = 4, after = 0, fps = 30 } = {}): void {
  const count = fastStartSegments(segmentSeconds);
  const head = durations.slice(0, count);
  const ends = head.map((_, k) => head.slice(0, k + 1).reduce((a, b) => a + b, 0) - (k + 1) * FAST_START_SEGMENT_S);
  expect(head.length === count && ends.every((late) => late > -0.005 && late < 1 / fps), durations.join(', ')).toBe(true);
  expect(Math.abs(ends[count - 1]!)).toBeLessThan(0.01);
  for (const d of durations.slice(count, count + after)) expect(Math.abs(d - segmentSeconds), durations.join(', ')).toBeLessThan(0.01);
}
