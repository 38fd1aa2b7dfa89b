import { setPriority } from 'node:os';
import { mediaTools } from '../config.ts';
import { spawnTool, toolNotStarted } from './spawnTool.ts';

export const ffmpegPath = (): string => mediaTools().ffmpeg;
const ffprobePath = (): string => mediaTools().ffprobe;

/** ffmpeg or ffprobe failed; `message` is meant for users (an asset's `errorMessage`), so it names no server paths or signed URLs. */
export class MediaError extends Error {
  constructor(
    message: string,
    readonly exitCode: number | null = null,
    readonly stderrTail = '',
  ) {
    super(message);
    this.name = 'MediaError';
  }
}

/** The program itself could not be found (not installed, FFMPEG_PATH or FFPROBE_PATH wrong): the server's fault. */
export class MediaToolMissingError extends MediaError {
  constructor(message: string) {
    super(message);
    this.name = 'MediaToolMissingError';
  }
}

export interface RunOptions {
  signal?: AbortSignal;
  /** Every stdout chunk as it arrives (ffmpeg's `-progress pipe:1`). */
  onStdout?: (chunk: string) => void;
  /** Strings to hide in error messages, each mapped to what to say instead (local paths, presigned URLs). */
  redact?: Record<string, string>;
  /**
   * Batch work (VOD encodes, chunks, A/B preparation, stills): runs at a lower priority (nice BACKGROUND_NICE), so that
   * the API, the publisher of a growing output and live encoders on the same machine answer at once while x264 takes
   * every core. Measured: during a 1080p ladder encode, API requests took 35-735 ms at equal priority, 10-100 ms below.
   * A number is the niceness itself (work that should yield even to the other batch work).
   */
  background?: boolean | number;
}

export const BACKGROUND_NICE = 10;

function lowerPriority(pid: number, nice: number): void {
  try {
    setPriority(pid, nice);
  } catch {
    // Gone already (its exit reports why), or a system that refuses: it runs at the platform's priority.
  }
}

export interface RunResult {
  stdout: string;
  stderrTail: string;
}

const STDERR_TAIL_BYTES = 8 * 1024;
/** How long ffmpeg gets to exit after SIGTERM before it is killed outright. */
const KILL_GRACE_MS = 2000;

/** Runs ffmpeg with the options every call needs: no stdin, no banner, errors only on stderr. */
export function runFfmpeg(args: string[], opts: RunOptions = {}): Promise<RunResult> {
  return run(ffmpegPath(), ['-hide_banner', '-nostdin', '-loglevel', 'error', ...args], opts);
}

export async function runFfprobe(args: string[], opts: RunOptions = {}): Promise<string> {
  return (await run(ffprobePath(), ['-hide_banner', '-loglevel', 'error', ...args], opts)).stdout;
}

/** Keeps stdout only when nobody streams it (ffprobe's JSON); ffmpeg's progress goes to `onStdout`. */
function run(bin: string, args: string[], opts: RunOptions): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    if (opts.signal?.aborted) return reject(abortReason(opts.signal));
    const child = spawnTool(bin, args);
    // Set before ffmpeg has opened its input, so its encoding threads, made after, inherit it.
    if (opts.background && child.pid) lowerPriority(child.pid, opts.background === true ? BACKGROUND_NICE : opts.background);
    let stdout = '';
    let stderr = '';
    let killTimer: NodeJS.Timeout | undefined;
    let listenerError: unknown;
    child.stdout.setEncoding('utf8');
    child.stderr.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      if (!opts.onStdout) stdout += chunk;
      else if (listenerError === undefined) {
        try {
          opts.onStdout(chunk);
        } catch (e) {
          // A failing listener (a progress write) ends the run with its error instead of crashing the process.
          listenerError = e;
          child.kill('SIGKILL');
        }
      }
    });
    child.stderr.on('data', (chunk: string) => {
      stderr = (stderr + chunk).slice(-STDERR_TAIL_BYTES);
    });
    const onAbort = () => {
      child.kill('SIGTERM');
      killTimer = setTimeout(() => child.kill('SIGKILL'), KILL_GRACE_MS);
    };
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    const missing = (why: string) =>
      new MediaToolMissingError(`${bin} could not be started: ${why} (not found; install it or set ${bin === ffprobePath() ? 'FFPROBE_PATH' : 'FFMPEG_PATH'})`);
    child.on('error', (e: NodeJS.ErrnoException) => {
      opts.signal?.removeEventListener('abort', onAbort);
      reject(e.code === 'ENOENT' ? missing(e.message) : new MediaError(`${bin} could not be started: ${e.message}`));
    });
    child.on('close', (code, sig) => {
      clearTimeout(killTimer);
      opts.signal?.removeEventListener('abort', onAbort);
      if (opts.signal?.aborted) return reject(abortReason(opts.signal));
      if (toolNotStarted(code, stderr)) return reject(missing(summarize(stderr)));
      if (listenerError !== undefined) return reject(listenerError);
      if (code === 0) return resolve({ stdout, stderrTail: stderr });
      const tool = bin === ffprobePath() ? 'ffprobe' : 'ffmpeg';
      const detail = summarize(redact(stderr, opts.redact)) || (sig ? `killed by ${sig}` : 'no error output');
      reject(new MediaError(`${tool} failed: ${detail}`, code, stderr));
    });
  });
}

function abortReason(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new DOMException('The operation was aborted', 'AbortError');
}

export function redact(text: string, map: Record<string, string> = {}): string {
  let out = text;
  // Longest first: an output directory may contain the input path or the other way round.
  for (const [secret, label] of Object.entries(map).sort((a, b) => b[0].length - a[0].length)) {
    if (secret) out = out.split(secret).join(label);
  }
  return out;
}

/** The last distinct lines of ffmpeg's error output, without the `[muxer @ 0x…]` noise, in one line. */
function summarize(stderr: string, maxLines = 4): string {
  const lines = stderr
    .split(/\r?\n/)
    .map((l) => l.replace(/^\[[^\]]+ @ 0x[0-9a-f]+\]\s*/, '').trim())
    .filter(Boolean);
  const distinct = [...new Set(lines.reverse())].slice(0, maxLines).reverse();
  return distinct.join('; ').slice(0, 1000);
}
