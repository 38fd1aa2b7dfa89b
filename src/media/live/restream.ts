import type { Logger } from 'pino';
import { hostRefusal } from '../../platform/addressGuard.ts';
import { MediaError, redact, runFfmpeg } from '../ffmpeg.ts';

/**
 * One restream destination: a supervised `ffmpeg -c copy` from the channel's input to `rtmp(s)://…/<streamKey>`.
 * A destination that fails is retried with a doubling delay; each one lives on its own, so one failing never touches
 * the channel's encode or another destination. The stream key is a secret: it never appears in a log line, an error
 * or a state this returns (docs/decisions/live.md, "Restreams").
 */

export type RestreamStatus = 'WaitingForInput' | 'Connecting' | 'Active' | 'Retrying';

export interface RestreamState {
  status: RestreamStatus;
  /** The last failure, in words a tenant may read (the stream key and internal URLs removed); kept after recovery. */
  lastError: string | null;
  /** Bytes sent to the destination since the destination was created. */
  bytesSent: number;
}

/** What a destination copies: the channel's live input as the ingest gives it (or its looped mp4 source). */
export interface RestreamSource {
  url: string;
  loop?: boolean;
}

export type RestreamEvent = { type: 'failed'; message: string } | { type: 'recovered' };

export interface RestreamDestinationOptions {
  /** `rtmp://host[:port]/app` as the tenant gave it; the key is appended as the stream name. */
  url: string;
  streamKey: string;
  /** Private, loopback and link-local destination hosts are refused unless this is set (MEDIAPLANE_RESTREAM_ALLOW_PRIVATE). */
  allowPrivate: boolean;
  log: Logger;
  onState(state: RestreamState): void;
  /** Once per transition: `failed` when a working (or new) destination fails, `recovered` when it sends again. */
  onEvent(event: RestreamEvent): void;
  /** First retry delay and its ceiling; 1 s doubling to 30 s by default. */
  retryInitialMs?: number;
  retryMaxMs?: number;
}

export interface RestreamDestination {
  /** The input to copy, or null: the input is lost, the destination waits (it is not failing). */
  setSource(source: RestreamSource | null): void;
  state(): RestreamState;
  stop(): Promise<void>;
}

const MASKED_KEY = '********';
/** A destination that has sent for this long is healthy again: its next failure is retried after the first delay. */
const STABLE_MS = 10_000;
/** A destination that accepts no data for this long (a blocked TCP window) is restarted. */
const STALL_MS = 15_000;

/** The destination's URL as ffmpeg is given it: the stream key as the last path element. */
function destinationTarget(url: string, streamKey: string): string {
  return streamKey ? `${url.replace(/\/+$/, '')}/${streamKey}` : url;
}

/** The destination's URL as it may be logged or shown: the key masked. */
const maskedTarget = (url: string, streamKey: string): string => destinationTarget(url, streamKey ? MASKED_KEY : '');

/** ffmpeg's arguments: no decode, no encode; the FLV muxer's seek-back for duration/size is off (a live socket). */
function restreamArgs(source: RestreamSource, target: string): string[] {
  return [
    '-progress',
    'pipe:1',
    '-stats_period',
    '1',
    ...(source.loop ? ['-re', '-stream_loop', '-1'] : []),
    '-analyzeduration',
    '1000000',
    '-probesize',
    '1000000',
    '-i',
    source.url,
    '-map',
    '0:v?',
    '-map',
    '0:a?',
    '-c',
    'copy',
    '-flvflags',
    'no_duration_filesize',
    // A destination that stops reading (or a name that never answers) fails within this, instead of hanging.
    '-rw_timeout',
    String(STALL_MS * 1000),
    '-f',
    'flv',
    target,
  ];
}

export function createRestreamDestination(o: RestreamDestinationOptions): RestreamDestination {
  const initialMs = o.retryInitialMs ?? 1000;
  const maxMs = o.retryMaxMs ?? 30_000;
  const target = destinationTarget(o.url, o.streamKey);
  const shown = maskedTarget(o.url, o.streamKey);
  let source: RestreamSource | null = null;
  let stopped = false;
  let status: RestreamStatus = 'WaitingForInput';
  let lastError: string | null = null;
  let bytesBefore = 0;
  let bytesNow = 0;
  let failing = false;
  let delay = initialMs;
  let activeSince: number | undefined;
  let lastAdvanceAt = 0;
  let stalled = false;
  let timer: NodeJS.Timeout | undefined;
  let abort: AbortController | undefined;
  let running: Promise<void> | undefined;

  /** Everything secret or internal an error text could contain, and what to say instead. */
  const secrets = (): Record<string, string> => {
    const map: Record<string, string> = { [target]: shown };
    // A key of one or two characters would blank out ordinary letters; it is no secret worth that.
    if (o.streamKey.length >= 3) map[o.streamKey] = MASKED_KEY;
    if (source) map[source.url] = 'the channel input';
    return map;
  };
  const clean = (text: string) => redact(text, secrets());

  const state = (): RestreamState => ({ status, lastError, bytesSent: bytesBefore + bytesNow });
  const setStatus = (next: RestreamStatus) => {
    if (next === status) return;
    status = next;
    o.onState(state());
  };

  function attempt(): void {
    clearTimeout(timer);
    if (stopped || !source || running) return;
    const src = source;
    const ac = new AbortController();
    abort = ac;
    stalled = false;
    bytesBefore += bytesNow;
    bytesNow = 0;
    lastAdvanceAt = Date.now();
    if (!failing) setStatus('Connecting');
    let buffer = '';
    const onStdout = (chunk: string) => {
      buffer += chunk;
      const lines = buffer.split('\n');
      buffer = lines.pop() ?? '';
      for (const line of lines) {
        const m = /^total_size=(\d+)/.exec(line.trim());
        if (!m) continue;
        const size = Number(m[1]);
        if (size > bytesNow) {
          bytesNow = size;
          lastAdvanceAt = Date.now();
          if (status !== 'Active') becomeActive();
        }
      }
    };
    const watchdog = setInterval(() => {
      if (Date.now() - lastAdvanceAt < STALL_MS) return;
      stalled = true;
      ac.abort();
    }, 1000);
    running = (async () => {
      if (!o.allowPrivate) {
        const refusal = await hostRefusal(new URL(o.url), 'MEDIAPLANE_RESTREAM_ALLOW_PRIVATE');
        if (refusal) throw new MediaError(`refused: ${refusal}`);
      }
      if (ac.signal.aborted) return;
      await runFfmpeg(restreamArgs(src, target), { signal: ac.signal, onStdout, redact: secrets() });
    })()
      .then(
        () => ended(src, undefined),
        (err: unknown) => ended(src, err),
      )
      .finally(() => clearInterval(watchdog));
  }

  function becomeActive(): void {
    activeSince = Date.now();
    setStatus('Active');
    o.log.info({ destination: shown }, 'restream destination sending');
    if (failing) {
      failing = false;
      o.onEvent({ type: 'recovered' });
    }
  }

  function ended(src: RestreamSource, err: unknown): void {
    running = undefined;
    abort = undefined;
    const wasStable = activeSince !== undefined && Date.now() - activeSince >= STABLE_MS;
    activeSince = undefined;
    if (stopped) return;
    if (source !== src) {
      // The input changed or went away: not the destination's fault.
      if (source) attempt();
      else setStatus('WaitingForInput');
      return;
    }
    if (!err && !stalled) {
      // The input ended (an encoder that stopped sending is an input loss, reported as such): read it again shortly.
      timer = setTimeout(attempt, initialMs);
      return;
    }
    const message = clean(stalled ? 'the destination stopped accepting data' : err instanceof Error ? err.message : String(err));
    if (wasStable) delay = initialMs;
    lastError = message;
    status = 'Retrying';
    o.onState(state());
    o.log.warn({ destination: shown, error: message, retryInMs: delay }, 'restream destination failed; retrying');
    if (!failing) {
      failing = true;
      o.onEvent({ type: 'failed', message });
    }
    timer = setTimeout(attempt, delay);
    delay = Math.min(delay * 2, maxMs);
  }

  return {
    setSource(next) {
      if (stopped) return;
      if (next?.url === source?.url && next?.loop === source?.loop) return;
      source = next;
      delay = initialMs;
      clearTimeout(timer);
      if (running) abort?.abort();
      else if (next) attempt();
      else setStatus('WaitingForInput');
    },
    state,
    async stop() {
      stopped = true;
      clearTimeout(timer);
      abort?.abort();
      await running;
    },
  };
}
