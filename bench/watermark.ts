import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { runFfmpeg } from '../src/media/ffmpeg.ts';
import { transcode } from '../src/media/transcode.ts';
import { codeWord, decodeVotes } from '../src/media/watermark/code.ts';
import { align, placePictures, segmentVotes, type MarkReference } from '../src/media/watermark/detect.ts';
import { locate, placedVotes } from '../src/media/watermark/locate.ts';
import { readSuspect } from '../src/media/watermark/suspect.ts';
import { ATTACKS, type Attack } from '../test/helpers/watermarkAttacks.ts';
import { prepareVariants, segmentName, type PreparedVariants } from '../src/media/watermark/prepare.ts';
import { readGrid } from '../src/media/watermark/signature.ts';
import { presetById } from '../src/modules/transcoder/presets.ts';
import { preparedPrefix } from '../src/modules/watermarking/storageKeys.ts';
import pg from 'pg';
import { loadConfig } from '../src/config.ts';
import { createTenant } from '../src/modules/admin/service.ts';
import { openPlatform } from '../src/server.ts';
import { tenantClient } from '../test/helpers/client.ts';
import { uploadFile } from '../test/helpers/upload.ts';
import { prepare } from '../test/helpers/watermarking.ts';

/**
 * bench/watermark: what A/B watermarking costs and what the mark survives.
 *
 * 1. Preparation against the plain transcode of the same source, same rendition (480p, 1200 kb/s, veryfast, 2 s
 *    segments), in ABBA order: `prepareVariants` (two variants + the reference) vs `transcode` with a one-rung HLS preset.
 * 2. Detection of a 60 s capture (a viewer's A/B sequence re-encoded to 360p at 300 kb/s): reading, placing, decoding.
 * 3. Survival: variants A and B re-encoded at several sizes, bitrates and edits; the mean vote (+1 = A, -1 = B) and the
 *    share of 2 s segments read on the right side.
 * 4. Redirector requests/s (media playlist, segment redirect) against the same playlist served as a static object by
 *    the platform's store route, on each database of the run (PGlite; PostgreSQL when TEST_DATABASE_URL is set).
 *
 * 5. Robustness of detection as the platform runs it (readSuspect, locate, placedVotes, decodeVotes): a viewer's
 *    capture under each attack of test/helpers/watermarkAttacks.ts (attack -> user read, confidence, seconds of
 *    detection per minute of capture), then the false-positive rate over BENCH_FP (default 50) unmarked captures (the
 *    unmarked source under the same attacks at varied starts, and random content).
 *
 * BENCH_SECONDS (default 60) sets the clip length; BENCH_PAIRS (default 2) the ABBA pairs; BENCH_PARTS (default
 * `1,2,3,4,5`) which parts run (2, 3 and 5 need the variants of 1: with 1 left out, they are prepared once, untimed).
 */
export async function run(args: string[] = []): Promise<void> {
  // `watermark live`: the cost of marking a live channel's rungs (bench/watermarkLive.ts).
  if (args.includes('live')) return (await import('./watermarkLive.ts')).run();
  const seconds = Number(process.env.BENCH_SECONDS ?? 60);
  const pairs = Number(process.env.BENCH_PAIRS ?? 2);
  const dir = mkdtempSync(join(tmpdir(), 'mediaplane-bench-wm-'));
  console.log(`machine: ${cpus().length} cores, load ${loadavg()[0].toFixed(1)}`);
  try {
    const source = join(dir, 'source.mp4');
    await runFfmpeg([
      ...[
        '-f',
        'lavfi',
        '-i',
        `testsrc2=size=854x480:rate=30:duration=${seconds}`,
        '-f',
        'lavfi',
        '-i',
        `sine=frequency=440:sample_rate=48000:duration=${seconds}`,
      ],
      ...['-c:v', 'libx264', '-preset', 'ultrafast', '-crf', '18', '-g', '60', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-b:a', '128k', '-y', source],
    ]);
    const rung = { name: '480p', width: 854, height: 480, videoBitrateKbps: 1200, maxrateKbps: 1800, profile: 'main' as const };
    const plainPreset = { ...presetById('hls-h264-ladder')!, id: 'bench-one-rung', ladder: [rung], segmentSeconds: 2 };
    const durationMs = seconds * 1000;
    const plain: number[] = [];
    const marked: number[] = [];
    let variants: PreparedVariants | undefined;
    const runPlain = async () => {
      const outDir = join(dir, `plain-${plain.length}`);
      const t0 = performance.now();
      await transcode({ input: source, durationMs, tracks: [{ type: 'Audio', index: 1 }], preset: plainPreset, outDir });
      plain.push(performance.now() - t0);
    };
    const runMarked = async () => {
      const outDir = join(dir, `marked-${marked.length}`);
      const t0 = performance.now();
      variants = await prepareVariants({
        input: source,
        durationMs,
        width: 854,
        height: 480,
        videoBitrateKbps: 1200,
        x264Preset: 'veryfast',
        segmentSeconds: 2,
        strength: 3,
        seed: 'bench',
        audio: true,
        outDir,
      });
      marked.push(performance.now() - t0);
    };
    const parts = (process.env.BENCH_PARTS ?? '1,2,3,4,5').split(',');
    if (parts.includes('1')) {
      for (let i = 0; i < pairs; i++) for (const step of i % 2 ? [runMarked, runPlain] : [runPlain, runMarked]) await step();
      const ratio = median(marked) / median(plain);
      console.log(`\n1. preparation, ${seconds} s 854x480p30 source, one 480p rung at 1200 kb/s (veryfast), ${pairs} ABBA pairs`);
      console.log(`   plain transcode: ${fmt(plain)}    A/B preparation: ${fmt(marked)}    ratio ${ratio.toFixed(2)} (target <= 2.10)`);
    } else if (parts.includes('2') || parts.includes('3') || parts.includes('5')) await runMarked();

    if (variants) {
      const outDir = join(dir, 'marked-0');
      const reference: MarkReference = {
        id: 'bench',
        reference: await readFile(join(outDir, 'reference.gray')),
        signature: variants.signature,
        segmentDurations: variants.segmentDurations,
      };
      if (parts.includes('2')) await detection(dir, outDir, reference, variants, durationMs, seconds);
      if (parts.includes('3')) await survival(dir, outDir, reference, variants);
      if (parts.includes('5')) await robustness(dir, outDir, reference, variants, source, seconds);
    }
    if (parts.includes('4')) await redirector(dir, source);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function detection(dir: string, outDir: string, reference: MarkReference, variants: PreparedVariants, durationMs: number, seconds: number) {
  {
    // 2. A viewer's capture: user 43210 of 16-bit numbers (a 24-bit word, repeated), re-encoded to 360p at 300 kb/s.
    const word = codeWord(43210, 16);
    const list = variants.segmentDurations.map((_, k) => join(outDir, word[k % word.length] ? 'B' : 'A', segmentName(k)));
    const captured = join(dir, 'capture.mp4');
    await runFfmpeg([
      '-y',
      '-i',
      `concat:${list.join('|')}`,
      '-vf',
      'scale=640:360',
      '-c:v',
      'libx264',
      '-preset',
      'veryfast',
      '-b:v',
      '300k',
      '-an',
      captured,
    ]);
    const t0 = performance.now();
    // As the detection job reads it (src/media/watermark/locate.ts).
    const grid = await readSuspect(captured);
    const at = locate(grid, reference.reference);
    const decoded = decodeVotes(placedVotes(at, reference), 16, 0.4);
    const detectMs = performance.now() - t0;
    console.log(
      `\n2. detection of a ${seconds} s capture (640x360, 300 kb/s): ${(detectMs / 1000).toFixed(2)} s = ${(detectMs / durationMs).toFixed(3)} of its duration (target <= 1)`,
    );
    console.log(
      `   read user ${decoded.userNumber ?? 'none'} (sent 43210), content match ${at.match.toFixed(3)}, weakest bit ${decoded.confidence.toFixed(2)}`,
    );
  }
}

async function survival(dir: string, outDir: string, reference: MarkReference, variants: PreparedVariants) {
  {
    // 3. What the mark survives.
    console.log('\n3. survival: variant A and B re-encoded; mean vote (A should be +1, B -1) and segments read right');
    const edits: [string, string, string][] = [
      ['480p, 800 kb/s', 'scale=854:480', '800k'],
      ['360p, 300 kb/s', 'scale=640:360', '300k'],
      ['360p, 150 kb/s', 'scale=640:360', '150k'],
      ['240p, 100 kb/s', 'scale=426:240', '100k'],
      ['180p, 80 kb/s', 'scale=320:180', '80k'],
      ['144p, 50 kb/s', 'scale=256:144', '50k'],
      ['360p, 60 kb/s', 'scale=640:360', '60k'],
      ['360p, 300 kb/s, 10 fps', 'scale=640:360,fps=10', '300k'],
      ['360p, 300 kb/s, grain (noise 12)', 'scale=640:360,noise=alls=12:allf=t', '300k'],
      ['360p, 300 kb/s, blur (sigma 3)', 'scale=640:360,gblur=sigma=3', '300k'],
      ['360p, 300 kb/s, gamma 1.3', 'scale=640:360,eq=gamma=1.3', '300k'],
      ['360p, 300 kb/s, contrast +20%', 'scale=640:360,eq=contrast=1.2', '300k'],
      ['360p, 300 kb/s, brightness +0.05', 'scale=640:360,eq=brightness=0.05', '300k'],
      ['360p, 300 kb/s, 5% cropped each side', 'crop=iw*0.9:ih*0.9,scale=640:360', '300k'],
      ['360p, 300 kb/s, mirrored', 'hflip,scale=640:360', '300k'],
    ];
    for (const [label, filter, kbps] of edits) {
      const cells: string[] = [];
      for (const v of ['A', 'B'] as const) {
        const out = join(dir, `edit-${v}.mp4`);
        const segs = variants.segmentDurations.map((_, k) => join(outDir, v, segmentName(k)));
        await runFfmpeg(['-y', '-i', `concat:${segs.join('|')}`, '-vf', filter, '-c:v', 'libx264', '-preset', 'veryfast', '-b:v', kbps, '-an', out]);
        const g = await readGrid(out);
        const a = align(g, reference.reference)!;
        const votes = segmentVotes(g, reference, placePictures(g, reference.reference, a)).filter((x): x is number => x !== undefined);
        const right = votes.filter((x) => (v === 'A' ? x >= 0.4 : x <= -0.4)).length;
        cells.push(`${v} ${mean(votes).toFixed(2)} (${right}/${votes.length}, match ${a.match.toFixed(2)})`);
      }
      console.log(`   ${label.padEnd(40)} ${cells.join('   ')}`);
    }
  }
}

/** 5. Attacks on a viewer's capture, read as the detection job reads them; then false positives on unmarked captures. */
async function robustness(dir: string, outDir: string, reference: MarkReference, variants: PreparedVariants, source: string, seconds: number) {
  const bits = 16;
  const read = async (file: string) => {
    const t0 = performance.now();
    const suspect = await readSuspect(file);
    const placed = locate(suspect, reference.reference);
    const decoded = decodeVotes(placedVotes(placed, reference), bits, 0.4);
    const captureSeconds = suspect.length / (64 * 36) / 10;
    return { decoded, placed, perMinute: ((performance.now() - t0) / 1000) * (60 / captureSeconds) };
  };
  const word = codeWord(43210, bits);
  const segs = variants.segmentDurations.map((_, k) => join(outDir, word[k % word.length] ? 'B' : 'A', segmentName(k)));
  console.log(`\n5. robustness: user 43210 (16-bit numbers, 2 s segments), ${seconds} s capture under each attack (one ffmpeg each)`);
  console.log(`   ${'attack'.padEnd(52)} ${'read'.padEnd(8)} confidence  lined up   detection s per min of capture`);
  const attacks: [string, Attack['make']][] = Object.values(ATTACKS).map((a) => [a.name, a.make]);
  attacks.push([
    'cropped 5% on each side, scaled back',
    (s, o) =>
      runFfmpeg([
        '-y',
        '-i',
        `concat:${s.join('|')}`,
        '-vf',
        'crop=iw*0.9:ih*0.9,scale=640:360',
        '-c:v',
        'libx264',
        '-preset',
        'veryfast',
        '-b:v',
        '300k',
        '-an',
        o,
      ]),
  ]);
  attacks.push([
    '2% slow, 25 fps, 360p 300 kb/s',
    (s, o) =>
      runFfmpeg([
        '-y',
        '-i',
        `concat:${s.join('|')}`,
        '-vf',
        'setpts=PTS*1.02,fps=25,scale=640:360',
        '-c:v',
        'libx264',
        '-preset',
        'veryfast',
        '-b:v',
        '300k',
        '-an',
        o,
      ]),
  ]);
  for (const [name, make] of attacks) {
    const out = join(dir, 'attack.mp4');
    await make(segs, out, dir);
    const { decoded, placed, perMinute } = await read(out);
    const who = decoded.userNumber === undefined ? 'none' : decoded.userNumber === 43210 ? '43210 ok' : `${decoded.userNumber} WRONG`;
    console.log(
      `   ${name.padEnd(52)} ${who.padEnd(8)} ${decoded.confidence.toFixed(2).padStart(10)}  ${`${placed.pairs.length}/${placed.coverable}`.padStart(8)}   ${perMinute.toFixed(1)}${decoded.reason ? `  (${decoded.reason})` : ''}`,
    );
  }
  const count = Number(process.env.BENCH_FP ?? 50);
  const keys = Object.values(ATTACKS);
  let named = 0;
  let recognisedAsset = 0;
  let worst = 0;
  const t0 = performance.now();
  for (let k = 0; k < count; k++) {
    const out = join(dir, 'unmarked.mp4');
    if (k % 5 === 4) {
      // Random content: noise of another seed every time.
      await runFfmpeg([
        '-y',
        '-f',
        'lavfi',
        '-i',
        `nullsrc=size=320x180:rate=15:duration=${Math.min(seconds, 60)},geq=lum=random(${k})*255:cb=128:cr=128`,
        '-c:v',
        'libx264',
        '-preset',
        'ultrafast',
        '-b:v',
        '400k',
        out,
      ]);
    } else {
      // The unmarked source from a varied start, under one of the attacks.
      const cut = join(dir, 'unmarked-cut.ts');
      await runFfmpeg(['-y', '-ss', String((k * 0.37) % 5), '-i', source, '-an', '-c:v', 'libx264', '-preset', 'ultrafast', '-crf', '20', cut]);
      await keys[k % keys.length].make([cut], out, dir);
    }
    const { decoded, placed } = await read(out);
    if (decoded.userNumber !== undefined) named++;
    if (placed.pairs.length) recognisedAsset++;
    worst = Math.max(worst, decoded.confidence);
  }
  console.log(
    `   false positives: ${named} of ${count} unmarked captures named a viewer (rate ${(named / count).toFixed(3)}); ${recognisedAsset} lined up with the asset; strongest weakest-bit ${worst.toFixed(2)} (0.40 needed); ${((performance.now() - t0) / 1000 / count).toFixed(1)} s each`,
  );
}

/** Requests per second of the redirector against the same playlist as a static object, per database. */
async function redirector(dir: string, source: string): Promise<void> {
  const clip = join(dir, 'short.mp4');
  await runFfmpeg(['-y', '-i', source, '-t', '20', '-c', 'copy', clip]);
  const kinds = process.env.TEST_DATABASE_URL ? ['pglite', 'postgres'] : ['pglite'];
  for (const kind of kinds) {
    const dataDir = join(dir, `platform-${kind}`);
    const admin = process.env.TEST_DATABASE_URL ?? '';
    const dbName = `mediaplane_bench_wm_${process.pid}`;
    const sql = async (q: string) => {
      const c = new pg.Client({ connectionString: admin });
      await c.connect();
      await c.query(q);
      await c.end();
    };
    let databaseUrl = '';
    if (kind === 'postgres') {
      await sql(`create database ${dbName}`);
      const u = new URL(admin);
      u.pathname = `/${dbName}`;
      databaseUrl = u.toString();
    }
    const config = loadConfig({
      ...process.env,
      DATABASE_URL: databaseUrl,
      MEDIAPLANE_DATA_DIR: dataDir,
      MEDIAPLANE_ADMIN_TOKEN: 'bench',
      LOG_LEVEL: 'error',
      MEDIAPLANE_RATE_LIMIT_PER_MINUTE: '100000000',
    });
    const p = await openPlatform(config);
    try {
      const address = await p.app.listen({ port: 0, host: '127.0.0.1' });
      config.publicUrl = new URL(address);
      const tenant = await createTenant(p.database.db, `bench-${Date.now()}`);
      const t = tenantClient(address, tenant.id, tenant.name, tenant.apiKey.key);
      const vod = await t.json('POST', '/vod/v1/assets', { transcodedSources: [{ fileId: await uploadFile(t, clip) }], preset: 'remux-hls-mp4' });
      const asset = await prepare(t, vod.body.id, 300_000);
      const { playbackUrl } = (await t.json('POST', '/watermarking/v1/redirector/token', { assetId: asset.id, userNumber: 1234, userName: 'bench' })).body;
      const media = new URL('media.m3u8', playbackUrl).toString();
      const playlist = await (await fetch(media)).text();
      const key = `${preparedPrefix(t.id, asset.id)}static.m3u8`;
      await p.ctx.store.putObject(key, playlist, 'application/vnd.apple.mpegurl');
      const staticUrl = await p.ctx.store.presignGet(key, 3600);
      const segment = new URL('segments/3.ts', media).toString();
      const results: Record<string, number[]> = { static: [], playlist: [], segment: [] };
      for (let round = 0; round < 2; round++) {
        for (const [name, url] of [
          ['static', staticUrl],
          ['playlist', media],
          ['segment', segment],
        ] as const) {
          results[name].push(await cannon(url));
        }
      }
      const s = median(results.static);
      console.log(`\n4. redirector on ${kind} (autocannon -c 20, 5 s, two rounds; medians)`);
      console.log(`   static playlist (store route): ${s.toFixed(0)} req/s`);
      console.log(
        `   redirector media playlist:     ${median(results.playlist).toFixed(0)} req/s = ${(median(results.playlist) / s).toFixed(2)} of static (target >= 0.50)`,
      );
      console.log(`   redirector segment (302):      ${median(results.segment).toFixed(0)} req/s = ${(median(results.segment) / s).toFixed(2)} of static`);
    } finally {
      await p.close();
      if (kind === 'postgres') await sql(`drop database if exists ${dbName} with (force)`);
    }
  }
}

/** autocannon in its own process, so that the load generator does not share the platform's event loop. */
function cannon(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn('node_modules/.bin/autocannon', ['-c', '20', '-d', '5', '--json', url], { stdio: ['ignore', 'pipe', 'ignore'] });
    let out = '';
    child.stdout.on('data', (c) => (out += c));
    child.on('error', reject);
    child.on('close', () => {
      try {
        const r = JSON.parse(out);
        if (r.non2xx && r.non2xx > r.requests.total / 100 && !url.includes('/segments/')) throw new Error(`${r.non2xx} non-2xx answers from ${url}`);
        resolve(r.requests.average);
      } catch (e) {
        reject(e);
      }
    });
  });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / (xs.length || 1);
const fmt = (ms: number[]) => ms.map((m) => `${(m / 1000).toFixed(1)} s`).join(', ');
