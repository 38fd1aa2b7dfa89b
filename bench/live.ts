import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pino, type Logger } from 'pino';
import { ffmpegPath, runFfmpeg } from '../src/media/ffmpeg.ts';
import { runArgs } from '../src/media/live/args.ts';
import { readDecodeTime } from '../src/media/live/packaging/mp4.ts';
import { glassToGlass } from './liveGlass.ts';
import { restreamCpu } from './liveRestream.ts';
import { createLivePipeline, startRtmpIngest, type LivePipeline, type LiveRendition, type RtmpIngest } from '../src/media/live/index.ts';

/**
 * A live channel fed over RTMP with 720p30 and a 3-rung ladder, against the same ffmpeg command (the one the pipeline
 * builds) run by hand on the same ingest in the same run:
 * - ingest-to-playable latency: the encoder stamps every frame with its number as a barcode; a frame leaves the
 *   encoder at t0 + n/30 (t0 from the encoder's own progress); the segment holding it is playable once it is listed
 *   in the rung's playlist and read back over HTTP. Reported for the segment's first frame (what the issue's target
 *   means: a frame waits for its segment to close) and its last frame.
 * - CPU per channel: ffmpeg's CPU time (from /proc) plus this process's (ingest, packager, HTTP), per wall second.
 * - channels sustained: 1, 2, … channels at once until one of them falls behind real time.
 *
 * - restream CPU per destination (`-c copy` to local RTMP listeners; bench/liveRestream.ts), first; `live restream`
 *   runs it alone.
 *
 * - glass-to-glass latency, NormalLatency and ReducedLatency against plain ffmpeg HLS (bench/liveGlass.ts), last;
 *   `live glass` runs it alone.
 *
 * BENCH_SECONDS (default 30) per phase, BENCH_MAX_CHANNELS (default 3).
 */
const LADDER: LiveRendition[] = [
  { name: '720p', width: 1280, height: 720, videoBitrate: 2_500_000, frameRate: 30 },
  { name: '480p', width: 854, height: 480, videoBitrate: 1_200_000, frameRate: 30 },
  { name: '360p', width: 640, height: 360, videoBitrate: 700_000, frameRate: 30 },
];
const SEGMENT_SECONDS = 2;
const BITS = 20;
const BAR = 32; // px per bit, in the 1280-wide picture

interface Stamped {
  /** Seconds from ffmpeg closing the segment file (its mtime) to the segment being listed and read over HTTP. */
  writtenToPlayable?: number;
  playableAt: number;
  firstFrame: number;
  lastFrame: number;
}

export async function run(args: string[] = []): Promise<void> {
  const seconds = Number(process.env.BENCH_SECONDS ?? 30);
  const maxChannels = Number(process.env.BENCH_MAX_CHANNELS ?? 3);
  if (args.includes('glass')) return glassToGlass(seconds);
  const dir = mkdtempSync(join(tmpdir(), 'mediaplane-bench-live-'));
  const log = pino({ level: 'warn' });
  const keys = new Map<string, string>();
  const pipelines = new Map<string, LivePipeline>();
  const ingest: RtmpIngest = await startRtmpIngest({
    host: '127.0.0.1',
    port: 0,
    authorize: (key) => (keys.has(key) ? { channelId: keys.get(key)! } : { refused: 'unknown key' }),
    onPublish: (id) => pipelines.get(id)?.setInput({ url: ingest.inputUrl(id)!, bytesReceived: () => ingest.bytesReceived(id) ?? 0 }),
    onUnpublish: (id) => pipelines.get(id)?.setInput(null),
    log,
  });
  const http = createServer((req, res) => {
    try {
      res.end(readFileSync(join(dir, decodeURIComponent(new URL(req.url!, 'http://x').pathname))));
    } catch {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;

  try {
    // Restream CPU per destination (`-c copy`): `npm run bench -- live restream` runs this phase alone.
    {
      keys.set('k-restream', 'restream');
      const encoder = startEncoder(ingest.port, 'k-restream');
      try {
        await until(() => ingest.inputUrl('restream') !== undefined, 20_000);
        await restreamCpu(ingest, 'restream', Math.min(seconds, 20), log);
      } finally {
        await encoder.stop();
      }
      if (args.includes('restream')) return;
      console.log('');
    }
    const handArgs = runArgs({
      source: { kind: 'live', url: '<input>', loop: false },
      renditions: LADDER,
      audioOnly: false,
      segmentSeconds: SEGMENT_SECONDS,
      offset: 0,
      dir: '<dir>',
    });
    console.log(
      `ladder: ${LADDER.map((r) => `${r.width}x${r.height}@${r.videoBitrate / 1000}k`).join(', ')}, ${SEGMENT_SECONDS} s segments, ${seconds} s per phase`,
    );
    console.log(`command (by hand and in the pipeline): ffmpeg -hide_banner -nostdin -loglevel error ${handArgs.join(' ')}\n`);

    // Latency and CPU, one channel: by hand, then the pipeline, then by hand again (the machine is shared).
    const results: { side: string; stamped: Stamped[]; cpu: number }[] = [];
    for (const side of ['hand', 'pipeline', 'hand', 'pipeline']) {
      const key = `k-${side}-${results.length}`;
      const channelId = `c-${results.length}`;
      keys.set(key, channelId);
      const encoder = startEncoder(ingest.port, key);
      try {
        await until(() => ingest.inputUrl(channelId) !== undefined, 20_000);
        const channelDir = join(dir, channelId);
        let playlist: string;
        let stopSide: () => Promise<void>;
        let pids: () => number[];
        let ffmpegDir: string;
        if (side === 'hand') {
          mkdirSync(channelDir, { recursive: true });
          const args = runArgs({
            source: { kind: 'live', url: ingest.inputUrl(channelId)!, loop: false },
            renditions: LADDER,
            audioOnly: false,
            segmentSeconds: SEGMENT_SECONDS,
            offset: 0,
            dir: channelDir,
          });
          const child = spawn(ffmpegPath(), ['-hide_banner', '-nostdin', '-loglevel', 'error', ...args], { stdio: 'ignore' });
          playlist = `${channelId}/720p/index.m3u8`;
          ffmpegDir = channelDir;
          pids = () => [child.pid!];
          stopSide = async () => {
            child.kill('SIGTERM');
            await new Promise((r) => child.once('close', r));
          };
        } else {
          const pipeline = pipelineInto(channelId, channelDir, join(dir, `${channelId}-work`), log);
          pipelines.set(channelId, pipeline);
          await pipeline.start();
          pipeline.setInput({ url: ingest.inputUrl(channelId)! });
          playlist = `${channelId}/720p.m3u8`;
          ffmpegDir = join(dir, `${channelId}-work`);
          pids = () => ffmpegPids(join(dir, `${channelId}-work`));
          stopSide = () => pipeline.stop();
        }
        const stamped = await watch(base, playlist, channelDir, encoder, seconds, pids, ffmpegDir);
        await stopSide();
        results.push({ side, stamped: stamped.stamped, cpu: stamped.cpu });
      } finally {
        await encoder.stop();
      }
    }
    const summary = (side: string) => {
      const rs = results.filter((r) => r.side === side);
      const segs = rs.flatMap((r) => r.stamped);
      const first = segs.map((s) => s.playableAt - s.firstFrame);
      const last = segs.map((s) => s.playableAt - s.lastFrame);
      const written = segs.flatMap((x) => (x.writtenToPlayable === undefined ? [] : [x.writtenToPlayable]));
      return {
        first: median(first),
        firstMax: Math.max(...first),
        last: median(last),
        written: median(written),
        writtenMax: Math.max(...written),
        cpu: mean(rs.map((r) => r.cpu)),
        n: segs.length,
      };
    };
    const hand = summary('hand');
    const pipe = summary('pipeline');
    const row = (name: string, s: typeof hand) =>
      `${name.padEnd(9)} first frame → playable: median ${s.first.toFixed(2)} s (max ${s.firstMax.toFixed(2)} s); last frame → playable: median ${s.last.toFixed(2)} s; segment written → playable: median ${s.written.toFixed(3)} s (max ${s.writtenMax.toFixed(3)} s); CPU ${(s.cpu * 100).toFixed(0)}% of a core (${s.n} segments)`;
    console.log(row('by hand', hand));
    console.log(row('pipeline', pipe));
    console.log(
      `ratio pipeline/hand: latency (first frame) ${(pipe.first / hand.first).toFixed(2)}×, segment written → playable ${(pipe.written / hand.written).toFixed(2)}× (+${((pipe.written - hand.written) * 1000).toFixed(0)} ms), CPU ${(pipe.cpu / hand.cpu).toFixed(2)}×`,
    );

    // Channels at once, each with its own encoder, until one falls behind real time.
    for (let n = 1; n <= maxChannels; n++) {
      const encoders: ReturnType<typeof startEncoder>[] = [];
      const ids: string[] = [];
      try {
        for (let i = 0; i < n; i++) {
          const channelId = `many-${n}-${i}`;
          keys.set(`k-${channelId}`, channelId);
          const pipeline = pipelineInto(channelId, join(dir, channelId), join(dir, `${channelId}-work`), log);
          pipelines.set(channelId, pipeline);
          await pipeline.start();
          encoders.push(startEncoder(ingest.port, `k-${channelId}`));
          ids.push(channelId);
        }
        // Let every channel reach its live input, then count published media time over the window.
        await new Promise((r) => setTimeout(r, 8000));
        const before = ids.map((id) => mediaSeconds(join(dir, id, '720p.m3u8')));
        const t0 = Date.now();
        await new Promise((r) => setTimeout(r, seconds * 1000));
        const wall = (Date.now() - t0) / 1000;
        const speeds = ids.map((id, i) => (mediaSeconds(join(dir, id, '720p.m3u8')) - before[i]!) / wall);
        const ok = speeds.every((s) => s >= 0.95);
        console.log(`${n} channel(s) at once: speed ${speeds.map((s) => s.toFixed(2)).join(', ')}× real time → ${ok ? 'sustained' : 'NOT sustained'}`);
        if (!ok) break;
      } finally {
        await Promise.all(encoders.map((e) => e.stop()));
        await Promise.all(ids.map((id) => pipelines.get(id)!.stop()));
      }
    }
    console.log('');
    await glassToGlass(seconds);
    console.log(
      `machine: ${cpus().length} cores, load average ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')} (1/5/15 min) at the end`,
    );
  } finally {
    await ingest.close();
    await new Promise((r) => http.close(r));
    rmSync(dir, { recursive: true, force: true });
  }
}

function pipelineInto(channelId: string, outDir: string, workDir: string, log: Logger): LivePipeline {
  return createLivePipeline({
    channelId,
    workDir,
    renditions: LADDER,
    audioOnly: false,
    segmentSeconds: SEGMENT_SECONDS,
    windowSegments: 10,
    inputLoss: { type: 'COLOR', color: '#000000' },
    async publish(key, body) {
      const file = join(outDir, key);
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(`${file}.tmp`, body);
      renameSync(`${file}.tmp`, file);
    },
    async remove(keys) {
      for (const k of keys) rmSync(join(outDir, k), { force: true });
    },
    log,
    onEvent: () => {},
  });
}

/** 720p30 test pattern with a barcode of the frame number on top, pushed in real time; t0 from its progress. */
function startEncoder(port: number, key: string): { child: ChildProcess; t0: () => number; stop(): Promise<void> } {
  const bits = `color=c=black:s=${BITS * BAR}x32:r=30,format=yuv420p,geq=lum='255*mod(floor(N/pow(2\\,floor(X/${BAR})))\\,2)':cb=128:cr=128[bc]`;
  const child = spawn(
    ffmpegPath(),
    [
      '-hide_banner',
      '-nostdin',
      '-loglevel',
      'error',
      '-progress',
      'pipe:1',
      '-stats_period',
      '0.2',
      '-re',
      '-f',
      'lavfi',
      '-i',
      'testsrc2=size=1280x720:rate=30',
      '-re',
      '-f',
      'lavfi',
      '-i',
      'sine=frequency=440:sample_rate=48000',
      '-filter_complex',
      `${bits};[0:v][bc]overlay=0:0,format=yuv420p[v]`,
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
      '60',
      '-b:v',
      '4M',
      '-c:a',
      'aac',
      '-b:a',
      '128k',
      '-f',
      'flv',
      `rtmp://127.0.0.1:${port}/live/${key}`,
    ],
    { stdio: ['ignore', 'pipe', 'ignore'] },
  );
  let t0 = Infinity;
  let buf = '';
  child.stdout!.setEncoding('utf8').on('data', (c: string) => {
    buf += c;
    for (const m of buf.matchAll(/out_time_us=(\d+)/g)) t0 = Math.min(t0, Date.now() - Number(m[1]) / 1000);
    buf = buf.slice(buf.lastIndexOf('\n') + 1);
  });
  const closed = new Promise((r) => child.once('close', r));
  return {
    child,
    t0: () => t0,
    async stop() {
      child.kill('SIGTERM');
      await closed;
    },
  };
}

/** Polls the top rung's playlist over HTTP; each new segment is fetched; its frames' barcodes are read afterwards. */
async function watch(
  base: string,
  playlist: string,
  channelDir: string,
  encoder: ReturnType<typeof startEncoder>,
  seconds: number,
  pids: () => number[],
  ffmpegDir: string,
) {
  const seen = new Map<string, { at: number; body: Buffer; init: Buffer; written?: number }>();
  const playlistDir = playlist.slice(0, playlist.lastIndexOf('/') + 1);
  let cpuStart: { ffmpeg: number; node: NodeJS.CpuUsage; at: number } | undefined;
  let cpu = 0;
  const end = Date.now() + (seconds + 6) * 1000;
  while (Date.now() < end) {
    const res = await fetch(`${base}/${playlist}`).catch(() => undefined);
    if (res?.ok) {
      const text = await res.text();
      let map = '';
      for (const line of text.split('\n')) {
        if (line.startsWith('#EXT-X-MAP:')) map = /URI="([^"]+)"/.exec(line)![1]!;
        if (!line || line.startsWith('#') || seen.has(line)) continue;
        const seg = await fetch(`${base}/${playlistDir}${line}`);
        if (!seg.ok) continue;
        const body = Buffer.from(await seg.arrayBuffer());
        const at = Date.now();
        const init = Buffer.from(await (await fetch(`${base}/${playlistDir}${map}`)).arrayBuffer());
        seen.set(line, { at, body, init, written: writtenAt(ffmpegDir, body) });
      }
    }
    // CPU is measured over the middle of the phase, once the live run is up.
    if (!cpuStart && seen.size >= 2) cpuStart = { ffmpeg: cpuSeconds(pids()), node: process.cpuUsage(), at: Date.now() };
    if (cpuStart && !cpu && Date.now() > cpuStart.at + (seconds - 6) * 1000) {
      const node = process.cpuUsage(cpuStart.node);
      cpu = (cpuSeconds(pids()) - cpuStart.ffmpeg + (node.user + node.system) / 1e6) / ((Date.now() - cpuStart.at) / 1000);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  const t0 = encoder.t0();
  const stamped: Stamped[] = [];
  // The first segments of a run include the ingest's cached GOP (frames older than the connection): skip them.
  for (const { at, body, init, written } of [...seen.values()].slice(2)) {
    const frames = await barcodes(channelDir, init, body);
    if (frames.length === 0) continue;
    stamped.push({
      writtenToPlayable: written === undefined ? undefined : (at - written) / 1000,
      playableAt: at,
      firstFrame: t0 + (frames[0]! / 30) * 1000,
      lastFrame: t0 + (frames.at(-1)! / 30) * 1000,
    });
  }
  return {
    stamped: stamped.map((s) => ({
      writtenToPlayable: s.writtenToPlayable,
      playableAt: s.playableAt / 1000,
      firstFrame: s.firstFrame / 1000,
      lastFrame: s.lastFrame / 1000,
    })),
    cpu,
  };
}

/** The frame numbers in a segment, read from the barcode strip of every frame. */
async function barcodes(scratch: string, init: Buffer, segment: Buffer): Promise<number[]> {
  const file = join(scratch, `.bench-${Date.now()}.mp4`);
  const raw = `${file}.gray`;
  writeFileSync(file, Buffer.concat([init, segment]));
  try {
    await runFfmpeg(['-i', file, '-vf', `crop=${BITS * BAR}:32:0:0`, '-f', 'rawvideo', '-pix_fmt', 'gray', '-y', raw]);
    const px = readFileSync(raw);
    const size = BITS * BAR * 32;
    const out: number[] = [];
    for (let f = 0; f + size <= px.length; f += size) {
      let n = 0;
      for (let b = 0; b < BITS; b++) if (px[f + 16 * BITS * BAR + b * BAR + BAR / 2]! > 128) n += 2 ** b;
      out.push(n);
    }
    return out;
  } finally {
    rmSync(file, { force: true });
    rmSync(raw, { force: true });
  }
}

function ffmpegPids(workDir: string): number[] {
  return execFileSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' })
    .split('\n')
    .filter((l) => l.includes(workDir) && l.includes('ffmpeg'))
    .map((l) => Number(l.trim().split(/\s+/)[0]));
}

/** utime + stime of processes, in seconds. */
function cpuSeconds(pids: number[]): number {
  let ticks = 0;
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // exited
    }
  }
  return ticks / 100;
}

function mediaSeconds(file: string): number {
  try {
    const text = readFileSync(file, 'utf8');
    const seq = Number(/#EXT-X-MEDIA-SEQUENCE:(\d+)/.exec(text)?.[1] ?? 0);
    // Segments are SEGMENT_SECONDS long: the sequence number of the newest counts them all.
    const listed = [...text.matchAll(/#EXTINF:([\d.]+)/g)].length;
    return (seq + listed) * SEGMENT_SECONDS;
  } catch {
    return 0;
  }
}

async function until(check: () => boolean, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 50));
  }
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(xs.length, 1);
function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor(s.length / 2)]! : NaN;
}

/** When ffmpeg finished writing this segment: the mtime of the file in its output directory with the same bytes' decode time. */
const tfdtCache = new Map<string, number>();
function writtenAt(ffmpegDir: string, body: Buffer): number | undefined {
  const want = readDecodeTime(body);
  const files = execFileSync('find', [ffmpegDir, '-path', '*720p/*.m4s'], { encoding: 'utf8' }).split('\n').filter(Boolean);
  for (const f of files) {
    try {
      const key = `${f}:${statSync(f).mtimeMs}`;
      if (!tfdtCache.has(key)) tfdtCache.set(key, readDecodeTime(readFileSync(f)));
      if (tfdtCache.get(key) === want) return statSync(f).mtimeMs;
    } catch {
      // removed meanwhile
    }
  }
  return undefined;
}
