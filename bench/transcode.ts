import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { ffmpegPath, runFfmpeg } from '../src/media/ffmpeg.ts';
import { planTranscode } from '../src/media/plan.ts';
import { transcode, type PublishSink } from '../src/media/transcode.ts';
import { presetById } from '../src/modules/transcoder/presets.ts';
import { throughApi } from './transcode-api.ts';

/**
 * A 60 s 1080p30 clip through the `hls-h264-ladder` preset by `transcode()`, against the very ffmpeg command the ladder
 * builder produces, run by hand in the same run. Reports wall times, their ratio (what the pipeline adds: probing,
 * master playlist, caption playlists) and time to first playable (a master playlist and a first segment on disk).
 *
 * BENCH_SECONDS (default 60) and BENCH_HEIGHT (default 1080) make a quicker run; BENCH_PAIRS (default 2) sets how
 * many times each side runs. `transcode chunked` runs the chunked path's benchmark instead (transcodeChunked.ts),
 * `transcode playable` the time to first playable of short and long sources (transcodePlayable.ts).
 */
export async function run(args: string[] = []): Promise<void> {
  // `transcode chunked`: the chunked path's wall time on one and two pinned workers against one pass (transcodeChunked.ts).
  if (args[0] === 'chunked') return (await import('./transcodeChunked.ts')).run(args.slice(1));
  // `transcode playable`: time to first playable through the API, 1-minute and long sources (transcodePlayable.ts).
  if (args[0] === 'playable') return (await import('./transcodePlayable.ts')).run();
  const seconds = Number(process.env.BENCH_SECONDS ?? 60);
  const height = Number(process.env.BENCH_HEIGHT ?? 1080);
  const width = Math.round((height * 16) / 9 / 2) * 2;
  const preset = presetById('hls-h264-ladder')!;
  const dir = mkdtempSync(join(tmpdir(), 'mediaplane-bench-'));
  try {
    const made = Date.now();
    const source = await makeSource(dir, seconds, height);
    console.log(`source: ${seconds} s ${width}x${height}p30 + AAC, generated in ${((Date.now() - made) / 1000).toFixed(1)} s`);
    const request = { input: source, tracks: [{ type: 'Audio' as const, index: 1 }], preset };

    // By hand: the command the ladder builder produces, printed and run directly.
    const plan = await planTranscode({ ...request, outDir: join(dir, 'hand') });
    const command = [ffmpegPath(), '-hide_banner', '-nostdin', '-loglevel', 'error', ...plan.args];
    console.log(`command: ${command.map(shellQuote).join(' ')}\n`);

    // Pairs in ABBA order, so a machine that gets busier or quieter during the run weighs on both sides alike.
    const pairs = Number(process.env.BENCH_PAIRS ?? 2);
    const hand: Timing[] = [];
    const fast: Timing[] = [];
    const pipeline: Timing[] = [];
    const api: Timing[] = [];
    let rungs = '';
    const runHand = async () => {
      rmSync(join(dir, 'hand'), { recursive: true, force: true });
      await planTranscode({ ...request, outDir: join(dir, 'hand') }); // recreates the output directories
      hand.push(await timed(join(dir, 'hand'), () => spawnQuiet(command)));
    };
    // Fast start by hand: the two commands an output published while it encodes runs (the video rungs; the audio beside
    // them), run directly; first playable when every rung's playlist and the audio's list a segment.
    const top = (await planTranscode({ ...request, outDir: join(dir, 'fast') })).layout.renditions[0]!.name;
    const runFastHand = async () => fast.push(await fastStartByHand(source, join(dir, 'fast')));
    const runPipeline = async () => {
      const outDir = join(dir, `pipeline-${pipeline.length}`);
      let outsideFfmpegMs = 0;
      const timing = await timed(outDir, async () => {
        const r = await transcode({ ...request, outDir });
        rungs = r.renditions.map((x) => `${x.width}x${x.height}`).join(', ');
        outsideFfmpegMs = r.timings.planMs + r.timings.finishMs;
      });
      pipeline.push({ ...timing, outsideFfmpegMs });
      rmSync(outDir, { recursive: true, force: true });
    };
    const runApi = async () => {
      // Wall time from the first byte uploaded; first playable from POST /vod/v1/assets (master, media playlist and
      // first segment fetchable over HTTP), against the hand-run command's first segment from its start.
      api.push(await throughApi(source));
    };
    for (let i = 0; i < pairs; i++) {
      if (i % 2 === 0) {
        await runHand();
        await runFastHand();
        await runPipeline();
        await runApi();
      } else {
        await runApi();
        await runPipeline();
        await runFastHand();
        await runHand();
      }
    }

    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
    const speed = (ms: number) => `${((seconds * 1000) / ms).toFixed(2)}x`;
    const row = (name: string, t: Timing[]) => {
      const wall = mean(t.map((x) => x.wallMs));
      return `| ${name} | ${t.map((x) => s(x.wallMs)).join(', ')} | ${s(wall)} | ${speed(wall)} | ${s(mean(t.map((x) => x.firstPlayableMs)))} |`;
    };
    console.log(`ladder: ${rungs} (x264 ${preset.x264Preset}, ${preset.segmentSeconds} s segments), ${pairs} pair(s) of runs\n`);
    console.log('| run | wall times | mean | speed (real time) | time to first playable (mean) |');
    console.log('|---|---|---|---|---|');
    console.log(row('ffmpeg by hand (baseline)', hand));
    console.log(row('fast start by hand (its two commands)', fast));
    console.log(row('transcode()', pipeline));
    console.log(row('API: upload → Available (first playable: from POST /vod/v1/assets)', api));
    const ratio = (side: Timing[], f: (t: Timing) => number) => (mean(side.map(f)) / mean(hand.map(f))).toFixed(3);
    console.log(
      `\nratio transcode() / by hand: wall time ${ratio(pipeline, (t) => t.wallMs)}, time to first playable ${ratio(pipeline, (t) => t.firstPlayableMs)}`,
    );
    console.log(
      `ratio API (upload → Available) / by hand: wall time ${ratio(api, (t) => t.wallMs)}, time to first playable ${ratio(api, (t) => t.firstPlayableMs)}`,
    );
    console.log(
      `ratio API / fast start by hand: time to first playable ${(mean(api.map((t) => t.firstPlayableMs)) / mean(fast.map((t) => t.firstPlayableMs))).toFixed(3)}`,
    );
    console.log(
      `quality of the top rung against the source (last runs): ${await quality(join(dir, 'hand'), source, top)} one pass; ${await quality(join(dir, 'fast'), source, top)} fast start`,
    );
    console.log(
      `transcode() outside ffmpeg (probing, planning, master and caption playlists): ${pipeline.map((t) => `${(t.outsideFfmpegMs! / 1000).toFixed(2)} s`).join(', ')}`,
    );
    console.log(
      `machine: ${cpus().length} cores, load average ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')} (1/5/15 min) at the end`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A `seconds` long 16:9 clip `height` pixels high at 30 fps (`testsrc2` and a 440 Hz tone) in `dir`. */
export async function makeSource(dir: string, seconds: number, height: number, name = 'source.mp4'): Promise<string> {
  const width = Math.round((height * 16) / 9 / 2) * 2;
  const source = join(dir, name);
  await runFfmpeg([
    ...['-f', 'lavfi', '-i', `testsrc2=size=${width}x${height}:rate=30:duration=${seconds}`],
    ...['-f', 'lavfi', '-i', `sine=frequency=440:sample_rate=48000:duration=${seconds}`],
    ...['-c:v', 'libx264', '-preset', 'ultrafast', '-crf', '18', '-g', '60', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-b:a', '128k', '-y', source],
  ]);
  return source;
}

/**
 * The fast start's two commands for `source` with `hls-h264-ladder` (the video rungs; the audio beside them), run
 * directly in `outDir`; first playable when every rung's playlist and the audio's list a segment.
 */
export async function fastStartByHand(source: string, outDir: string): Promise<Timing> {
  const request = { input: source, tracks: [{ type: 'Audio' as const, index: 1 }], preset: presetById('hls-h264-ladder')!, outDir, publish: NO_SINK };
  rmSync(outDir, { recursive: true, force: true });
  const plan = await planTranscode(request);
  const folders = [...plan.layout.renditions.map((r) => r.name), ...plan.layout.audio.map((_, k) => `audio_${k}`)];
  const commands = [plan.args, plan.sideArgs ?? []].map((a) => [ffmpegPath(), '-hide_banner', '-nostdin', '-loglevel', 'error', ...a]);
  return timed(outDir, () => Promise.all(commands.map(spawnQuiet)).then(() => {}), everyPlaylistListsASegment(folders));
}

export interface Timing {
  wallMs: number;
  firstPlayableMs: number;
  /** transcode() only: time spent outside ffmpeg (probing, planning, playlists). */
  outsideFfmpegMs?: number;
}

/** Planning a fast start: only whether an output is published decides it; the bench runs the commands by hand. */
const NO_SINK: PublishSink = { putFile: async () => {}, putText: async () => {}, playable: async () => {}, failed: () => {} };

/** Wall time of `work`, and when `outDir/hls` first held a master playlist and a rung playlist listing a segment. */
async function timed(outDir: string, work: () => Promise<void>, isPlayable = playable): Promise<Timing> {
  const start = performance.now();
  let firstPlayableMs = Number.NaN;
  const watch = setInterval(() => {
    if (Number.isNaN(firstPlayableMs) && isPlayable(join(outDir, 'hls'))) firstPlayableMs = performance.now() - start;
  }, 50);
  try {
    await work();
  } finally {
    clearInterval(watch);
  }
  const wallMs = performance.now() - start;
  return { wallMs, firstPlayableMs: Number.isNaN(firstPlayableMs) ? wallMs : firstPlayableMs };
}

function playable(hlsDir: string): boolean {
  const master = join(hlsDir, 'master.m3u8');
  if (!existsSync(master)) return false;
  const rung = readFileSync(master, 'utf8')
    .split('\n')
    .find((l) => l.trim() && !l.startsWith('#'));
  const playlist = rung && join(hlsDir, rung.trim());
  return !!playlist && existsSync(playlist) && readFileSync(playlist, 'utf8').includes('#EXTINF');
}

/** Every one of `folders` (the rungs and the audio) under `hlsDir` has a playlist listing a segment. */
const everyPlaylistListsASegment = (folders: string[]) => (hlsDir: string) =>
  folders.every((d) => existsSync(join(hlsDir, d, 'index.m3u8')) && readFileSync(join(hlsDir, d, 'index.m3u8'), 'utf8').includes('#EXTINF'));

/** SSIM (ffmpeg's own filter) of the top rung of an HLS output against the source, and that rung's average bit rate. */
async function quality(outDir: string, source: string, rung: string): Promise<string> {
  const playlist = join(outDir, 'hls', rung, 'index.m3u8');
  const stats = join(outDir, 'ssim.log');
  await runFfmpeg([
    '-i',
    playlist,
    '-i',
    source,
    '-lavfi',
    `[0:v]setpts=PTS-STARTPTS[a];[1:v]setpts=PTS-STARTPTS[b];[a][b]ssim=stats_file=${stats}`,
    '-f',
    'null',
    '-',
  ]);
  const frames = [...readFileSync(stats, 'utf8').matchAll(/All:([\d.]+)/g)].map((m) => Number(m[1]));
  const ssim = (frames.reduce((a, b) => a + b, 0) / frames.length).toFixed(4);
  const segments = readdirSync(join(outDir, 'hls', rung)).filter((f) => f.endsWith('.ts'));
  const bytes = segments.reduce((sum, f) => sum + statSync(join(outDir, 'hls', rung, f)).size, 0);
  const seconds = [...readFileSync(playlist, 'utf8').matchAll(/#EXTINF:([\d.]+)/g)].reduce((sum, m) => sum + Number(m[1]), 0);
  return `SSIM ${ssim}, ${Math.round((bytes * 8) / seconds / 1000)} kb/s`;
}

function spawnQuiet(command: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command[0], command.slice(1), { stdio: ['ignore', 'ignore', 'inherit'] });
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`ffmpeg exited with ${code}`))));
  });
}

const shellQuote = (arg: string) => (/^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`);
