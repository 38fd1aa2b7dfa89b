import { createReadStream, existsSync, statSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, normalize, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser } from 'playwright-core';
import { contentTypeOf } from '../../src/storage/contentTypes.ts';

/** Debian's chromium; never a downloaded browser. `scripts/ensure-system-deps.sh chromium` installs it. */
export const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  // Muted videos may autoplay anyway; this keeps a test from depending on it.
  '--autoplay-policy=no-user-gesture-required',
];

export const launchBrowser = (): Promise<Browser> => chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_FLAGS });

export interface StaticServer {
  url: string;
  /** Paths requested so far, in order (to check what a player fetched). */
  requests: string[];
  close(): Promise<void>;
}

async function listen(handler: (req: IncomingMessage, res: ServerResponse) => void, host: string): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/**
 * Serves a directory the way a CDN serves outputs: content types by extension, byte ranges, and CORS so a page on
 * another origin can fetch segments.
 */
export async function serveDirectory(root: string): Promise<StaticServer> {
  const requests: string[] = [];
  const cors = {
    'access-control-allow-origin': '*',
    'access-control-allow-headers': 'Range',
    'access-control-expose-headers': 'Content-Length, Content-Range',
  };
  const served = await listen((req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
    requests.push(path);
    if (req.method === 'OPTIONS') return res.writeHead(204, cors).end();
    const file = normalize(join(root, path));
    if (!file.startsWith(root + sep) || !existsSync(file) || !statSync(file).isFile()) return res.writeHead(404, cors).end();
    const size = statSync(file).size;
    // ES modules (the SDK's build) load only with a JavaScript type; the store's table is for media.
    const headers = { ...cors, 'content-type': file.endsWith('.js') ? 'text/javascript' : contentTypeOf(file), 'accept-ranges': 'bytes' };
    const range = /^bytes=(\d*)-(\d*)$/.exec(req.headers.range ?? '');
    if (range) {
      const start = range[1] ? Number(range[1]) : size - Number(range[2]);
      const end = range[1] && range[2] ? Math.min(Number(range[2]), size - 1) : size - 1;
      if (start > end || start >= size) return res.writeHead(416, { ...headers, 'content-range': `bytes */${size}` }).end();
      res.writeHead(206, { ...headers, 'content-length': end - start + 1, 'content-range': `bytes ${start}-${end}/${size}` });
      return req.method === 'HEAD' ? res.end() : createReadStream(file, { start, end }).pipe(res);
    }
    res.writeHead(200, { ...headers, 'content-length': size });
    return req.method === 'HEAD' ? res.end() : createReadStream(file).pipe(res);
  }, '127.0.0.1');
  return { ...served, requests };
}

const PLAYERS: Record<string, string> = {
  '/hls.js': fileURLToPath(new URL('../../node_modules/hls.js/dist/hls.min.js', import.meta.url)),
  '/dash.js': fileURLToPath(new URL('../../node_modules/dashjs/dist/modern/umd/dash.all.min.js', import.meta.url)),
  '/shaka.js': fileURLToPath(new URL('../../node_modules/shaka-player/dist/shaka-player.compiled.js', import.meta.url)),
};

const PAGE = `<!doctype html><html><head><script src="/hls.js"></script><script src="/dash.js"></script></head>
<body><video id="v" muted playsinline width="320"></video></body></html>`;
/** At `/shaka`: the same page with Shaka Player, a third player of other makers' (loaded only where a test asks for it). */
const SHAKA_PAGE = PAGE.replace('</head>', '<script src="/shaka.js"></script></head>');

/** The page a viewer opens: on its own origin (localhost), with hls.js and dash.js from node_modules. */
export async function servePlayerPage(): Promise<{ url: string; close(): Promise<void> }> {
  return listen((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (PLAYERS[path]) return createReadStream(PLAYERS[path]).pipe(res.writeHead(200, { 'content-type': 'text/javascript' }));
    return res.writeHead(200, { 'content-type': 'text/html' }).end(path === '/shaka' ? SHAKA_PAGE : PAGE);
  }, 'localhost');
}

export interface Playback {
  /** `video.currentTime` sampled while playing. */
  times: number[];
  videoWidth: number;
  videoHeight: number;
  /** Player-reported tracks: audio languages, subtitle languages. */
  audioTracks: string[];
  textTracks: string[];
  /** Cues the player put on the video element from the first caption track, which it turned on. */
  cues: { start: number; end: number; text: string }[];
  /** hls.js: the URLs of the audio-rendition fragments it appended, in order (none when audio is muxed with the video). */
  audioFragments: string[];
  /** Chromium: audio bytes the media element decoded (`webkitAudioDecodedByteCount`), 0 elsewhere. */
  audioDecodedBytes: number;
  /** The first fatal player or media element error, if any. */
  error?: string;
}

/**
 * Opens the player page in a fresh tab, plays `url` with hls.js (`player: 'hls'`) or dash.js (`'dash'`) and samples
 * the playhead every 250 ms for `seconds`. The page and the media are on different origins, as in production.
 */
export async function play(
  browser: Browser,
  pageUrl: string,
  url: string,
  {
    player = 'hls',
    seconds = 2.5,
    height,
    drmToken,
    startTime,
    untilAdvanced,
    clearKeyLicenseUrl,
    mpdClockOnly,
  }: {
    /** `shaka`: Shaka Player, on the page's `/shaka` (its library loaded only there). */
    player?: 'hls' | 'dash' | 'shaka';
    /** How long the playhead is sampled (with `untilAdvanced`: at most). */
    seconds?: number;
    /** Stop sampling as soon as the playhead has moved this many seconds on from where it first had data. */
    untilAdvanced?: number;
    /** hls.js: play only the rung of this height (no ABR). */
    height?: number;
    /** Encrypted outputs: the DRM token sent (Authorization: Bearer) with key and license requests; '' sends none. */
    drmToken?: string;
    /** hls.js, SAMPLE-AES outputs: the ClearKey license URL (EME); hls.js takes it from its configuration only. */
    clearKeyLicenseUrl?: string;
    /**
     * Where to start (presentation time in seconds). dash.js: live, within the window, never nearer the edge; hls.js:
     * its `startPosition`, also on a live or EVENT playlist (which it would otherwise start near the end).
     */
    startTime?: number;
    /**
     * dash.js: the clock only from the MPD's UTCTiming, without dash.js's fallback to the MPD response's `Date` (other
     * players have none): a clock it cannot read is then the error it reports.
     */
    mpdClockOnly?: boolean;
  } = {},
): Promise<Playback> {
  const page = await browser.newPage();
  try {
    await page.goto(player === 'shaka' ? new URL('/shaka', pageUrl).toString() : pageUrl);
    return await page.evaluate(
      async ({ url, player, seconds, height, drmToken, startTime, untilAdvanced, clearKeyLicenseUrl, mpdClockOnly }) => {
        const video = document.getElementById('v') as HTMLVideoElement;
        const w = window as any;
        let error: string | undefined;
        let tracks: () => { audio: string[]; text: string[] };
        let turnOnCaptions = () => {};
        const audioFragments: string[] = [];
        if (player === 'hls') {
          if (!w.Hls.isSupported())
            return {
              times: [],
              videoWidth: 0,
              videoHeight: 0,
              audioTracks: [],
              textTracks: [],
              cues: [],
              audioFragments,
              audioDecodedBytes: 0,
              error: 'hls.js: MSE unsupported',
            };
          // The token goes only with key requests: segment requests stay simple (no CORS preflight).
          const xhrSetup = (xhr: XMLHttpRequest, u: string) => {
            if (drmToken && u.includes('/drm/v1/licenses/')) xhr.setRequestHeader('Authorization', `Bearer ${drmToken}`);
          };
          // SAMPLE-AES (cbcs fMP4) goes through EME ClearKey: hls.js posts the CDM's license request as it is, the token
          // added here.
          const eme = clearKeyLicenseUrl
            ? {
                emeEnabled: true,
                drmSystems: { 'org.w3.clearkey': { licenseUrl: clearKeyLicenseUrl } },
                licenseXhrSetup: (xhr: XMLHttpRequest, u: string) => {
                  xhr.open('POST', u, true);
                  if (drmToken) xhr.setRequestHeader('Authorization', `Bearer ${drmToken}`);
                },
              }
            : {};
          const start = startTime === undefined ? {} : { startPosition: startTime };
          const hls = new w.Hls(drmToken === undefined ? { ...eme, ...start } : { xhrSetup, ...eme, ...start });
          hls.on(w.Hls.Events.MANIFEST_PARSED, () => {
            if (height === undefined) return;
            const level = hls.levels.findIndex((l: any) => l.height === height);
            if (level < 0) error = `no rung of height ${height}`;
            else hls.currentLevel = level;
          });
          hls.on(w.Hls.Events.FRAG_BUFFERED, (_: unknown, d: any) => {
            if (d.frag.type === 'audio') audioFragments.push(d.frag.url);
          });
          hls.on(w.Hls.Events.ERROR, (_: unknown, d: any) => {
            if (d.fatal && !error) error = `hls.js ${d.type}: ${d.details}`;
          });
          // The order hls.js's API documents: the manifest asked for once the media source is open.
          hls.on(w.Hls.Events.MEDIA_ATTACHED, () => hls.loadSource(url));
          hls.attachMedia(video);
          tracks = () => ({ audio: hls.audioTracks.map((t: any) => t.lang ?? t.name), text: hls.subtitleTracks.map((t: any) => t.lang ?? t.name) });
          // hls.js turns on only DEFAULT=YES captions, and resets a choice made before it has loaded them: keep asking.
          turnOnCaptions = () => {
            if (hls.subtitleTracks.length > 0 && hls.subtitleTrack < 0) hls.subtitleTrack = 0;
          };
        } else if (player === 'shaka') {
          w.shaka.polyfill.installAll();
          const shaka = new w.shaka.Player();
          shaka.addEventListener('error', (e: any) => {
            if (!error) error = `shaka: ${e.detail?.code} ${JSON.stringify(e.detail?.data ?? []).slice(0, 200)}`;
          });
          await shaka.attach(video);
          await shaka.load(url, startTime).catch((e: any) => {
            error ??= `shaka load: ${e.code} ${JSON.stringify(e.data ?? []).slice(0, 200)}`;
          });
          tracks = () => ({ audio: shaka.getAudioTracks().map((t: any) => t.language), text: shaka.getTextTracks().map((t: any) => t.language) });
        } else {
          const dash = w.dashjs.MediaPlayer().create();
          // ClearKey through EME; the license URL comes from the MPD (dashif:Laurl), the token from the page.
          if (drmToken !== undefined) {
            dash.setProtectionData({ 'org.w3.clearkey': { httpRequestHeaders: drmToken ? { Authorization: `Bearer ${drmToken}` } : {} } });
          }
          if (mpdClockOnly) dash.updateSettings({ streaming: { utcSynchronization: { useManifestDateHeaderTimeSource: false } } });
          dash.on('error', (e: any) => {
            if (!error) error = `dash.js: ${JSON.stringify(e.error ?? e).slice(0, 300)}`;
          });
          dash.on('streamInitialized', () => {
            const text = dash.getTracksFor('text');
            if (text.length > 0) dash.setCurrentTrack(text[0]);
          });
          dash.initialize(video, url, true, startTime ?? NaN);
          tracks = () => ({
            audio: dash.getTracksFor('audio').map((t: any) => t.lang),
            text: dash.getTracksFor('text').map((t: any) => t.lang),
          });
        }
        video.addEventListener('error', () => {
          if (!error) error = `media element: ${video.error?.code} ${video.error?.message}`;
        });
        video.muted = true;
        // A stream that never gets data (a refused key) leaves play() pending for ever: wait no longer than the sampling.
        await Promise.race([
          player !== 'dash'
            ? video.play().catch((e: Error) => {
                // hls.js attaches asynchronously; the element starts once it has data.
                if (e.name !== 'AbortError') error ??= `play(): ${e.message}`;
              })
            : // dash.js starts it (autoplay): it refreshes a dynamic MPD only once it has seen the element's `play` event,
              // and a play() before it listens (before the MPD is loaded) is one it never sees: it stays on the first MPD.
              new Promise((r) => video.addEventListener('playing', r, { once: true })),
          new Promise((r) => setTimeout(r, seconds * 1000)),
        ]);
        const times: number[] = [];
        const start = performance.now();
        let from: number | undefined;
        while (performance.now() - start < seconds * 1000 && !error) {
          await new Promise((r) => setTimeout(r, 250));
          if (video.paused && video.readyState >= 2 && !video.ended) video.play().catch(() => {});
          turnOnCaptions();
          times.push(video.currentTime);
          if (video.readyState >= 2) from ??= video.currentTime;
          if (untilAdvanced !== undefined && from !== undefined && video.currentTime - from >= untilAdvanced) break;
        }
        const t = tracks();
        const shown = [...video.textTracks].find((tt) => tt.mode !== 'disabled' && tt.cues && tt.cues.length > 0);
        const cues = [...(shown?.cues ?? [])].map((c) => ({ start: c.startTime, end: c.endTime, text: (c as VTTCue).text }));
        const audioDecodedBytes = (video as any).webkitAudioDecodedByteCount ?? 0;
        return {
          times,
          videoWidth: video.videoWidth,
          videoHeight: video.videoHeight,
          audioTracks: t.audio,
          textTracks: t.text,
          cues,
          audioFragments,
          audioDecodedBytes,
          error,
        };
      },
      { url, player, seconds, height, drmToken, startTime, untilAdvanced, clearKeyLicenseUrl, mpdClockOnly },
    );
  } finally {
    await page.close();
  }
}
