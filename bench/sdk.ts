import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from '@mediaplane/sdk';
import { nodeFetch } from '@mediaplane/sdk/node';
import { json, startBenchServer, type BenchServer } from './server.ts';
import { curlParts, md5File, writeSource } from './upload.ts';

const ROOT = new URL('..', import.meta.url).pathname;

/**
 * The SDK and the tenant CLI against a platform of their own (embedded database and store):
 * - `uploadFile` (Node, `concurrency` 4; with Node's fetch, and with `nodeFetch`) against curl sending the same parts,
 *   4 in parallel (`curl --parallel`), each timed from `files/start` to `files/complete` answered, in turns, best of
 *   `BENCH_SDK_RUNS` (3); the stored bytes checked each time. curl sends the parts cut beforehand (not timed) into
 *   files in the page cache; the SDK reads the source itself. Target: the SDK at 90% of curl's throughput or more.
 * - a CLI command (`assets list --json`, the compiled CLI, an API call) against `node -e 0`, in turns, ten runs each.
 *   Target: under 150 ms over Node.
 */
export async function run(): Promise<void> {
  const mib = Number(process.env.BENCH_SDK_MIB) || 512;
  const runs = Number(process.env.BENCH_SDK_RUNS) || 3;
  const dir = mkdtempSync(join(tmpdir(), 'mediaplane-bench-sdk-'));
  const source = join(dir, 'source.bin');
  const partsDir = join(dir, 'parts');
  let server: BenchServer | undefined;
  try {
    // The CLI is timed as users run it: compiled (dist/), built now if the sources changed since.
    execFileSync(process.execPath, ['scripts/build.mjs', '--if-stale'], { cwd: ROOT, stdio: 'inherit' });
    const sourceMd5 = writeSource(source, mib * 1024 * 1024);
    const size = statSync(source).size;
    execFileSync('cat', [source], { stdio: ['ignore', 'ignore', 'inherit'] }); // into the page cache

    const dataDir = join(dir, 'data');
    // A first start creates the database: half a minute on a quiet machine, longer on a busy one.
    server = await startBenchServer({ dataDir, entry: 'built', timeoutMs: 300_000, everyMs: 250 });
    const { base, headers, tenant } = server;
    const client = createClient({ baseUrl: base, tenantId: tenant.id, apiKey: tenant.apiKey.key });
    const overHttp = createClient({ baseUrl: base, tenantId: tenant.id, apiKey: tenant.apiKey.key, fetch: nodeFetch });
    const stored = (fileKey: string) => join(dataDir, 'objects', fileKey);
    // Every stored object is compared with the source; a difference is counted and told, whoever sent it.
    const differing: string[] = [];
    const check = (fileKey: string, who: string) => {
      execFileSync('sync', [stored(fileKey)]);
      const [storedSize, storedMd5] = [statSync(stored(fileKey)).size, md5File(stored(fileKey))];
      if (storedSize !== size || storedMd5 !== sourceMd5) differing.push(`${who}: ${storedSize} bytes, md5 ${storedMd5}`);
      rmSync(stored(fileKey));
    };

    const curlRuns: number[] = [];
    const sdkRuns: number[] = [];
    const httpRuns: number[] = [];
    let parts = 0;
    let partSize = 0;
    for (let i = 0; i < runs; i++) {
      // curl: the parts cut to the size the server chose, then timed from start to complete.
      const probe = await json('POST', `${base}/vod/v1/files/start`, { name: 'cut.bin.mp4', friendlyName: 'cut', fileSize: size }, headers);
      await client.request('POST', '/vod/v1/files/{id}/cancel', { delete: true }, { params: { id: probe.fileId } });
      rmSync(partsDir, { recursive: true, force: true });
      mkdirSync(partsDir);
      execFileSync('split', ['-b', String(probe.partSize), '-d', '-a', '4', source, join(partsDir, 'p')]);
      execFileSync('sh', ['-c', `cat ${partsDir}/* > /dev/null`]);
      let t0 = performance.now();
      const start = await json('POST', `${base}/vod/v1/files/start`, { name: 'curl.mp4', friendlyName: 'curl', fileSize: size }, headers);
      const eTags = await curlParts(start.multipartUrls, partsDir, 4);
      const done = await json(
        'POST',
        `${base}/vod/v1/files/complete`,
        { fileId: start.fileId, parts: eTags.map((eTag, k) => ({ partNumber: k + 1, eTag })) },
        headers,
      );
      curlRuns.push((performance.now() - t0) / 1000);
      check(done.fileKey, 'curl');
      rmSync(partsDir, { recursive: true, force: true });
      parts = start.partsCount;
      partSize = start.partSize;

      for (const [sdk, times, who] of [
        [client, sdkRuns, 'SDK, fetch'],
        [overHttp, httpRuns, 'SDK, nodeFetch'],
      ] as const) {
        t0 = performance.now();
        const uploaded = await sdk.uploadFile(source, { name: 'sdk.mp4', concurrency: 4 });
        times.push((performance.now() - t0) / 1000);
        check(uploaded.fileKey, who);
      }
    }
    const mb = size / 1e6;
    const best = (xs: number[]) => Math.min(...xs);
    const rates = (xs: number[]) => xs.map((s) => `${(mb / s).toFixed(0)}`).join(', ');
    console.log(`upload ${mib} MiB (random bytes) in ${parts} parts of ${partSize / 1024 / 1024} MiB, 4 in flight, embedded store, best of ${runs}`);
    console.log(`  curl --parallel       ${(mb / best(curlRuns)).toFixed(0).padStart(6)} MB/s  (runs: ${rates(curlRuns)} MB/s)`);
    console.log(
      `  SDK uploadFile, fetch ${(mb / best(sdkRuns)).toFixed(0).padStart(6)} MB/s  (runs: ${rates(sdkRuns)} MB/s)  = ${((100 * best(curlRuns)) / best(sdkRuns)).toFixed(0)}% of curl`,
    );
    console.log(
      `  SDK uploadFile, nodeFetch ${(mb / best(httpRuns)).toFixed(0).padStart(2)} MB/s  (runs: ${rates(httpRuns)} MB/s)  = ${((100 * best(curlRuns)) / best(httpRuns)).toFixed(0)}% of curl`,
    );
    console.log('  target: 90% of curl or more');
    console.log(
      differing.length
        ? `  STORED OBJECTS DIFFERING FROM THE SOURCE (md5 ${sourceMd5}): ${differing.length} of ${runs * 3}: ${differing.join('; ')}`
        : `  every stored object identical to the source (md5 ${sourceMd5})`,
    );
    console.log(`  load average ${readLoad()}`);

    // The CLI: the same tenant's credentials in the environment, as a script would give them.
    const env = { ...process.env, MEDIAPLANE_URL: base, MEDIAPLANE_TENANT_ID: tenant.id, MEDIAPLANE_API_KEY: tenant.apiKey.key, XDG_CONFIG_HOME: dir };
    const cli = [join(ROOT, 'bin/mediaplane.js'), 'assets', 'list', '--json'];
    const timeOf = (args: string[]) => {
      const t0 = performance.now();
      const r = spawnSync(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'inherit'] });
      if (r.status !== 0) throw new Error(`${args.join(' ')} exited with ${r.status}`);
      return performance.now() - t0;
    };
    timeOf(['-e', '0']);
    timeOf(cli);
    const nodeTimes: number[] = [];
    const cliTimes: number[] = [];
    for (let i = 0; i < 10; i++) {
      nodeTimes.push(timeOf(['-e', '0']));
      cliTimes.push(timeOf(cli));
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    const ms = (x: number) => `${x.toFixed(0)} ms`;
    console.log('CLI wall time, ten runs each in turns (median, min)');
    console.log(`  node -e 0                        ${ms(median(nodeTimes)).padStart(7)}  (min ${ms(Math.min(...nodeTimes))})`);
    console.log(`  mediaplane assets list --json    ${ms(median(cliTimes)).padStart(7)}  (min ${ms(Math.min(...cliTimes))})`);
    console.log(
      `  over Node                        ${ms(median(cliTimes) - median(nodeTimes)).padStart(7)}  (min over min ${ms(Math.min(...cliTimes) - Math.min(...nodeTimes))}; target: under 150 ms)`,
    );
    console.log(`  load average ${readLoad()}`);
  } finally {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

const readLoad = () => execFileSync('cat', ['/proc/loadavg'], { encoding: 'utf8' }).split(' ')[0];
