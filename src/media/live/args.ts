import { join } from 'node:path';
import { forensicFilters, forensicVariants, type ForensicArgs } from './forensic/forensic.ts';
import { rateArgs, rateFilter, slowestRate } from './rate.ts';
import type { InputLoss, LiveRendition } from './types.ts';

export const AUDIO_TRACK = 'audio';
const AUDIO_BITRATE = 128_000;
export const audioBandwidth = AUDIO_BITRATE;

/** `silent`: the input has no audio track; the run adds a silent one, so every run has the same tracks. */
export type RunSource = { kind: 'live'; url: string; loop: boolean; silent?: boolean } | { kind: 'slate'; loss: InputLoss };

export interface RunArgs {
  source: RunSource;
  renditions: LiveRendition[];
  audioOnly: boolean;
  segmentSeconds: number;
  /** Media time (seconds) the run's first frame gets: the channel's timeline continues across runs. */
  offset: number;
  dir: string;
  /**
   * Low latency (`ReducedLatency`): each track is written as one fragmented MP4 file of chunks of about this many
   * seconds, which the packager cuts into parts and segments; unset: ffmpeg's HLS muxer writes whole segments.
   */
  partSeconds?: number;
  /** A forensic watermark: two more video tracks (`wmA-<rung>`, `wmB-<rung>`) per marked rung from the same decode. */
  forensic?: ForensicArgs;
}

/** Every video track a run encodes, in output order: the ladder, then the forensic variants. */
function encodedRenditions(a: RunArgs): LiveRendition[] {
  return a.forensic ? [...a.renditions, ...forensicVariants(a.forensic.rungs.map((f) => f.rung))] : a.renditions;
}

/** The fragmented MP4 file a low-latency run writes for a track. */
export const fragmentFile = (dir: string, track: string) => join(dir, `${track}.mp4`);

/**
 * Every run's video tracks count time in 90 kHz (ffmpeg's default derives it from the frame rate): a run that follows
 * the encoder's rate and the input-loss run that does not are one track to the packager, which needs one timescale.
 */
const VIDEO_TIMESCALE = 90_000;

/** AAC frames are 1024 samples at 48 kHz. */
const AUDIO_FRAME_S = 1024 / 48_000;

/**
 * ffmpeg's mp4 muxer closes a fragment before the first packet at or past `frag_duration` from the fragment's start,
 * so a fragment may run one frame longer than that: the part target minus the longest frame keeps every part at or
 * under the target (and over 85 % of it, as RFC 8216bis asks of all but a segment's last part).
 */
export const fragmentSeconds = (partSeconds: number, frameRates: number[]) => partSeconds - Math.max(AUDIO_FRAME_S, ...frameRates.map((r) => 1 / r)) + 0.001;

/** `#1a2b3c`, `0x1a2b3c`, `1a2b3c` or a colour name as lavfi's `color` source takes it; anything else is black. */
function lavfiColor(color: string): string {
  const hex = /^(?:#|0x)?([0-9a-f]{6})$/i.exec(color.trim());
  if (hex) return `0x${hex[1]}`;
  return /^[a-z]{3,20}$/i.test(color.trim()) ? color.trim().toLowerCase() : 'black';
}

/**
 * One ffmpeg run of a channel. The live run and the slate run encode the same ladder with the same settings (fixed
 * GOP of one segment, no scene cuts, same colour signalling, AAC 48 kHz stereo), so their init segments have the same
 * shape and players switch between them as between two segments of one stream.
 */
export function runArgs(a: RunArgs): string[] {
  const top = a.renditions.reduce((m, r) => (r.height > m.height ? r : m), a.renditions[0] ?? ({ width: 640, height: 360, frameRate: 25 } as LiveRendition));
  const fps = top.frameRate;
  const args = ['-progress', 'pipe:1', '-stats_period', '0.5'];
  const videoIn = '0:v';
  let audioIn = '0:a:0';
  if (a.source.kind === 'live') {
    // The ingest replays its cached metadata and headers at once: a short probe is enough and saves a second per switch.
    args.push('-analyzeduration', '1000000', '-probesize', '1000000');
    if (a.source.loop) args.push('-re', '-stream_loop', '-1');
    args.push('-i', a.source.url);
    if (a.source.silent && !a.audioOnly) {
      args.push('-re', '-f', 'lavfi', '-i', 'anullsrc=r=48000:cl=stereo');
      audioIn = '1:a';
    }
  } else {
    const loss = a.source.loss;
    if (a.audioOnly) {
      audioIn = '0:a';
    } else if (loss.type === 'COLOR') {
      args.push('-re', '-f', 'lavfi', '-i', `color=c=${lavfiColor(loss.color)}:s=${top.width}x${top.height}:r=${fps}`);
    } else {
      args.push('-re', '-loop', '1', '-framerate', String(fps), '-i', loss.imagePath);
    }
    if (!a.audioOnly) audioIn = '1:a';
    args.push('-re', '-f', 'lavfi', '-i', 'anullsrc=r=48000:cl=stereo');
  }
  const filters: string[] = [];
  const maps: string[] = [];
  const enc: string[] = [];
  const streams: string[] = [];
  if (!a.audioOnly) {
    let src = `[${videoIn}]`;
    if (a.source.kind === 'slate' && a.source.loss.type === 'SLATE') {
      filters.push(`${src}scale=${top.width}:${top.height}:force_original_aspect_ratio=decrease,pad=${top.width}:${top.height}:(ow-iw)/2:(oh-ih)/2[slate]`);
      src = '[slate]';
    }
    const n = a.renditions.length;
    const marked = a.forensic?.rungs.length ?? 0;
    const sources = Array.from({ length: marked }, (_, k) => `[sw${k}]`);
    filters.push(`${src}split=${n + marked}${a.renditions.map((_, i) => `[s${i}]`).join('')}${sources.join('')}`);
    if (a.forensic) {
      const forensic = forensicFilters(a.forensic, sources, args.filter((x) => x === '-i').length, n);
      args.push(...forensic.inputs);
      filters.push(...forensic.filters);
    }
    encodedRenditions(a).forEach((r, i) => {
      // Never upscale: a rung taller than the input is encoded at the input's height (its name and URL stay).
      if (i < n) filters.push(`[s${i}]${rateFilter(r)}scale=-2:'min(${r.height},ih)',setsar=1,format=yuv420p[v${i}]`);
      maps.push('-map', `[v${i}]`);
      enc.push(`-b:v:${i}`, String(r.videoBitrate), `-maxrate:v:${i}`, String(Math.round(r.videoBitrate * 1.2)), `-bufsize:v:${i}`, String(r.videoBitrate * 2));
      enc.push(...rateArgs(r, a.segmentSeconds, `v:${i}`));
      streams.push(`v:${i},name:${r.name}`);
    });
    enc.push('-c:v', 'libx264', '-preset', 'veryfast', '-tune', 'zerolatency', '-profile:v', 'high', '-sc_threshold', '0');
    enc.push('-color_primaries', 'bt709', '-color_trc', 'bt709', '-colorspace', 'bt709', '-color_range', 'tv');
  }
  filters.push(`[${audioIn}]aresample=48000,aformat=sample_rates=48000:channel_layouts=stereo[a0]`);
  maps.push('-map', '[a0]');
  enc.push('-c:a', 'aac', '-b:a', String(AUDIO_BITRATE), '-ar', '48000', '-ac', '2');
  streams.push(`a:0,name:${AUDIO_TRACK}`);
  if (a.partSeconds) return [...args, '-filter_complex', filters.join(';'), ...fragmentOutputs(a, a.partSeconds)];
  return [
    ...args,
    '-filter_complex',
    filters.join(';'),
    ...maps,
    ...enc,
    '-output_ts_offset',
    a.offset.toFixed(6),
    '-f',
    'hls',
    '-hls_time',
    String(a.segmentSeconds),
    '-hls_list_size',
    '0',
    '-hls_segment_type',
    'fmp4',
    // temp_file: a segment appears under its name only once complete.
    '-hls_flags',
    'independent_segments+temp_file',
    // Keeps the offset in the fragments' decode times (tfdt): without it every run would start at 0.
    '-hls_segment_options',
    `movflags=+frag_discont:video_track_timescale=${VIDEO_TIMESCALE}`,
    '-hls_fmp4_init_filename',
    'init.mp4',
    '-hls_segment_filename',
    join(a.dir, '%v', '%d.m4s'),
    '-var_stream_map',
    streams.join(' '),
    join(a.dir, '%v', 'index.m3u8'),
  ];
}

/**
 * Low latency: one fragmented MP4 output per track, the same encode as `runArgs`' HLS output (same filters, same
 * encoder settings), a chunk every part, flushed to the file as soon as it is complete. Key frames (one per segment,
 * the fixed GOP) always start a chunk, so a segment is a whole number of chunks. Decode times start at 0: the packager
 * adds the run's offset.
 */
function fragmentOutputs(a: RunArgs, partSeconds: number): string[] {
  const frag = String(Math.round(fragmentSeconds(partSeconds, encodedRenditions(a).map(slowestRate)) * 1e6));
  const mp4 = (track: string) => [
    '-f',
    'mp4',
    '-movflags',
    '+empty_moov+default_base_moof+frag_keyframe+skip_trailer',
    '-video_track_timescale',
    String(VIDEO_TIMESCALE),
    '-frag_duration',
    frag,
    '-flush_packets',
    '1',
    fragmentFile(a.dir, track),
  ];
  const out: string[] = [];
  if (!a.audioOnly) {
    encodedRenditions(a).forEach((r, i) => {
      out.push('-map', `[v${i}]`, '-c:v', 'libx264', '-preset', 'veryfast', '-tune', 'zerolatency', '-profile:v', 'high', '-sc_threshold', '0');
      out.push('-b:v', String(r.videoBitrate), '-maxrate:v', String(Math.round(r.videoBitrate * 1.2)), '-bufsize:v', String(r.videoBitrate * 2));
      out.push(...rateArgs(r, a.segmentSeconds, 'v'));
      out.push('-color_primaries', 'bt709', '-color_trc', 'bt709', '-colorspace', 'bt709', '-color_range', 'tv');
      out.push(...mp4(r.name));
    });
  }
  out.push('-map', '[a0]', '-c:a', 'aac', '-b:a', String(AUDIO_BITRATE), '-ar', '48000', '-ac', '2', ...mp4(AUDIO_TRACK));
  return out;
}
