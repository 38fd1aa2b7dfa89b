import { execFileSync, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Uploads a file (1 GiB by default) through the embedded store the way a client does: start, PUT every part of the
 * size the server chose with 4 in flight, complete, then fsync the stored object. Baseline: `dd` writing the same
 * bytes to the same disk, also made durable (conv=fdatasync), in the same run. Server memory is the RSS of the server
 * process, sampled every 20 ms; growth is the peak during the upload minus the RSS just before it.
 */
export async function run(): Promise<void> {
  const mib = Number(process.env.BENCH_UPLOAD_MIB) || 1024;
  const inFlight = Number(process.env.BENCH_UPLOAD_IN_FLIGHT) || 4;
  const size = mib * 1024 * 1024;
  const dir = mkdtempSync(join(tmpdir(), 'mediaplane-bench-upload-'));
  const source = join(dir, 'source.bin');
  const dataDir = join(dir, 'data');
  let server: ReturnType<typeof spawn> | undefined;
  try {
    const sourceMd5 = writeSource(source, size);
    execFileSync('cat', [source], { stdio: ['ignore', 'ignore', 'inherit'] }); // into the page cache for both runs

    const ddTarget = join(dir, 'dd.out');
    const ddStart = performance.now();
    execFileSync('dd', [`if=${source}`, `of=${ddTarget}`, 'bs=16M', 'conv=fdatasync'], { stdio: 'ignore' });
    const ddSeconds = (performance.now() - ddStart) / 1000;
    rmSync(ddTarget);

    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    server = spawn(process.execPath, [...(process.env.BENCH_CPU_PROF ? ['--cpu-prof', '--cpu-prof-dir=/tmp/prof'] : []), '--import', 'tsx', 'src/cli.ts', 'serve'], {
      cwd: new URL('..', import.meta.url).pathname,
      env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', MEDIAPLANE_DATA_DIR: dataDir, MEDIAPLANE_ADMIN_TOKEN: 'bench', LOG_LEVEL: 'warn', DATABASE_URL: '', MEDIAPLANE_STORAGE_URL: '', MEDIAPLANE_PUBLIC_URL: base },
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    await waitUp(base);
    const tenant = await json('POST', `${base}/admin/v1/tenants`, { name: 'bench' }, { authorization: 'Bearer bench' });
    const headers = { 'x-api-key': tenant.apiKey.key, 'x-tenant-id': tenant.id };
    // Warm the route once so that the baseline memory includes what any request costs.
    await json('GET', `${base}/vod/v1/files`, undefined, headers);

    const rss = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${server!.pid}/status`, 'utf8'))![1]) * 1024;
    // utime + stime of the server, in seconds: its CPU cost whatever else the machine is doing.
    const cpu = () => readFileSync(`/proc/${server!.pid}/stat`, 'utf8').split(') ')[1].split(' ').slice(11, 13).reduce((a, b) => a + Number(b), 0) / 100;
    const cpuBefore = cpu();
    const threadsBefore = threadCpu(server!.pid!);
    const rssBefore = rss();
    let rssPeak = rssBefore;
    const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, rss())), 20);

    const t0 = performance.now();
    const start = await json('POST', `${base}/vod/v1/files/start`, { name: 'bench.mp4', friendlyName: 'bench', fileSize: size }, headers);
    const eTags: string[] = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: inFlight }, async () => {
        while (next < start.partsCount) {
          const i = next++;
          const from = i * start.partSize;
          const length = i === start.partsCount - 1 ? start.lastPartSize : start.partSize;
          eTags[i] = await putPart(start.multipartUrls[i], source, from, length);
        }
      }),
    );
    const partsSeconds = (performance.now() - t0) / 1000;
    await json('POST', `${base}/vod/v1/files/complete`, { fileId: start.fileId, parts: eTags.map((eTag, i) => ({ partNumber: i + 1, eTag })) }, headers);
    const stored = join(dataDir, 'objects', start.fileKey);
    execFileSync('sync', [stored]);
    const uploadSeconds = (performance.now() - t0) / 1000;
    clearInterval(sampler);
    const cpuSeconds = cpu() - cpuBefore;
    if (process.env.BENCH_THREADS) {
      const after = threadCpu(server!.pid!);
      for (const [name, seconds] of after) console.log(`    thread ${name}: ${(seconds - (threadsBefore.get(name) ?? 0)).toFixed(2)} s`);
    }
    rssPeak = Math.max(rssPeak, rss());

    if (statSync(stored).size !== size || md5File(stored) !== sourceMd5) throw new Error('the stored object differs from the source');
    const mb = size / 1e6;
    const ddRate = mb / ddSeconds;
    const upRate = mb / uploadSeconds;
    console.log(`upload ${mib} MiB, ${start.partsCount} parts of ${start.partSize / 1024 / 1024} MiB, ${inFlight} in flight, embedded store`);
    console.log(`  dd (conv=fdatasync)   ${ddRate.toFixed(0).padStart(6)} MB/s  (${ddSeconds.toFixed(2)} s)`);
    console.log(`  upload + complete     ${upRate.toFixed(0).padStart(6)} MB/s  (${uploadSeconds.toFixed(2)} s)  = ${((100 * upRate) / ddRate).toFixed(0)}% of dd`);
    console.log(`    of which parts       ${(mb / partsSeconds).toFixed(0).padStart(6)} MB/s  (${partsSeconds.toFixed(2)} s), complete + fsync ${(uploadSeconds - partsSeconds).toFixed(2)} s`);
    console.log(`  server CPU            ${cpuSeconds.toFixed(2)} s (${(mb / cpuSeconds).toFixed(0)} MB per CPU second); load average ${readFileSync('/proc/loadavg', 'utf8').split(' ')[0]}`);
    console.log(`  server RSS            ${(rssBefore / 1e6).toFixed(0)} MB before, ${(rssPeak / 1e6).toFixed(0)} MB peak: +${((rssPeak - rssBefore) / 1e6).toFixed(1)} MB`);
    console.log(`  stored bytes identical to the source (md5 ${sourceMd5})`);
  } finally {
    if (server && server.exitCode === null) {
      server.kill('SIGTERM');
      await new Promise((r) => server!.once('exit', r));
    }
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Random bytes, 16 MiB of them repeated with a counter so that no two MiB are alike; returns the MD5. */
function writeSource(path: string, size: number): string {
  const block = randomBytes(16 * 1024 * 1024);
  const hash = createHash('md5');
  writeFileSync(path, '');
  for (let offset = 0, n = 0; offset < size; offset += block.length, n++) {
    for (let i = 0; i < block.length; i += 1024 * 1024) block.writeUInt32LE(n, i);
    const chunk = block.subarray(0, Math.min(block.length, size - offset));
    hash.update(chunk);
    writeFileSync(path, chunk, { flag: 'a' });
  }
  return hash.digest('hex');
}

/** CPU seconds of each thread of a process, by thread id and name. */
function threadCpu(pid: number): Map<string, number> {
  const out = new Map<string, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    out.set(`${tid} ${stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'))}`, (Number(f[11]) + Number(f[12])) / 100);
  }
  return out;
}

function md5File(path: string): string {
  return execFileSync('md5sum', [path], { encoding: 'utf8' }).split(' ')[0];
}

function putPart(url: string, file: string, start: number, length: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'PUT', headers: { 'content-length': length } }, (res) => {
      res.resume();
      res.on('end', () => (res.statusCode === 200 ? resolve(String(res.headers.etag)) : reject(new Error(`part PUT answered ${res.statusCode}`))));
    });
    req.on('error', reject);
    createReadStream(file, { start, end: start + length - 1, highWaterMark: 1024 * 1024 }).pipe(req);
  });
}

async function json(method: string, url: string, body?: unknown, headers: Record<string, string> = {}): Promise<any> {
  const res = await fetch(url, { method, headers: { ...headers, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${text}`);
  return JSON.parse(text);
}

async function waitUp(base: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (await fetch(`${base}/healthz`).then((r) => r.ok, () => false)) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error('the server did not start');
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}
