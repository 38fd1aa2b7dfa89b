import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { until } from '../test/helpers/until.ts';
import { freePort, json, startBenchServer } from './server.ts';
import { md5File, writeSource } from './upload.ts';

/** A static file server in a process of its own: the origin both clients fetch from, so neither pays for serving. */
const ORIGIN = `
const http = require('node:http'), fs = require('node:fs');
const [file, port] = process.argv.slice(1);
const size = fs.statSync(file).size;
http.createServer((req, res) => {
  const length = req.url.startsWith('/small') ? 1000 : size;
  res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': length });
  fs.createReadStream(file, { highWaterMark: 1 << 20, end: length - 1 }).pipe(res);
}).listen(Number(port), '127.0.0.1');
`;

/**
 * The bound for a Node process on this machine: the simplest download Node has (its HTTP client piped into a file
 * stream with the store's write buffer, nothing else in the process), timed from the request to the file's close.
 */
const NODE_ALONE = `
const http = require('node:http'), fs = require('node:fs'), { pipeline } = require('node:stream/promises');
const [url, out] = process.argv.slice(1);
const t0 = performance.now();
http.get(url, async (res) => {
  await pipeline(res, fs.createWriteStream(out, { highWaterMark: 8 << 20 }));
  process.stdout.write(String((performance.now() - t0) / 1000));
});
`;

/**
 * Imports a file (1 GiB of random bytes by default, BENCH_IMPORT_MIB) from a local HTTP origin through
 * `POST /vod/v1/files/import`, timed from the request until the file is Completed (fetch, store, probe, the database),
 * against `curl -o` fetching the same URL to the same disk in the same run, and against the bound for Node (NODE_ALONE).
 * Three rounds, the three alternating; the best of each is compared (the machine is shared: the best is the least
 * disturbed).
 */
export async function run(): Promise<void> {
  const mib = Number(process.env.BENCH_IMPORT_MIB) || 1024;
  const dir = mkdtempSync(join(tmpdir(), 'mediaplane-bench-import-'));
  const source = join(dir, 'source.mp4');
  const dataDir = join(dir, 'data');
  const children: ReturnType<typeof spawn>[] = [];
  try {
    const sourceMd5 = writeSource(source, mib * 1024 * 1024);
    const size = statSync(source).size;
    execFileSync('cat', [source], { stdio: ['ignore', 'ignore', 'inherit'] }); // into the page cache for every round
    const originPort = await freePort();
    children.push(spawn(process.execPath, ['-e', ORIGIN, source, String(originPort)], { stdio: 'inherit' }));
    const url = `http://127.0.0.1:${originPort}/source.mp4`;
    await until(
      () =>
        fetch(url, { method: 'HEAD' }).then(
          (r) => r.ok,
          () => false,
        ),
      Boolean,
      { timeoutMs: 30_000, everyMs: 100, what: 'the origin to start' },
    );

    const server = await startBenchServer({
      dataDir,
      nodeFlags: process.env.BENCH_CPU_PROF ? ['--cpu-prof', '--cpu-prof-dir=/tmp/hh-prof'] : [],
      env: { LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn', MEDIAPLANE_FETCH_ALLOW_PRIVATE: 'true' },
      timeoutMs: 120_000,
    });
    children.push(server.child);
    const { base, headers } = server;

    // The fixed cost of an import (the job's start, ffprobe, the database), as the time of a 1000-byte one.
    const importOf = async (from: string) => {
      const t0 = performance.now();
      const { fileId, fileKey } = await json('POST', `${base}/vod/v1/files/import`, { url: from }, headers);
      const file = await until(
        () => json('GET', `${base}/vod/v1/files/${fileId}`, undefined, headers),
        (f) => f.status !== 'Uploading',
        { timeoutMs: 600_000, everyMs: 100, what: 'the import to end' },
      );
      if (file.status !== 'Completed') throw new Error(`the import ended in ${file.status}: ${file.errorMessage}`);
      return { seconds: (performance.now() - t0) / 1000, fileId, fileKey };
    };
    const small = [];
    for (let i = 0; i < 3; i++) small.push((await importOf(url.replace('/source.mp4', '/small.mp4'))).seconds);

    const mb = size / 1e6;
    const curlTimes: number[] = [];
    const importTimes: number[] = [];
    const nodeTimes: number[] = [];
    for (let round = 0; round < 3; round++) {
      const out = join(dataDir, 'curl.out');
      const t0 = performance.now();
      execFileSync('curl', ['-sSf', '-o', out, url]);
      curlTimes.push((performance.now() - t0) / 1000);
      rmSync(out);
      nodeTimes.push(Number(execFileSync(process.execPath, ['-e', NODE_ALONE, url, out], { encoding: 'utf8' })));
      rmSync(out);

      const { seconds, fileId, fileKey } = await importOf(url);
      importTimes.push(seconds);
      const stored = join(dataDir, 'objects', fileKey);
      if (statSync(stored).size !== size || md5File(stored) !== sourceMd5) throw new Error('the stored object differs from the source');
      await json('DELETE', `${base}/vod/v1/files/${fileId}`, undefined, headers);
    }
    const rate = (s: number) => (mb / s).toFixed(0).padStart(6);
    const curlBest = Math.min(...curlTimes);
    const importBest = Math.min(...importTimes);
    const nodeBest = Math.min(...nodeTimes);
    const fixed = Math.min(...small);
    console.log(`import ${mib} MiB (random bytes) from a local HTTP origin, embedded store, three rounds alternating`);
    console.log(`  curl -o               ${rate(curlBest)} MB/s  (rounds: ${curlTimes.map((s) => `${(mb / s).toFixed(0)}`).join(', ')} MB/s)`);
    console.log(`  Node alone (the bound)${rate(nodeBest)} MB/s  (rounds: ${nodeTimes.map((s) => `${(mb / s).toFixed(0)}`).join(', ')} MB/s)`);
    console.log(`  import until Completed${rate(importBest)} MB/s  (rounds: ${importTimes.map((s) => `${(mb / s).toFixed(0)}`).join(', ')} MB/s)`);
    console.log(
      `  1000-byte import        ${(fixed * 1000).toFixed(0).padStart(6)} ms    (the fixed cost: rounds ${small.map((x) => (x * 1000).toFixed(0)).join(', ')} ms)`,
    );
    console.log(`  import less that cost ${rate(importBest - fixed)} MB/s  (the bytes alone)`);
    console.log(`  ratio                 ${(curlBest / importBest).toFixed(2)} of curl's throughput (target >= 0.90)`);
    console.log(
      `  bound                 ${(curlBest / nodeBest).toFixed(2)} of curl's throughput for Node alone; the import ${(nodeBest / importBest).toFixed(2)} of it`,
    );
  } finally {
    for (const c of children) c.kill('SIGTERM');
    await Promise.all(children.map((c) => new Promise((r) => (c.exitCode !== null ? r(null) : c.once('exit', r)))));
    rmSync(dir, { recursive: true, force: true });
  }
}
