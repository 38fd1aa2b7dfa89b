import type { Logger } from 'pino';
import { runFfmpeg } from '../../ffmpeg.ts';

/**
 * SRT ingest for one channel input: a supervised `ffmpeg -i srt://…?mode=listener -c copy -f flv` that publishes what
 * an SRT caller sends into this process's RTMP ingest, as a relayed publisher (docs/decisions/live.md, "SRT").
 *
 * Why a listener per channel input and not one shared SRT port: Debian's ffmpeg 5.1 (libsrt 1.5) accepts one caller
 * per listener and closes it, and neither it nor `srt-live-transmit` routes callers by `streamid`; no maintained npm
 * binding of libsrt exists. Relaying into the RTMP ingest keeps one path after the ingest: input loss, the slate,
 * redundant inputs and restreams behave exactly as for RTMP.
 *
 * The caller is authenticated by SRT's own encryption handshake: the passphrase (the channel's stream key) must
 * match, or libsrt rejects the caller before any media and the listener keeps waiting. When the caller leaves (or is
 * silent for 2 s: gone without a goodbye), ffmpeg ends; the relay listens again at once, so a reconnecting encoder is
 * taken whatever time it was away.
 */
export interface SrtRelayOptions {
  host: string;
  port: number;
  /** The channel's stream key: SRT's passphrase (10 to 79 characters). A secret: never logged. */
  passphrase: string;
  /** Where to publish (the RTMP ingest's `relayUrl`): carries the relay token, never logged. */
  target: string;
  log: Logger;
}

export interface SrtRelay {
  stop(): Promise<void>;
}

/** A listener that ends sooner than this after it started has failed (port taken, ffmpeg broken): back off. */
const QUICK_EXIT_MS = 2000;
const RETRY_MIN_MS = 200;
const RETRY_MAX_MS = 10_000;
const LISTEN_TIMEOUT_S = 10;

export function srtListenerUrl(host: string, port: number, passphrase: string): string {
  const bare = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  // timeout: a caller silent for 2 s (gone without a goodbye) ends the run, so the listener is back for its reconnect.
  // listen_timeout: a listener left without a caller for 10 s ends and is started again, so that one orphaned by a
  // process killed with -9 (nothing else ends an ffmpeg blocked waiting for a caller) frees its port soon.
  return `srt://${bare}:${port}?mode=listener&timeout=2000000&listen_timeout=${LISTEN_TIMEOUT_S * 1_000_000}&passphrase=${encodeURIComponent(passphrase)}`;
}

export function startSrtRelay(o: SrtRelayOptions): SrtRelay {
  const abort = new AbortController();
  const source = srtListenerUrl(o.host, o.port, o.passphrase);
  const redact = { [source]: `srt://${o.host}:${o.port}`, [o.target]: 'the channel input', [o.passphrase]: '********' };
  const args = [
    // Start relaying as soon as the caller's stream is known: the ingest's GOP cache and the live run do the rest.
    ...['-fflags', '+nobuffer', '-probesize', '1000000', '-analyzeduration', '1000000'],
    // Progress on stdout: tells a caller's visit from an idle listen, and ends the relay if its process is gone (EPIPE).
    ...['-progress', 'pipe:1', '-stats_period', '1'],
    ...['-i', source],
    ...['-map', '0:v:0?', '-map', '0:a:0?', '-c', 'copy'],
    ...['-f', 'flv', o.target],
  ];
  const done = (async () => {
    let delay = RETRY_MIN_MS;
    while (!abort.signal.aborted) {
      const began = Date.now();
      // ffmpeg writes progress once a caller's media flows: that is how a caller's visit is told from an idle listen.
      let caller = false;
      try {
        await runFfmpeg(args, { signal: abort.signal, redact, onStdout: () => (caller = true) });
        if (caller) o.log.info({ port: o.port }, 'SRT caller left; listening again');
      } catch (e) {
        if (abort.signal.aborted) break;
        const message = e instanceof Error ? e.message : String(e);
        if (caller) o.log.info({ port: o.port, err: message }, 'SRT caller gone; listening again');
        else if (!/timed out/i.test(message)) o.log.warn({ port: o.port, err: message }, 'SRT listener failed; listening again');
      }
      delay = Date.now() - began < QUICK_EXIT_MS ? Math.min(delay * 2, RETRY_MAX_MS) : RETRY_MIN_MS;
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, delay);
        abort.signal.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
      });
    }
  })();
  return {
    async stop() {
      abort.abort();
      await done;
    },
  };
}
