import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import pg from 'pg';
import { runFfmpeg } from '../src/media/ffmpeg.ts';
import { tenantClient, type TestTenant } from '../test/helpers/client.ts';
import { freePort } from '../test/helpers/process.ts';
import { until } from '../test/helpers/until.ts';
import { uploadFile } from '../test/helpers/upload.ts';

const BIN = new URL('../bin/mediaplane.js', import.meta.url).pathname;

/**
 * The chunked path (issue 24, item 3) against one pass, through the platform as operators run it: an API process and
 * worker processes (`taskset`, one core each) on one PostgreSQL database and one store. In the same run:
 *
 * 1. one pass: one worker pinned to core 0, chunking off (the baseline);
 * 2. chunked, one worker pinned to core 0;
 * 3. chunked, two workers, pinned to cores 0 and 1.
 *
 * Wall time from `POST /vod/v1/assets` to `Available` (the upload is not counted), and the quality of the chunked top
 * rungs against the one-pass top rung (SSIM, ffmpeg's own filter). BENCH_SECONDS (default 600), BENCH_HEIGHT (default
 * 1080), BENCH_CHUNK_SECONDS (default 30, the platform's) and BENCH_PRESET (default hls-h264-ladder) set the source
 * and the split; BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres) names the server a fresh
 * database is made on. The workers' own log lines ('part transcoded', 'stitched') give each part's and the stitch's
 * time: the projection to 20 workers on a 10-minute source is computed from them.
 */
export async function run(_args: string[] = []): Promise<void> {
  const seconds = Number(process.env.BENCH_SECONDS ?? 600);
  const height = Number(process.env.BENCH_HEIGHT ?? 1080);
  const chunkSeconds = Number(process.env.BENCH_CHUNK_SECONDS ?? 30);
  const preset = process.env.BENCH_PRESET ?? 'hls-h264-ladder';
  const width = Math.round((height * 16) / 9 / 2) * 2;
  const dir = mkdtempSync(join(tmpdir(), 'mediaplane-bench-chunked-'));
  const admin = new URL(process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
  const dbName = `mediaplane_bench_${process.pid}`;
  const children = new Set<ChildProcess>();
  const loads: string[] = [];
  const load = () => loadavg()[0].toFixed(1);
  try {
    const source = join(dir, 'source.mp4');
    await runFfmpeg([
      ...['-f', 'lavfi', '-i', `testsrc2=size=${width}x${height}:rate=30:duration=${seconds}`],
      ...['-f', 'lavfi', '-i', `sine=frequency=440:sample_rate=48000:duration=${seconds}`],
      ...['-c:v', 'libx264', '-preset', 'ultrafast', '-crf', '18', '-g', '60', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-b:a', '128k', '-y', source],
    ]);
    console.log(`source: ${seconds} s ${width}x${height}p30 + AAC; preset ${preset}; chunks of ${chunkSeconds} s`);

    const client = new pg.Client({ connectionString: admin.toString() });
    await client.connect();
    await client.query(`create database ${dbName}`);
    await client.end();
    const dbUrl = new URL(admin);
    dbUrl.pathname = `/${dbName}`;
    const port = await freePort();
    mkdirSync(join(dir, 'data'));
    const base = `http://127.0.0.1:${port}`;
    const env = {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      LOG_LEVEL: 'warn',
      HOST: '127.0.0.1',
      DATABASE_URL: dbUrl.toString(),
      MEDIAPLANE_DATA_DIR: join(dir, 'data'),
      MEDIAPLANE_ADMIN_TOKEN: 'bench',
      MEDIAPLANE_PUBLIC_URL: base,
      MEDIAPLANE_URL_SIGNING_SECRET: 'bench-signing',
      MEDIAPLANE_DRM_MASTER_KEY: '22'.repeat(32),
      MEDIAPLANE_CHUNK_SECONDS: String(chunkSeconds),
    };
    const timings: Timing[] = [];
    const start = async (extra: Record<string, string>, core?: number): Promise<ChildProcess> => {
      const command = core === undefined ? [process.execPath, BIN, 'serve'] : ['taskset', '-c', String(core), process.execPath, BIN, 'serve'];
      const child = spawn(command[0], command.slice(1), { env: { ...env, ...extra }, stdio: ['ignore', 'pipe', 'inherit'] });
      children.add(child);
      // The platform logs to its standard output (pino).
      createInterface({ input: child.stdout! }).on('line', (line) => {
        const entry = parseLog(line);
        if (entry?.msg === 'part transcoded') timings.push({ what: entry.kind === 'audio' ? 'audio' : 'chunk', ms: Number(entry.ms) });
        else if (entry?.msg === 'stitched') timings.push({ what: 'stitch', ms: Number(entry.ms) });
        if (!entry || Number(entry.level) >= 40) process.stderr.write(`${line}\n`);
      });
      const health = extra.MEDIAPLANE_HEALTH_PORT ?? String(port);
      await until(
        () =>
          fetch(`http://127.0.0.1:${health}/readyz`).then(
            (r) => r.status,
            () => 0,
          ),
        (s) => s === 200,
        { timeoutMs: 300_000, what: 'a process ready' },
      );
      return child;
    };
    const stop = async (child: ChildProcess) => {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
      children.delete(child);
    };
    const worker = async (core: number, threshold: number) =>
      start(
        {
          MEDIAPLANE_ROLE: 'worker',
          MEDIAPLANE_HEALTH_PORT: String(await freePort()),
          MEDIAPLANE_CHUNK_THRESHOLD_SECONDS: String(threshold),
          LOG_LEVEL: 'info',
        },
        core,
      );

    await start({ MEDIAPLANE_ROLE: 'api', PORT: String(port) });
    const created = (await (
      await fetch(`${base}/admin/v1/tenants`, {
        method: 'POST',
        headers: { authorization: 'Bearer bench', 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'bench-chunked' }),
      })
    ).json()) as { id: string; name: string; apiKey: { key: string } };
    const t = tenantClient(base, created.id, created.name, created.apiKey.key);
    const fileId = await uploadFile(t, source);

    const results: { name: string; ms: number; top: string; bandwidth: number; load: string; timings: Timing[] }[] = [];
    const encode = async (name: string) => {
      const before = load();
      const started = performance.now();
      const from = timings.length;
      const { top, bandwidth } = await available(t, fileId, preset);
      results.push({ name, ms: performance.now() - started, top, bandwidth, load: `${before} → ${load()}`, timings: timings.slice(from) });
      console.log(`${name}: ${((performance.now() - started) / 1000).toFixed(1)} s`);
    };

    const bound = await twoCoreBound(source, Math.min(chunkSeconds, seconds));
    let w = await worker(0, 0);
    await encode('one pass, 1 worker (core 0)');
    await stop(w);
    w = await worker(0, 1);
    await encode('chunked, 1 worker (core 0)');
    const second = await worker(1, 1);
    await encode('chunked, 2 workers (cores 0 and 1)');
    await Promise.all([stop(w), stop(second)]);

    const baseline = results[0];
    console.log(
      `\n| run | wall time (POST → Available) | speed-up against one pass | SSIM of the top rung against one pass | top rung's measured bitrate against one pass | load average (1 min) before → after |`,
    );
    console.log('|---|---|---|---|---|---|');
    for (const r of results) {
      const ssim = r === baseline ? '1 (itself)' : await ssimOf(r.top, baseline.top);
      const rate = `${Math.round(r.bandwidth / 1000)} kb/s (${((r.bandwidth / baseline.bandwidth - 1) * 100).toFixed(1)}%)`;
      console.log(`| ${r.name} | ${(r.ms / 1000).toFixed(1)} s | ${(baseline.ms / r.ms).toFixed(2)}x | ${ssim} | ${rate} | ${r.load} |`);
    }
    console.log(
      `\nthe bound, by hand: one x264 encode of ${Math.min(chunkSeconds, seconds)} s of the source on core 0 alone ${(bound.alone / 1000).toFixed(1)} s; the same on cores 0 and 1 at once ${(bound.both / 1000).toFixed(1)} s: two cores do ${bound.scaling.toFixed(2)}x one core's work (the most two workers can gain here); two workers against one on the chunked path: ${(results[1]!.ms / results[2]!.ms).toFixed(2)}x, ${((results[1]!.ms / results[2]!.ms / bound.scaling) * 100).toFixed(0)}% of the bound`,
    );
    const two = results[2]!;
    const mean = (what: Timing['what']) => {
      const ms = two.timings.filter((x) => x.what === what).map((x) => x.ms);
      return ms.length ? ms.reduce((a, b) => a + b, 0) / ms.length : Number.NaN;
    };
    // HLS outputs have no audio part (the first chunk encodes the whole source's audio beside its video).
    const [chunkMs, audioMs, stitchMs] = [mean('chunk'), mean('audio') || 0, mean('stitch')];
    const chunks = two.timings.filter((x) => x.what === 'chunk').length;
    console.log(
      `\nmeasured in the 2-worker run: ${chunks} video chunks of ${chunkSeconds} s, ${(chunkMs / 1000).toFixed(1)} s each on average; the audio part ${(audioMs / 1000).toFixed(1)} s; the stitch ${(stitchMs / 1000).toFixed(1)} s`,
    );
    // A 10-minute source in chunks of this size over 20 workers: the rounds of chunks (or the audio part, which runs
    // beside them, when longer), then the stitch; the audio and the stitch grow with the source's length.
    const scale = 600 / seconds;
    const rounds = Math.ceil(600 / chunkSeconds / 20);
    const projected = Math.max(rounds * chunkMs, audioMs * scale) + stitchMs * scale;
    const oneWorker = (600 / chunkSeconds) * chunkMs + stitchMs * scale;
    console.log(
      `projection, a 10-minute source of this kind: 1 worker ${(oneWorker / 1000).toFixed(0)} s; 20 workers on 20 machines ${(projected / 1000).toFixed(0)} s (${rounds} round(s) of chunks, the audio part beside them, the stitch after): ${(oneWorker / projected).toFixed(1)}x`,
    );
    loads.push(load());
    console.log(
      `\nmachine: ${cpus().length} cores, load average ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')} (1/5/15 min) at the end`,
    );
  } finally {
    for (const c of children) c.kill('SIGKILL');
    const c = new pg.Client({ connectionString: admin.toString() });
    await c.connect().then(
      () => c.query(`drop database if exists ${dbName} with (force)`).finally(() => c.end()),
      () => {},
    );
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * What two cores of this machine give over one, with no platform at all: the same x264 encode (the ladder's top rung
 * codec and preset) of the source's first `seconds`, pinned to core 0 alone, then on cores 0 and 1 at once.
 */
async function twoCoreBound(source: string, seconds: number): Promise<{ alone: number; both: number; scaling: number }> {
  const encode = (core: number) =>
    new Promise<void>((resolve, reject) => {
      const args = ['-c', String(core), 'ffmpeg', '-hide_banner', '-nostdin', '-loglevel', 'error', '-t', String(seconds), '-i', source];
      const child = spawn('taskset', [...args, '-an', '-c:v', 'libx264', '-preset', 'veryfast', '-f', 'null', '-'], { stdio: 'inherit' });
      child.on('error', reject);
      child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`ffmpeg exited with ${code}`))));
    });
  let started = performance.now();
  await encode(0);
  const alone = performance.now() - started;
  started = performance.now();
  await Promise.all([encode(0), encode(1)]);
  const both = performance.now() - started;
  return { alone, both, scaling: (2 * alone) / both };
}

interface Timing {
  what: 'chunk' | 'audio' | 'stitch';
  ms: number;
}

/** A pino line of a worker's, or undefined for anything else it printed. */
function parseLog(line: string): Record<string, unknown> | undefined {
  try {
    const entry: unknown = JSON.parse(line);
    return typeof entry === 'object' && entry !== null ? (entry as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Creates an asset of the uploaded file, waits for `Available`, and answers its top rung's media playlist URL and
 * measured average bandwidth (the master's `AVERAGE-BANDWIDTH`, from the segments' sizes).
 */
async function available(t: TestTenant, fileId: string, preset: string): Promise<{ top: string; bandwidth: number }> {
  const { body } = await t.json('POST', '/vod/v1/assets', {
    transcodedSources: [{ fileId, transcodingTracks: [{ trackSelector: { trackId: '1' }, type: 'Audio' }] }],
    preset,
  });
  const asset = (
    await until(
      () => t.json('GET', `/vod/v1/assets/${body.id}`),
      (r) => ['Available', 'Error'].includes(r.body?.status),
      { timeoutMs: 6 * 3600_000, everyMs: 500 },
    )
  ).body;
  if (asset.status !== 'Available') throw new Error(`asset failed: ${asset.errorMessage}`);
  const hls = asset.endpoints.find((e: { format: string }) => e.format === 'HLS');
  const lines = (await (await fetch(hls.url)).text()).split('\n');
  const at = lines.findIndex((l: string) => l && !l.startsWith('#'));
  const bandwidth = Number(/AVERAGE-BANDWIDTH=(\d+)/.exec(lines[at - 1] ?? '')?.[1] ?? Number.NaN);
  return { top: new URL(lines[at], hls.url).toString(), bandwidth };
}

/** ffmpeg's SSIM (`All`) of one HLS rendition against another, frame by frame. */
async function ssimOf(a: string, b: string): Promise<string> {
  let out = '';
  await new Promise<void>((resolve, reject) => {
    const child = spawn('ffmpeg', ['-hide_banner', '-nostdin', '-i', a, '-i', b, '-lavfi', '[0:v][1:v]ssim', '-f', 'null', '-'], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    child.stderr.on('data', (c) => (out += c));
    child.on('error', reject);
    child.on('close', () => resolve());
  });
  return /SSIM .*All:([\d.]+)/.exec(out)?.[1] ?? `unread (${out.slice(-200)})`;
}
