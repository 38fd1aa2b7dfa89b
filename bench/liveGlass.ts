import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { ffmpegPath } from '../src/media/ffmpeg.ts';
import { runArgs } from '../src/media/live/args.ts';
import { launchBrowser, servePlayerPage, serveDirectory } from '../test/helpers/browser.ts';
import { tenantClient, type TestTenant } from '../test/helpers/client.ts';
import { until } from '../test/helpers/until.ts';

/**
 * Glass-to-glass latency: from the moment the encoder takes a frame to the moment Chromium presents it, for a
 * `NormalLatency` and a `ReducedLatency` channel of the platform (a real `mediaplane serve`: RTMP ingest, live runner,
 * object store, the delivery route with blocking reloads), each against a plain ffmpeg HLS output of the very same
 * input played by the same hls.js in the same run.
 *
 * The stamp: the encoder burns the wall clock (`RTCTIME`, in ms, modulo 2^24) into every frame as a 24-bit barcode
 * (white/black bars 24 px wide in the top 24 rows) before it encodes it. The page draws every presented frame
 * (`requestVideoFrameCallback`) into a canvas, reads the bars back and subtracts the stamp from the frame's expected
 * display time on the same clock: no OCR, one machine, one clock. The encoder pushes one stream to both sides at once
 * (ffmpeg's `tee`): the channel's ingest, and a plain ffmpeg listening on RTMP and writing HLS with the same encode
 * settings (`runArgs`: the command the NormalLatency pipeline runs), served as static files.
 */
const WIDTH = 640;
const HEIGHT = 360;
const FPS = 30;
const BITS = 24;
const BAR = 24;
const root = new URL('..', import.meta.url).pathname;
const RUNG = { name: '360p', width: WIDTH, height: HEIGHT, videoBitrate: 700_000, frameRate: FPS };

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = createServer().listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

function ffmpeg(args: string[]): { child: ChildProcess; stop(): Promise<void> } {
  const child = spawn(ffmpegPath(), ['-hide_banner', '-nostdin', '-loglevel', 'error', ...args], { stdio: ['ignore', 'ignore', 'inherit'] });
  const closed = new Promise((r) => child.once('close', r));
  return {
    child,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await closed;
    },
  };
}

/** The wall clock in ms, modulo 2^24, as a barcode in the top-left corner of every frame, taken before encoding. */
const STAMP =
  `[0:v]settb=1/1000000,setpts=RTCTIME,split[m][s];` +
  `[s]crop=${BITS * BAR}:${BAR}:0:0,geq=lum='255*mod(floor(mod(floor(T*1000)\\,16777216)/pow(2\\,floor(X/${BAR})))\\,2)':cb=128:cr=128[bc];` +
  `[m][bc]overlay=0:0,setpts=N/${FPS}/TB,format=yuv420p[v]`;

/** The stamped camera: one encode, pushed to every RTMP URL at once. */
function camera(urls: string[]) {
  return ffmpeg([
    '-re',
    '-f',
    'lavfi',
    '-i',
    `testsrc2=size=${WIDTH}x${HEIGHT}:rate=${FPS}`,
    '-re',
    '-f',
    'lavfi',
    '-i',
    'sine=frequency=440:sample_rate=48000',
    '-filter_complex',
    STAMP,
    '-map',
    '[v]',
    '-map',
    '1:a',
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-tune',
    'zerolatency',
    '-g',
    String(FPS),
    '-b:v',
    '1500k',
    '-c:a',
    'aac',
    '-b:a',
    '128k',
    '-flags',
    '+global_header',
    '-f',
    'tee',
    urls.map((u) => `[f=flv:onfail=ignore]${u}`).join('|'),
  ]);
}

/** Plays `url` with hls.js for `seconds` and reads the stamp of every presented frame after `warmup` seconds. */
async function measure(
  browser: Browser,
  pageUrl: string,
  url: string,
  seconds: number,
  warmup: number,
): Promise<{ samples: number[]; edge: number[]; error?: string }> {
  const page = await browser.newPage();
  // tsx (esbuild, keepNames) wraps named functions in `__name(...)`, which the page does not have.
  await page.addInitScript('window.__name = (f) => f');
  try {
    await page.goto(pageUrl);
    return await page.evaluate(
      async ({ url, seconds, warmup, BITS, BAR, WIDTH, HEIGHT }) => {
        const video = document.getElementById('v') as HTMLVideoElement;
        const w = window as any;
        let error: string | undefined;
        // The same player settings on both sides: low-latency mode (used where the playlist has parts) and catching
        // up to the target latency by playing up to 1.25× faster after a stall, as hls.js advises for live.
        const hls = new w.Hls({ lowLatencyMode: true, maxLiveSyncPlaybackRate: 1.25 });
        hls.on(w.Hls.Events.ERROR, (_: unknown, d: any) => {
          if (d.fatal && !error) error = `hls.js ${d.type}: ${d.details}`;
        });
        hls.loadSource(url);
        hls.attachMedia(video);
        video.muted = true;
        void video.play().catch(() => {});
        const canvas = document.createElement('canvas');
        const ctx = canvas.getContext('2d', { willReadFrequently: true })!;
        const samples: number[] = [];
        const edge: number[] = [];
        let measuring = false;
        const onFrame = (_now: number, meta: any) => {
          if (measuring && video.videoWidth > 0) {
            const vw = video.videoWidth;
            const vh = video.videoHeight;
            if (canvas.width !== vw) [canvas.width, canvas.height] = [vw, vh];
            ctx.drawImage(video, 0, 0, vw, vh);
            const y = Math.floor(((BAR / 2) * vh) / HEIGHT);
            const row = ctx.getImageData(0, y, vw, 1).data;
            let stamp = 0;
            for (let b = 0; b < BITS; b++) {
              const x = Math.floor((((b + 0.5) * BAR) / WIDTH) * vw);
              if (row[x * 4]! > 128) stamp += 2 ** b;
            }
            const shown = Math.round(performance.timeOrigin + (meta.expectedDisplayTime ?? performance.now()));
            const latency = (((shown % 16777216) - stamp + 16777216) % 16777216) / 1000;
            // A frame whose bars were blurred by the scaler or the encoder reads as nonsense: not a latency.
            if (latency < 60) samples.push(latency);
          }
          video.requestVideoFrameCallback(onFrame);
        };
        video.requestVideoFrameCallback(onFrame);
        const started = performance.now();
        while (performance.now() - started < (seconds + warmup) * 1000 && !error) {
          await new Promise((r) => setTimeout(r, 250));
          if (video.paused && video.readyState >= 2) video.play().catch(() => {});
          measuring = performance.now() - started > warmup * 1000;
          if (measuring && Number.isFinite(hls.latency)) edge.push(hls.latency);
        }
        hls.destroy();
        return { samples, edge, error };
      },
      { url, seconds, warmup, BITS, BAR, WIDTH, HEIGHT },
    );
  } finally {
    await page.close();
  }
}

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor(q * s.length))]! : NaN;
};

export async function glassToGlass(seconds: number): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'mediaplane-bench-glass-'));
  const [port, rtmpPort] = [await freePort(), await freePort()];
  const base = `http://127.0.0.1:${port}`;
  const server = spawn(process.execPath, [join(root, 'bin/mediaplane.js'), 'serve'], {
    env: {
      ...process.env,
      LOG_LEVEL: 'warn',
      PORT: String(port),
      HOST: '127.0.0.1',
      MEDIAPLANE_PUBLIC_URL: base,
      MEDIAPLANE_DATA_DIR: join(dir, 'data'),
      MEDIAPLANE_ADMIN_TOKEN: 'bench-token',
      MEDIAPLANE_RTMP_HOST: '127.0.0.1',
      MEDIAPLANE_RTMP_PORT: String(rtmpPort),
      MEDIAPLANE_LIVE_POLL_MS: '200',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const [browser, page, files] = await Promise.all([launchBrowser(), servePlayerPage(), serveDirectory(dir)]);
  try {
    await until(
      () =>
        fetch(`${base}/readyz`)
          .then((r) => r.status)
          .catch(() => 0),
      (s) => s === 200,
      { timeoutMs: 60_000 },
    );
    const created = (await (
      await fetch(`${base}/admin/v1/tenants`, {
        method: 'POST',
        headers: { authorization: 'Bearer bench-token', 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'bench-glass' }),
      })
    ).json()) as any;
    const t: TestTenant = tenantClient(base, created.id, created.name, created.apiKey.key);
    console.log(
      `glass-to-glass: ${WIDTH}x${HEIGHT}p${FPS} stamped camera → RTMP → channel (${RUNG.name}, 2 s segments; ReducedLatency: parts of 0.333 s) → hls.js ${seconds} s per side, after 6 s of warm-up`,
    );
    const rows: { name: string; ours: number[]; bound: number[]; oursEdge: number[]; boundEdge: number[]; boundName: string }[] = [];
    for (const [latency, boundSegment] of [
      ['NormalLatency', 2],
      ['ReducedLatency', 0.5],
    ] as const) {
      const id = (
        await t.json('POST', '/live/v1/channels', {
          name: `glass ${latency}`,
          latency,
          input: { inputLoss: { type: 'COLOR', color: '#000000' } },
          qualities: [{ resolution: '360p', frameRate: FPS }],
        })
      ).body.id as string;
      await t.call('POST', `/live/v1/channels/${id}/start`);
      await until(
        async () => (await t.json('GET', `/live/v1/channels/${id}/status`)).body.status,
        (s) => s === 'On',
        { timeoutMs: 60_000 },
      );
      const conf = (await t.json('GET', `/live/v1/channels/${id}/configuration`)).body;
      const ingest = (conf.input.transportPrimaryIngestUrl as string).replace('localhost', '127.0.0.1');
      const ours = ((await t.json('GET', `/live/v1/channels/${id}`)).body.endpoints.find((e: any) => e.format === 'HLS').url as string).replace(
        /master\.m3u8$/,
        `${RUNG.name}.m3u8`,
      );
      // The bound: plain ffmpeg, the same encode, writing HLS (fMP4) on its own, listening for the same push.
      const boundDir = join(dir, `bound-${latency}`);
      mkdirSync(boundDir, { recursive: true });
      const boundPort = await freePort();
      const args = runArgs({
        source: { kind: 'live', url: `rtmp://127.0.0.1:${boundPort}/live/bound`, loop: false },
        renditions: [RUNG],
        audioOnly: false,
        segmentSeconds: boundSegment,
        offset: 0,
        dir: boundDir,
      });
      args.splice(args.indexOf('-i'), 0, '-listen', '1');
      const bound = ffmpeg(args);
      await new Promise((r) => setTimeout(r, 1000));
      const cam = camera([ingest, `rtmp://127.0.0.1:${boundPort}/live/bound`]);
      const boundUrl = `${files.url}/bound-${latency}/${RUNG.name}/index.m3u8`;
      try {
        const segments = async (url: string) => ((await (await fetch(url)).text().catch(() => '')).match(/#EXTINF/g) ?? []).length;
        await until(
          async () => Math.min(await segments(ours), await segments(boundUrl)),
          (n) => n >= 3,
          { timeoutMs: 60_000 },
        );
        // Both sides at once, in two tabs, from the same frames.
        const [a, b] = await Promise.all([measure(browser, page.url, ours, seconds, 6), measure(browser, page.url, boundUrl, seconds, 6)]);
        if (a.error || b.error) console.log(`  player error: ours ${a.error ?? 'none'}, bound ${b.error ?? 'none'}`);
        rows.push({
          name: latency,
          ours: a.samples,
          bound: b.samples,
          oursEdge: a.edge,
          boundEdge: b.edge,
          boundName: `plain ffmpeg HLS, ${boundSegment} s segments`,
        });
      } finally {
        await cam.stop();
        await bound.stop();
        await t.call('POST', `/live/v1/channels/${id}/stop`);
      }
    }
    for (const r of rows) {
      const [om, op, bm, bp] = [quantile(r.ours, 0.5), quantile(r.ours, 0.9), quantile(r.bound, 0.5), quantile(r.bound, 0.9)];
      // hls.latency: how far behind the playlist's live edge the player holds; the rest is camera → edge.
      const [oe, be] = [quantile(r.oursEdge, 0.5), quantile(r.boundEdge, 0.5)];
      console.log(
        `${r.name.padEnd(15)} ours: median ${om.toFixed(2)} s, p90 ${op.toFixed(2)} s (${r.ours.length} frames; player behind the edge ${oe.toFixed(2)} s) | ` +
          `${r.boundName}: median ${bm.toFixed(2)} s, p90 ${bp.toFixed(2)} s (${r.bound.length} frames; behind the edge ${be.toFixed(2)} s) | ratio ours/bound ${(om / bm).toFixed(2)}×`,
      );
    }
    console.log(
      `machine: ${cpus().length} cores, load average ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')} (1/5/15 min) at the end`,
    );
  } finally {
    server.kill('SIGTERM');
    await new Promise((r) => server.once('close', r));
    await Promise.all([browser.close(), page.close(), files.close()]);
    rmSync(dir, { recursive: true, force: true });
  }
}
