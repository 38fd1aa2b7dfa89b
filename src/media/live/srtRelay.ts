import type { Logger } from 'pino';
import { runFfmpeg } from '../ffmpeg.ts';

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
 * match, or libsrt rejects the caller before any media and the listener keeps waiting. When the caller leaves (or its
 * caller is silent for 2 s: gone without a goodbye), ffmpeg ends; the relay listens again at once, so a
 * reconnecting encoder is taken whatever time it was away.
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

export function srtListenerUrl(host: string, port: number, passphrase: string): string {
  const bare = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  // timeout: a caller silent for 2 s (gone without a goodbye) ends the run, so the listener is back for its reconnect.
  return `srt://${bare}:${port}?mode=listener&timeout=2000000&passphrase=${encodeURIComponent(passphrase)}`;
}

export function startSrtRelay(o: SrtRelayOptions): SrtRelay {
  const abort = new AbortController();
  const source = srtListenerUrl(o.host, o.port, o.passphrase);
  const redact = { [source]: `srt://${o.host}:${o.port}`, [o.target]: 'the channel input', [o.passphrase]: '********' };
  const args = [
    // Start relaying as soon as the caller's stream is known: the ingest's GOP cache and the live run do the rest.
    ...['-fflags', '+nobuffer', '-probesize', '1000000', '-analyzeduration', '1000000'],
    ...['-i', source],
    ...['-map', '0:v:0?', '-map', '0:a:0?', '-c', 'copy'],
    ...['-f', 'flv', o.target],
  ];
  const done = (async () => {
    let delay = RETRY_MIN_MS;
    while (!abort.signal.aborted) {
      const began = Date.now();
      try {
        await runFfmpeg(args, { signal: abort.signal, redact });
        o.log.info({ port: o.port }, 'SRT caller left; listening again');
      } catch (e) {
        if (abort.signal.aborted) break;
        o.log.warn({ port: o.port, err: e instanceof Error ? e.message : String(e) }, 'SRT listener ended with an error; listening again');
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
