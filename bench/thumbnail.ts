import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../src/config.ts';
import { runFfmpeg } from '../src/media/ffmpeg.ts';
import { createTenant } from '../src/modules/admin/service.ts';
import { openPlatform } from '../src/server.ts';
import { tenantClient } from '../test/helpers/client.ts';
import { until } from '../test/helpers/until.ts';
import { uploadFile } from '../test/helpers/upload.ts';
import { makeSource } from './transcode.ts';

/**
 * Thumbnails on the fly (issue 27 item 3): a cold `GET /media/thumbnails/.../thumbnail.jpg?time=&width=` (a time not
 * asked before) against ffmpeg extracting the same frame at the same size from the same source by hand, in the same
 * run, alternating; and the same request again (the cached picture). A 60 s 1080p source (BENCH_SECONDS), uploaded
 * through the API into an in-process platform; `remux-hls-mp4` so that no encode runs meanwhile.
 */
export async function run(): Promise<void> {
  const seconds = Number(process.env.BENCH_SECONDS ?? 60);
  const samples = Number(process.env.BENCH_SAMPLES ?? 12);
  const dir = mkdtempSync(join(tmpdir(), 'mediaplane-bench-thumb-'));
  const dataDir = join(dir, 'data');
  const config = loadConfig({ ...process.env, DATABASE_URL: '', MEDIAPLANE_DATA_DIR: dataDir, MEDIAPLANE_ADMIN_TOKEN: 'bench', LOG_LEVEL: 'warn' });
  const platform = await openPlatform(config);
  try {
    const source = await makeSource(dir, seconds, 1080);
    const address = await platform.app.listen({ port: 0, host: '127.0.0.1' });
    config.publicUrl = new URL(address);
    const tenant = await createTenant(platform.database.db, `bench-${Date.now()}`);
    const t = tenantClient(address, tenant.id, tenant.name, tenant.apiKey.key);
    const fileId = await uploadFile(t, source);
    const { body } = await t.json('POST', '/vod/v1/assets', { transcodedSources: [{ fileId }], preset: 'remux-hls-mp4' });
    await until(
      async () => (await t.json('GET', `/vod/v1/assets/${body.id}`)).body.status,
      (s) => s === 'Available' || s === 'Error',
      { timeoutMs: 600_000 },
    );
    const url = (at: number) => `${address}/media/thumbnails/${tenant.id}/${body.id}/thumbnail.jpg?time=${at.toFixed(3)}&width=640`;
    const timed = async (f: () => Promise<unknown>) => {
      const started = performance.now();
      await f();
      return performance.now() - started;
    };
    const api: number[] = [];
    const hand: number[] = [];
    for (let i = 0; i < samples; i++) {
      // Times spread over the source, each asked once: every API request is a cold one.
      const at = ((i + 0.5) * seconds) / samples;
      const byApi = () =>
        timed(async () => {
          const res = await fetch(url(at));
          await res.arrayBuffer();
          if (res.status !== 200) throw new Error(`thumbnail answered ${res.status}`);
        });
      // What the platform runs, by hand: an input seek, one frame, square pixels, the width asked.
      const byHand = () =>
        timed(() =>
          runFfmpeg([
            '-y',
            '-ss',
            at.toFixed(3),
            '-i',
            source,
            '-map',
            '0:v:0',
            '-frames:v',
            '1',
            '-vf',
            'scale=640:-2',
            '-q:v',
            '3',
            join(dir, `hand-${i}.jpg`),
          ]),
        );
      if (i % 2 === 0) {
        api.push(await byApi());
        hand.push(await byHand());
      } else {
        hand.push(await byHand());
        api.push(await byApi());
      }
    }
    const cached: number[] = [];
    for (let i = 0; i < 200; i++) cached.push(await timed(async () => (await fetch(url((0.5 * seconds) / samples))).arrayBuffer()));
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    const ms = (x: number) => `${x.toFixed(1)} ms`;
    console.log(`source: ${seconds} s of 1920x1080p30; ${samples} cold requests at times across it, alternating with the same frame by hand\n`);
    console.log('| thumbnail 640 px wide | median | min | max |');
    console.log('|---|---|---|---|');
    console.log(`| ffmpeg by hand (the bound) | ${ms(median(hand))} | ${ms(Math.min(...hand))} | ${ms(Math.max(...hand))} |`);
    console.log(`| API, cold | ${ms(median(api))} | ${ms(Math.min(...api))} | ${ms(Math.max(...api))} |`);
    console.log(`| API, cached (200 requests) | ${ms(median(cached))} | ${ms(Math.min(...cached))} | ${ms(Math.max(...cached))} |`);
    console.log(`\nratio cold API / by hand: ${(median(api) / median(hand)).toFixed(2)}× (target ≤ 1.2×); cached median ${ms(median(cached))} (target < 5 ms)`);
    console.log(
      `machine: ${cpus().length} cores, load average ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
    );
  } finally {
    await platform.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
