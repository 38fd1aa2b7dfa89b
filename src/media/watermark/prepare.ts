import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { MediaError, runFfmpeg } from '../ffmpeg.ts';
import { ProgressParser } from '../progress.ts';
import { GRID_H, GRID_W, gridSignature, patternFrame, patternValues } from './pattern.ts';

/** Pictures per second the detector compares; the reference is written at this rate. */
export const SAMPLE_FPS = 5;
/** How every picture is reduced before comparison, for the reference and for a suspect file alike. */
export const GRID_FILTER = `fps=${SAMPLE_FPS},scale=${GRID_W}:${GRID_H}:flags=area,format=gray`;

export interface PrepareRequest {
  /** The source: a local path or a URL ffmpeg can read. */
  input: string;
  durationMs: number;
  width: number;
  height: number;
  videoBitrateKbps: number;
  x264Preset: string;
  segmentSeconds: number;
  /** Luma levels added (A) and subtracted (B) at the pattern's peaks. */
  strength: number;
  /** Chooses the pattern; kept with the asset so that detection knows it. */
  seed: string;
  /** Whether the source has an audio track to carry (the first one). */
  audio: boolean;
  outDir: string;
  onProgress?: (percent: number) => void;
  signal?: AbortSignal;
}

export interface PreparedVariants {
  /** Duration of every segment, in seconds, the same in A and B. */
  segmentDurations: number[];
  /** Files under outDir: `A/index.m3u8`, `A/seg_00000.ts`..., the same under `B/`, and `reference.gray`. */
  files: string[];
  /** The mark as the detector sees it: variant A minus the unmarked picture, per grid cell. */
  signature: number[];
  ffmpegArgs: string[];
}

/**
 * Encodes the two variants of an asset in one ffmpeg process: the source is decoded and scaled once, split in
 * three: A (picture + pattern), B (picture - pattern), and the unmarked picture reduced to the detection grid (the
 * reference, a few kilobytes a second). Keyframes are forced at every segment boundary and scene cuts are off, so A
 * and B cut their segments at the same instants and a player can mix them.
 */
export async function prepareVariants(req: PrepareRequest): Promise<PreparedVariants> {
  const { width: w, height: h, outDir } = req;
  if (w % 2 || h % 2) throw new MediaError(`The watermarked rendition must have an even size, not ${w}x${h}`);
  for (const v of ['A', 'B']) await mkdir(join(outDir, v), { recursive: true });
  const values = patternValues(req.seed, w, h);
  const frameA = patternFrame(values, w, h, req.strength, 1);
  await writeFile(join(outDir, 'patternA.yuv'), frameA);
  await writeFile(join(outDir, 'patternB.yuv'), patternFrame(values, w, h, req.strength, -1));
  const raw = (name: string) => ['-f', 'rawvideo', '-pix_fmt', 'yuv420p', '-video_size', `${w}x${h}`, '-i', join(outDir, name)];
  const graph = [
    `[0:v:0]scale=${w}:${h},setsar=1,format=yuv420p,split=3[a][b][r]`,
    // grainmerge: picture + pattern - 128. The one-frame pattern input is held for the whole clip (framesync repeatlast).
    '[a][1:v]blend=all_mode=grainmerge[va]',
    '[b][2:v]blend=all_mode=grainmerge[vb]',
    `[r]${GRID_FILTER}[ref]`,
  ].join(';');
  const kbps = req.videoBitrateKbps;
  const variant = (v: 'A' | 'B') => [
    '-map',
    `[v${v.toLowerCase()}]`,
    ...(req.audio ? ['-map', '0:a:0', '-c:a', 'aac', '-b:a', '96k', '-ac', '2'] : []),
    '-c:v',
    'libx264',
    '-preset',
    req.x264Preset,
    '-b:v',
    `${kbps}k`,
    '-maxrate',
    `${Math.round(kbps * 1.5)}k`,
    '-bufsize',
    `${kbps * 2}k`,
    '-pix_fmt',
    'yuv420p',
    '-force_key_frames',
    `expr:gte(t,n_forced*${req.segmentSeconds})`,
    '-sc_threshold',
    '0',
    '-f',
    'hls',
    '-hls_time',
    String(req.segmentSeconds),
    '-hls_playlist_type',
    'vod',
    '-hls_segment_filename',
    join(outDir, v, 'seg_%05d.ts'),
    join(outDir, v, 'index.m3u8'),
  ];
  const args = [
    '-y',
    '-i',
    req.input,
    ...raw('patternA.yuv'),
    ...raw('patternB.yuv'),
    '-filter_complex',
    graph,
    ...variant('A'),
    ...variant('B'),
    '-map',
    '[ref]',
    '-f',
    'rawvideo',
    join(outDir, 'reference.gray'),
    '-progress',
    'pipe:1',
    '-stats_period',
    '0.5',
  ];
  const parser = new ProgressParser(req.durationMs, (p) => req.onProgress?.(Math.min(p, 99)));
  await runFfmpeg(args, {
    signal: req.signal,
    onStdout: (c) => parser.push(c),
    redact: { [req.input]: 'the source', [outDir]: 'the work directory' },
    background: true,
  });
  const a = await segmentsOf(join(outDir, 'A', 'index.m3u8'));
  const b = await segmentsOf(join(outDir, 'B', 'index.m3u8'));
  // Both come from one process with the same forced keyframes; a difference would make mixed playback stutter.
  if (a.length !== b.length || a.some((d, i) => Math.abs(d - b[i]) > 0.05)) throw new MediaError('The two variants were cut into different segments');
  const files = ['reference.gray', ...['A', 'B'].flatMap((v) => ['index.m3u8', ...a.map((_, i) => segmentName(i))].map((f) => `${v}/${f}`))];
  return { segmentDurations: a, files, signature: Array.from(gridSignature(frameA, w, h)), ffmpegArgs: args };
}

export const segmentName = (index: number): string => `seg_${String(index).padStart(5, '0')}.ts`;

async function segmentsOf(playlist: string): Promise<number[]> {
  const text = await readFile(playlist, 'utf8');
  return [...text.matchAll(/^#EXTINF:([0-9.]+)/gm)].map((m) => Number(m[1]));
}
