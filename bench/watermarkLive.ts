import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { ffmpegPath, runFfmpeg } from '../src/media/ffmpeg.ts';
import { runArgs } from '../src/media/live/args.ts';
import { forensicArgs } from '../src/media/live/forensic/forensic.ts';
import { renditionsOf } from '../src/modules/live/ladder.ts';
import { markedRungs } from '../src/modules/watermarking/channels.ts';

/**
 * bench/watermark live: what marking a live channel's rungs costs. One channel's run (the ffmpeg command the pipeline
 * builds, `runArgs`), the default ladder (720p, 480p, 360p at 30 fps) from a looped 720p30 `testsrc2` input read in
 * real time, with 0, 1, 2 and 3 marked rungs (chosen as `MEDIAPLANE_LIVE_WATERMARK_RUNGS` chooses them). Per run,
 * after a warm-up: ffmpeg's CPU time per wall second (cores busy), its speed (1.0 = real time; under 1 the channel
 * falls behind) and their ratio, CPU seconds per second of video (the cost, whatever else the machine runs).
 *
 * BENCH_SECONDS (default 20) measured per configuration; BENCH_RUNGS (default `0,1,2,3`).
 */
export async function run(): Promise<void> {
  const seconds = Number(process.env.BENCH_SECONDS ?? 20);
  const counts = (process.env.BENCH_RUNGS ?? '0,1,2,3').split(',').map(Number);
  const dir = mkdtempSync(join(tmpdir(), 'mediaplane-bench-wm-live-'));
  const ladder = renditionsOf(
    [720, 480, 360].map((height) => ({ resolution: `${height}p`, height, frameRate: 30 })),
    false,
  );
  console.log(`machine: ${cpus().length} cores, load ${loadavg()[0].toFixed(1)}; ladder ${ladder.map((r) => r.name).join(', ')}`);
  try {
    const source = join(dir, 'source.mp4');
    await runFfmpeg([
      ...['-f', 'lavfi', '-i', 'testsrc2=size=1280x720:rate=30:duration=30', '-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=48000:duration=30'],
      ...['-c:v', 'libx264', '-preset', 'ultrafast', '-crf', '20', '-g', '30', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-b:a', '128k', '-y', source],
    ]);
    const rows: string[] = [];
    for (const count of counts) {
      const out = join(dir, `run-${count}`);
      mkdirSync(out, { recursive: true });
      const rungs = count > 0 ? markedRungs(ladder, count) : [];
      const forensic = rungs.length ? await forensicArgs({ seed: 'bench', strength: 3, rungs }, out) : undefined;
      const args = runArgs({
        source: { kind: 'live', url: source, loop: true },
        renditions: ladder,
        audioOnly: false,
        segmentSeconds: 2,
        offset: 0,
        dir: out,
        forensic,
      });
      const measured = await measure(args, seconds);
      const label = rungs.length ? rungs.map((r) => r.name).join(' + ') : 'none';
      // CPU seconds per second of video: the cost even when a loaded machine lets the run fall behind real time.
      const perSecond = measured.cores / measured.speed;
      rows.push(`| ${count} (${label}) | ${measured.cores.toFixed(2)} | ${measured.speed.toFixed(2)} | ${perSecond.toFixed(2)} |`);
      console.log(
        `marked rungs ${count} (${label}): ${measured.cores.toFixed(2)} cores, speed ${measured.speed.toFixed(2)}, ${perSecond.toFixed(2)} CPU s per video s, load ${loadavg()[0].toFixed(1)}`,
      );
      rmSync(out, { recursive: true, force: true });
    }
    console.log(['', '| marked rungs | ffmpeg CPU (cores) | speed | CPU s per video s |', '|---|---|---|---|', ...rows].join('\n'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Starts the run, waits out the warm-up (5 s), then samples CPU time and ffmpeg's own speed over `seconds`. */
async function measure(args: string[], seconds: number): Promise<{ cores: number; speed: number }> {
  const child = spawn(ffmpegPath(), ['-hide_banner', '-loglevel', 'error', ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  let outTime = 0;
  child.stdout.on('data', (c: Buffer) => {
    const m = [...c.toString().matchAll(/out_time_us=(\d+)/g)].at(-1);
    if (m) outTime = Number(m[1]) / 1e6;
  });
  const cpu = () => {
    const fields = readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  };
  try {
    await new Promise((r) => setTimeout(r, 5000));
    const [cpu0, out0, t0] = [cpu(), outTime, performance.now()];
    await new Promise((r) => setTimeout(r, seconds * 1000));
    const wall = (performance.now() - t0) / 1000;
    return { cores: (cpu() - cpu0) / wall, speed: (outTime - out0) / wall };
  } finally {
    child.kill('SIGKILL');
  }
}
