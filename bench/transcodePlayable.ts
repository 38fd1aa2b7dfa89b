import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { runFfmpeg } from '../src/media/ffmpeg.ts';
import { fastStartByHand, makeSource } from './transcode.ts';
import { throughApi } from './transcode-api.ts';

/**
 * Time to first playable through the API (issue 24: the master, a media playlist and its first segment fetchable, from
 * `POST /vod/v1/assets`; for DASH the MPD, an init and a first segment) for a 1-minute and a long 1080p source, HLS
 * and DASH (`BENCH_LONG_MINUTES`, 20 by default: above the
 * chunked path's threshold, so its chunks publish it), against the fast start's own two ffmpeg commands run by hand on
 * the 1-minute source in the same run (the bound: ffmpeg's time to its first segment). The long source is the short one
 * repeated (stream copy). The API rows are each the fresh platform's first asset, and again after one 2 s asset
 * (`warmUp`: a platform that has served before). `BENCH_PAIRS` (2) runs of each, in ABBA order.
 */
export async function run(): Promise<void> {
  const minutes = Number(process.env.BENCH_LONG_MINUTES ?? 20);
  const pairs = Number(process.env.BENCH_PAIRS ?? 2);
  const dir = mkdtempSync(join(tmpdir(), 'mediaplane-bench-playable-'));
  try {
    const made = performance.now();
    const short = await makeSource(dir, 60, 1080);
    const list = join(dir, 'list.txt');
    writeFileSync(list, `file '${short}'\n`.repeat(minutes));
    const long = join(dir, 'long.mp4');
    await runFfmpeg(['-f', 'concat', '-safe', '0', '-i', list, '-c', 'copy', '-y', long]);
    const mb = (f: string) => `${Math.round(statSync(f).size / 1e6)} MB`;
    console.log(
      `sources: 60 s and ${minutes} min of 1920x1080p30 + AAC (${mb(short)}, ${mb(long)}), made in ${((performance.now() - made) / 1000).toFixed(1)} s\n`,
    );

    const tiny = await makeSource(dir, 2, 144, 'tiny.mp4');
    const hand: number[] = [];
    const oneMinute: number[] = [];
    const longApi: number[] = [];
    const oneMinuteDash: number[] = [];
    const longDash: number[] = [];
    const oneMinuteWarm: number[] = [];
    const longWarm: number[] = [];
    const hls = { untilPlayable: true } as const;
    const dash = { untilPlayable: true, preset: 'dash-h264-ladder', format: 'DASH' } as const;
    const steps = [
      async () => hand.push((await fastStartByHand(short, join(dir, 'hand'))).firstPlayableMs),
      async () => oneMinute.push((await throughApi(short, hls)).firstPlayableMs),
      async () => longApi.push((await throughApi(long, hls)).firstPlayableMs),
      async () => oneMinuteWarm.push((await throughApi(short, { ...hls, warmUp: tiny })).firstPlayableMs),
      async () => longWarm.push((await throughApi(long, { ...hls, warmUp: tiny })).firstPlayableMs),
      async () => oneMinuteDash.push((await throughApi(short, dash)).firstPlayableMs),
      async () => longDash.push((await throughApi(long, dash)).firstPlayableMs),
    ];
    for (let i = 0; i < pairs; i++) for (const step of i % 2 === 0 ? steps : [...steps].reverse()) await step();

    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
    const row = (name: string, xs: number[]) => `| ${name} | ${xs.map(s).join(', ')} | ${s(mean(xs))} | ${(mean(xs) / mean(hand)).toFixed(2)} |`;
    console.log('| time to first playable | runs | mean | ratio to the bound |');
    console.log('|---|---|---|---|');
    console.log(row('fast start by hand, 1 min (the bound: ffmpeg to its first segments)', hand));
    console.log(row('API, 1 min source (one pass, fast start)', oneMinute));
    console.log(row(`API, ${minutes} min source (chunked: the first chunk publishes)`, longApi));
    console.log(row('API, 1 min source, after one asset (one pass, fast start)', oneMinuteWarm));
    console.log(row(`API, ${minutes} min source, after one asset (chunked)`, longWarm));
    console.log(row('API, 1 min source, DASH (one pass, fast start)', oneMinuteDash));
    console.log(row(`API, ${minutes} min source, DASH (chunked: the first chunk publishes)`, longDash));
    console.log(
      `\nmachine: ${cpus().length} cores, load average ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')} (1/5/15 min) at the end`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
