import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pino } from 'pino';
import { ffmpegPath, runFfmpeg } from '../../src/media/ffmpeg.ts';
import { createLivePipeline, type LivePipeline, type LivePipelineEvent, type LivePipelineOptions, type LiveRendition } from '../../src/media/live/index.ts';
import { until } from './until.ts';
import type { Browser } from 'playwright-core';
import { launchBrowser, servePlayerPage } from './browser.ts';
import { startPlatform, type DbKind, type TestPlatform } from './platform.ts';
import { freePort } from './process.ts';

export const quietLog = () => pino({ level: process.env.LIVE_TEST_LOG ?? 'warn' });

/** The tiny ladder of the live tests: two rungs, 25 fps. */
export const TINY_LADDER: LiveRendition[] = [
  { name: '180p', width: 320, height: 180, videoBitrate: 300_000, frameRate: 25 },
  { name: '90p', width: 160, height: 90, videoBitrate: 120_000, frameRate: 25 },
];

/** Polls `check` until it returns something truthy; fails with `what` after `timeoutMs` (a hang guard, not a threshold). */
export async function waitFor<T>(what: string, check: () => T | Promise<T>, timeoutMs = 45_000): Promise<NonNullable<T>> {
  return (await until(check, Boolean, { timeoutMs, what })) as NonNullable<T>;
}

/** A pipeline whose output is written into `outDir` (as the module will write to the object store). */
export function localPipeline(
  root: string,
  overrides: Partial<LivePipelineOptions> = {},
): { pipeline: LivePipeline; outDir: string; events: LivePipelineEvent[]; removed: string[] } {
  const outDir = join(root, 'out');
  mkdirSync(outDir, { recursive: true });
  const events: LivePipelineEvent[] = [];
  const removed: string[] = [];
  const pipeline = createLivePipeline({
    channelId: 'c1',
    workDir: join(root, 'work'),
    renditions: TINY_LADDER,
    audioOnly: false,
    segmentSeconds: 1,
    windowSegments: 6,
    inputLoss: { type: 'COLOR', color: '#1060c0' },
    async publish(key, body) {
      const file = join(outDir, key);
      mkdirSync(dirname(file), { recursive: true });
      // Whole files appear at once, as in an object store.
      writeFileSync(`${file}.tmp`, body);
      renameSync(`${file}.tmp`, file);
    },
    async remove(keys) {
      removed.push(...keys);
      for (const k of keys) rmSync(join(outDir, k), { force: true });
    },
    log: quietLog(),
    onEvent: (e) => events.push(e),
    ...overrides,
  });
  return { pipeline, outDir, events, removed };
}

/** The segments a pipeline announced for `rendition`, in order: which run made each and whether it was the input's. */
export const segmentsOf = (events: LivePipelineEvent[], rendition: string) =>
  events.flatMap((e) => (e.type === 'segment' && e.rendition === rendition ? [e] : []));

/** The number of the newest segment a media playlist's text lists (-1 before any). */
export function newestSegment(playlist: string): number {
  const first = Number(/#EXT-X-MEDIA-SEQUENCE:(\d+)/.exec(playlist)?.[1] ?? 0);
  return first + playlist.split('\n').filter((l) => l.startsWith('#EXTINF:')).length - 1;
}

/** What a test encoder sends; every option has the default of most live tests. */
export interface EncoderOptions {
  /** The generated picture's size and frame rate; a key frame every second (`-g` = the rate). */
  size?: string;
  rate?: number;
  /** A solid colour (an ffmpeg colour name) instead of the moving test pattern. */
  color?: string;
  /** No tone: the picture alone. */
  videoOnly?: boolean;
  /** Constant-bitrate video at this many kbit/s (filler included), for the input statistics; x264's own rate control otherwise. */
  videoKbps?: number;
  audioKbps?: number;
  /** A media file sent in a loop and stream-copied, instead of the generated picture and tone (the options above do not apply). */
  clip?: string;
  /** A guard against an encoder outliving its test: it stops by itself after this long. */
  seconds?: number;
}

export interface Encoder {
  child: ChildProcess;
  exited: Promise<number | null>;
  /** The end of what ffmpeg wrote to stderr. */
  stderr: () => string;
  /**
   * The frame rate it really sent, from its `-progress` reports (frames over the wall-clock time between the first and
   * the last): on a loaded machine `-re` falls behind the nominal rate (15 fps went out at 7.4).
   */
  sentFrameRate(): number;
  /** SIGTERM: the encoder says goodbye. */
  stop(): Promise<number | null>;
  /** SIGKILL: the encoder (or its network) is gone without a goodbye, the case redundancy and reconnects are for. */
  kill(): Promise<number | null>;
}

/**
 * An encoder pushing in real time, as OBS would, until stopped, refused or `seconds` pass: FLV to an `rtmp://` URL,
 * MPEG-TS to an `srt://` one. It sends a test pattern (or a colour) with a tone, or loops a clip.
 */
export function pushEncoder(
  url: string,
  { size = '320x180', rate = 25, color, videoOnly = false, videoKbps, audioKbps = 64, clip, seconds = 600 }: EncoderOptions = {},
): Encoder {
  const picture = color ? `color=c=${color}:s=${size}:r=${rate}` : `testsrc2=size=${size}:rate=${rate}`;
  const input = clip
    ? ['-re', '-stream_loop', '-1', '-i', clip, '-t', String(seconds), '-c', 'copy']
    : [
        ...['-re', '-f', 'lavfi', '-i', picture],
        ...(videoOnly ? [] : ['-re', '-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=48000']),
        ...['-t', String(seconds)],
        ...['-c:v', 'libx264', '-preset', 'ultrafast', '-tune', 'zerolatency', '-g', String(rate), '-pix_fmt', 'yuv420p'],
        ...(videoKbps
          ? ['-b:v', `${videoKbps}k`, '-minrate', `${videoKbps}k`, '-maxrate', `${videoKbps}k`, '-bufsize', `${videoKbps / 2}k`, '-x264-params', 'nal-hrd=cbr']
          : []),
        ...(videoOnly ? ['-an'] : ['-c:a', 'aac', '-b:a', `${audioKbps}k`]),
      ];
  const child = spawn(
    ffmpegPath(),
    ['-hide_banner', '-nostdin', '-loglevel', 'error', ...input, '-f', url.startsWith('srt://') ? 'mpegts' : 'flv', '-progress', 'pipe:1', url],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let err = '';
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (err = (err + c).slice(-4000)));
  // [wall-clock ms, frames sent] of the first report with a frame sent and of the last.
  let first: [number, number] | undefined;
  let last: [number, number] | undefined;
  let pending = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    const lines = (pending + chunk).split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) {
      const frames = /^frame=(\d+)/.exec(line.trim());
      if (!frames || Number(frames[1]) === 0) continue;
      last = [Date.now(), Number(frames[1])];
      first ??= last;
    }
  });
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  const signal = (sig: NodeJS.Signals) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(sig);
    return exited;
  };
  return {
    child,
    exited,
    stderr: () => err,
    sentFrameRate: () => (first && last && last[0] > first[0] ? ((last[1] - first[1]) * 1000) / (last[0] - first[0]) : 0),
    stop: () => signal('SIGTERM'),
    kill: () => signal('SIGKILL'),
  };
}

/** A restream destination, as a platform's ingest would take it: one RTMP publish on `port` (ffmpeg `-listen 1`), written to `file`. */
export function rtmpReceiver(port: number, file: string): { child: ChildProcess; exited: Promise<number | null> } {
  const child = spawn(
    ffmpegPath(),
    [
      '-hide_banner',
      '-nostdin',
      '-loglevel',
      'error',
      '-listen',
      '1',
      '-i',
      `rtmp://127.0.0.1:${port}/live`,
      '-c',
      'copy',
      '-f',
      'flv',
      '-flush_packets',
      '1',
      '-y',
      file,
    ],
    { stdio: 'ignore' },
  );
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, exited };
}

/** The size of `file` so far, 0 before it exists. */
export const fileSize = (file: string): number => (existsSync(file) ? statSync(file).size : 0);

export interface ParsedPlaylist {
  sequence: number;
  discontinuitySequence: number;
  segments: { uri: string; duration: number; discontinuity: boolean; map: string }[];
}

export function readPlaylist(file: string): ParsedPlaylist | undefined {
  if (!existsSync(file)) return undefined;
  const text = readFileSync(file, 'utf8');
  const out: ParsedPlaylist = { sequence: 0, discontinuitySequence: 0, segments: [] };
  let duration = 0;
  let discontinuity = false;
  let map = '';
  for (const line of text.split('\n')) {
    if (line.startsWith('#EXT-X-MEDIA-SEQUENCE:')) out.sequence = Number(line.split(':')[1]);
    else if (line.startsWith('#EXT-X-DISCONTINUITY-SEQUENCE:')) out.discontinuitySequence = Number(line.split(':')[1]);
    else if (line === '#EXT-X-DISCONTINUITY') discontinuity = true;
    else if (line.startsWith('#EXT-X-MAP:')) map = /URI="([^"]+)"/.exec(line)![1]!;
    else if (line.startsWith('#EXTINF:')) duration = Number.parseFloat(line.slice(8));
    else if (line && !line.startsWith('#')) {
      out.segments.push({ uri: line, duration, discontinuity, map });
      discontinuity = false;
    }
  }
  return out;
}

/** The mean RGB of one decoded frame (the first) of an fMP4 segment, with its init segment, scaled to 16x9. */
export async function framePixels(
  outDir: string,
  init: string,
  segment: string,
  which: 'first' | 'last' = 'first',
): Promise<{ r: number; g: number; b: number; spread: number }> {
  const joined = join(outDir, `.probe-${process.pid}-${Date.now()}.mp4`);
  writeFileSync(joined, Buffer.concat([readFileSync(join(outDir, init)), readFileSync(join(outDir, segment))]));
  try {
    const raw = join(outDir, `.probe-${process.pid}-${Date.now()}.rgb`);
    await runFfmpeg(['-i', joined, ...(which === 'first' ? ['-frames:v', '1'] : []), '-vf', 'scale=16:9', '-f', 'rawvideo', '-pix_fmt', 'rgb24', '-y', raw]);
    // Every frame at 16x9 for the last one: its 432 bytes at the end.
    const px = readFileSync(raw).subarray(-16 * 9 * 3);
    rmSync(raw, { force: true });
    let r = 0,
      g = 0,
      b = 0;
    const n = px.length / 3;
    for (let i = 0; i < px.length; i += 3) {
      r += px[i]!;
      g += px[i + 1]!;
      b += px[i + 2]!;
    }
    r /= n;
    g /= n;
    b /= n;
    let spread = 0;
    for (let i = 0; i < px.length; i += 3) spread = Math.max(spread, Math.abs(px[i]! - r) + Math.abs(px[i + 1]! - g) + Math.abs(px[i + 2]! - b));
    return { r, g, b, spread };
  } finally {
    rmSync(joined, { force: true });
  }
}

export interface LivePlayer {
  /** The playhead, the first fatal error (if any), the picture's size and whether the stream ended, as the page sees them now. */
  state(): Promise<{ currentTime: number; error?: string; videoHeight: number; ended: boolean }>;
  close(): Promise<void>;
}

/**
 * Opens the player page and starts hls.js or dash.js on a live URL; the test reads the playhead while it changes the
 * input underneath. Fatal player errors and media element errors are kept, the first one wins.
 */
export async function playLive(browser: import('playwright-core').Browser, pageUrl: string, url: string, player: 'hls' | 'dash'): Promise<LivePlayer> {
  const page = await browser.newPage();
  await page.goto(pageUrl);
  await page.evaluate(
    ({ url, player }) => {
      const video = document.getElementById('v') as HTMLVideoElement;
      const w = window as any;
      const state: { error?: string; warning?: string; trace?: Record<string, number> } = {};
      w.__live = state;
      if (player === 'hls') {
        // hls.js's own log, the last lines kept for a failing wait's message: a player that never starts says nothing
        // else (it showed why hls.js once waited for ever at a discontinuity: docs/decisions/live.md, "The packager").
        const logged: string[] = [];
        const keep = (...a: unknown[]) => {
          logged.push(a.map(String).join(' ').slice(0, 200));
          if (logged.length > 40) logged.shift();
        };
        (state as any).log = logged;
        const hls = new w.Hls({ debug: { trace: () => {}, debug: keep, log: keep, info: keep, warn: keep, error: keep } });
        hls.on(w.Hls.Events.ERROR, (_: unknown, d: any) => {
          if (!d.fatal) state.warning = `hls.js ${d.type}: ${d.details}`;
          if (d.fatal && !state.error) state.error = `hls.js ${d.type}: ${d.details}${d.reason ? ` (${d.reason})` : ''}${d.url ? ` at ${d.url}` : ''}`;
        });
        // What hls.js got as far as, for a failing wait's message (a player that never starts says nothing else).
        const counts: Record<string, number> = {};
        state.trace = counts;
        const events = ['MEDIA_ATTACHED', 'MANIFEST_PARSED', 'LEVEL_LOADED', 'AUDIO_TRACK_LOADED', 'FRAG_LOADING', 'FRAG_LOADED'];
        events.push('FRAG_PARSING_INIT_SEGMENT', 'BUFFER_CODECS', 'BUFFER_CREATED', 'FRAG_PARSED', 'BUFFER_APPENDED', 'FRAG_BUFFERED');
        for (const e of events)
          hls.on(w.Hls.Events[e], (_: unknown, d: any) => {
            counts[e] = (counts[e] ?? 0) + 1;
            // The fragment last asked for and last loaded: the one a stalled start is waiting on.
            if (e === 'FRAG_LOADING' || e === 'FRAG_LOADED') (state as any)[e] = `${d.frag?.type} ${d.frag?.relurl ?? d.frag?.url}`;
          });
        // The order hls.js's API documents: the manifest asked for once the media source is open.
        hls.on(w.Hls.Events.MEDIA_ATTACHED, () => hls.loadSource(url));
        hls.attachMedia(video);
      } else {
        const dash = w.dashjs.MediaPlayer().create();
        dash.on('error', (e: any) => {
          if (!state.error) state.error = `dash.js: ${JSON.stringify(e.error ?? e).slice(0, 300)}`;
        });
        dash.initialize(video, url, true);
      }
      video.addEventListener('error', () => {
        if (!state.error) state.error = `media element: ${video.error?.code} ${video.error?.message}`;
      });
      video.muted = true;
      // No play() here: dash.js starts its manifest refresh on the 'play' event it sees after attaching, and autoplays.
      if (player === 'hls') video.play().catch(() => {});
      // A live player may pause at a stall; a viewer would press play again (not at the end: play() would start over).
      setInterval(() => {
        if (video.paused && !video.ended && video.readyState >= 2) video.play().catch(() => {});
      }, 250);
    },
    { url, player },
  );
  return {
    state: () =>
      page.evaluate(() => {
        const video = document.getElementById('v') as HTMLVideoElement;
        const b = video.buffered;
        return {
          currentTime: video.currentTime,
          error: (window as any).__live.error as string | undefined,
          videoHeight: video.videoHeight,
          ended: video.ended,
          // For the failure message of a wait: where the player is stuck and why.
          paused: video.paused,
          readyState: video.readyState,
          buffered: Array.from({ length: b.length }, (_, i) => `${b.start(i).toFixed(1)}-${b.end(i).toFixed(1)}`).join(','),
          lastWarning: (window as any).__live.warning as string | undefined,
          trace: (window as any).__live.trace as Record<string, number> | undefined,
          lastFragments: [(window as any).__live.FRAG_LOADING, (window as any).__live.FRAG_LOADED] as (string | undefined)[],
          log: ((window as any).__live.log as string[] | undefined)?.slice(),
        };
      }),
    close: () => page.close(),
  };
}

/**
 * What a live end-to-end file starts with: the platform on `kind` with its own RTMP port, quick runner passes and 1 s
 * segments (`env` adds to them or changes them), headless Chromium, and a player page on another origin.
 */
export async function startLivePlayback(
  kind: DbKind,
  env: Record<string, string> = {},
): Promise<{ p: TestPlatform; browser: Browser; page: { url: string; close(): Promise<void> } }> {
  const rtmpPort = await freePort();
  const [p, browser, page] = await Promise.all([
    startPlatform(kind, {
      MEDIAPLANE_RTMP_HOST: '127.0.0.1',
      MEDIAPLANE_RTMP_PORT: String(rtmpPort),
      MEDIAPLANE_LIVE_POLL_MS: '200',
      MEDIAPLANE_LIVE_SEGMENT_SECONDS: '1',
      ...env,
    }),
    launchBrowser(),
    servePlayerPage(),
  ]);
  return { p, browser, page };
}
