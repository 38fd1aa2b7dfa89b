import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../src/config.ts';
import { runFfmpeg } from '../src/media/ffmpeg.ts';
import { readDecodeTime, readInit } from '../src/media/live/packaging/mp4.ts';
import { transcode } from '../src/media/transcode.ts';
import { createTenant } from '../src/modules/admin/service.ts';
import { liveTimelineSegments } from '../src/modules/live/timeline.tables.ts';
import { presetById } from '../src/modules/transcoder/service.ts';
import { openPlatform } from '../src/server.ts';
import { tenantClient } from '../test/helpers/client.ts';
import { until } from '../test/helpers/until.ts';

/**
 * `npm run bench -- recorder [minutes]`: a recording of a past range of a channel's timeline (default 10 minutes of
 * 360p30 video and AAC audio, 2 s CMAF segments, made ahead with ffmpeg and put on the timeline as the live packager
 * would), with an archive (no delay) and an `mp4-h264-download` output. Measured from the moment the recording is
 * created (its end is past: the recording may start at once) to the recording `Available`, the archive `Available`
 * and the output `Available`; against, in the same run, copying the same segments by hand (read and write every
 * object, 8 at a time; and the store's server-side copy, 8 at a time) and running the same VOD transcode by hand on the
 * same local input.
 */
export async function run(args: string[]): Promise<void> {
  const minutes = Number(args[0] ?? 10);
  const seconds = Math.round(minutes * 60);
  const work = mkdtempSync(join(tmpdir(), 'mediaplane-bench-recorder-'));
  const dataDir = join(work, 'data');
  const config = loadConfig({
    ...process.env,
    DATABASE_URL: process.env.BENCH_DATABASE_URL ?? '',
    MEDIAPLANE_DATA_DIR: dataDir,
    MEDIAPLANE_ADMIN_TOKEN: 'bench',
    LOG_LEVEL: 'warn',
    MEDIAPLANE_ROLE: 'all',
    MEDIAPLANE_LIVE_RETENTION_SECONDS: String(seconds + 3600),
  });
  const platform = await openPlatform(config);
  try {
    const address = await platform.app.listen({ port: 0, host: '127.0.0.1' });
    config.publicUrl = new URL(address);
    const { ctx } = platform;
    const tenant = await createTenant(platform.database.db, `bench-${Date.now()}`);
    const t = tenantClient(address, tenant.id, tenant.name, tenant.apiKey.key);
    const channelId = (await t.json('POST', '/live/v1/channels', { name: 'bench', input: { inputLoss: { type: 'COLOR', color: '#000000' } } })).body
      .id as string;

    // The channel's timeline: what the live packager would have published over `minutes`.
    const made = performance.now();
    const gen = join(work, 'gen');
    for (const [track, args] of [
      [
        '360p',
        [
          '-f',
          'lavfi',
          '-i',
          'testsrc2=size=640x360:rate=30',
          '-c:v',
          'libx264',
          '-preset',
          'veryfast',
          '-g',
          '60',
          '-keyint_min',
          '60',
          '-sc_threshold',
          '0',
          '-b:v',
          '800k',
          '-pix_fmt',
          'yuv420p',
        ],
      ],
      ['audio', ['-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=48000', '-c:a', 'aac', '-b:a', '128k', '-ac', '2']],
    ] as const) {
      mkdirSync(join(gen, track), { recursive: true });
      await runFfmpeg([
        ...args,
        '-t',
        String(seconds),
        '-f',
        'hls',
        '-hls_time',
        '2',
        '-hls_playlist_type',
        'vod',
        '-hls_segment_type',
        'fmp4',
        '-hls_fmp4_init_filename',
        'init.mp4',
        '-hls_segment_filename',
        join(gen, track, '%d.m4s'),
        join(gen, track, 'index.m3u8'),
      ]);
    }
    const prefix = `tenants/${tenant.id}/live/${channelId}/`;
    const startMs = Date.now() - seconds * 1000 - 60_000;
    const rows: (typeof liveTimelineSegments.$inferInsert)[] = [];
    const keys: string[] = [];
    const codecs: string[] = [];
    for (const track of ['360p', 'audio']) {
      const init = readFileSync(join(gen, track, 'init.mp4'));
      const info = readInit(init);
      codecs.push(info.codec);
      await ctx.store.putObject(`${prefix}${track}/init-1.mp4`, init, 'video/mp4');
      const playlist = readFileSync(join(gen, track, 'index.m3u8'), 'utf8');
      const durations = [...playlist.matchAll(/#EXTINF:([\d.]+),\n(\d+)\.m4s/g)].map((m) => [Number(m[1]), Number(m[2])] as const);
      let at = startMs;
      for (const [d, i] of durations) {
        const body = readFileSync(join(gen, track, `${i}.m4s`));
        const key = `${track}/${i}.m4s`;
        await ctx.store.putObject(prefix + key, body, 'video/mp4');
        keys.push(key);
        rows.push({
          channelId,
          tenantId: tenant.id,
          track,
          sequence: i,
          key,
          initKey: `${track}/init-1.mp4`,
          startMs: Math.round(at),
          durationMs: Math.round(d * 1000),
          decodeTime: readDecodeTime(body),
          timescale: info.timescale,
          run: 1,
        });
        at += d * 1000;
      }
    }
    for (let i = 0; i < rows.length; i += 1000) await ctx.db.insert(liveTimelineSegments).values(rows.slice(i, i + 1000));
    await ctx.store.putObject(
      `${prefix}master.m3u8`,
      `#EXTM3U\n#EXT-X-VERSION:7\n#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="audio",NAME="audio",DEFAULT=YES,AUTOSELECT=YES,CHANNELS="2",URI="audio.m3u8"\n` +
        `#EXT-X-STREAM-INF:BANDWIDTH=928000,RESOLUTION=640x360,CODECS="${codecs.join(',')}",AUDIO="audio"\n360p.m3u8\n`,
      'application/vnd.apple.mpegurl',
    );
    const bytes = keys.reduce((a, k) => a + readFileSync(join(gen, k)).length, 0);
    console.log(
      `recorder: ${minutes} min range: ${rows.length} segments, ${(bytes / 1e6).toFixed(1)} MB (made in ${((performance.now() - made) / 1000).toFixed(1)} s, not measured)`,
    );

    // Through the platform.
    const t0 = performance.now();
    const { body } = await t.json('POST', '/cvr/v1/recordings', {
      source: {
        type: 'LiveChannel',
        liveChannelDetails: { channelId, start: new Date(startMs).toISOString(), end: new Date(startMs + seconds * 1000).toISOString() },
      },
      archive: { enabled: true, delaySeconds: 0 },
      output: { preset: 'mp4-h264-download' },
    });
    const marks: Record<string, number> = {};
    await until(
      async () => {
        const r = (await t.json('GET', `/cvr/v1/recordings/${body.id}`)).body;
        if (r.status === 'Available' && !marks.recorded) marks.recorded = performance.now() - t0;
        if (r.archive.status === 'Available' && !marks.archive) marks.archive = performance.now() - t0;
        if (r.outputs[0]?.status === 'Available' && !marks.output) marks.output = performance.now() - t0;
        if ([r.status, r.archive.status, r.outputs[0]?.status].includes('Error')) throw new Error(`bench recording failed: ${JSON.stringify(r)}`);
        return marks.archive && marks.output;
      },
      Boolean,
      { timeoutMs: 3600_000, everyMs: 100 },
    );

    // By hand, in the same run: the same copy (channel → elsewhere, 8 at a time), and the same transcode.
    const c0 = performance.now();
    let next = 0;
    const all = [...keys, '360p/init-1.mp4', 'audio/init-1.mp4'];
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < all.length) {
          const k = all[next++]!;
          const chunks: Buffer[] = [];
          for await (const c of await ctx.store.getStream(prefix + k)) chunks.push(c as Buffer);
          await ctx.store.putObject(`tenants/${tenant.id}/bench-copy/${k}`, Buffer.concat(chunks), 'video/mp4');
        }
      }),
    );
    const copyMs = performance.now() - c0;
    // The same objects copied by hand with the store's own copy (what the recorder now uses): the floor.
    const s0 = performance.now();
    next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < all.length) {
          const k = all[next++]!;
          await ctx.store.copy(prefix + k, `tenants/${tenant.id}/bench-store-copy/${k}`);
        }
      }),
    );
    const storeCopyMs = performance.now() - s0;
    const input = join(work, 'input');
    mkdirSync(input, { recursive: true });
    const concat = (track: string) => {
      const files = readdirSync(join(gen, track))
        .filter((f) => f.endsWith('.m4s'))
        .sort((a, b) => Number.parseInt(a) - Number.parseInt(b));
      return Buffer.concat([readFileSync(join(gen, track, 'init.mp4')), ...files.map((f) => readFileSync(join(gen, track, f)))]);
    };
    const { writeFileSync } = await import('node:fs');
    writeFileSync(join(input, 'v.mp4'), concat('360p'));
    writeFileSync(join(input, 'a.mp4'), concat('audio'));
    const x0 = performance.now();
    await transcode({
      input: join(input, 'v.mp4'),
      durationMs: seconds * 1000,
      tracks: [
        { type: 'Video', index: 0 },
        { type: 'Audio', index: 0, input: join(input, 'a.mp4') },
      ],
      preset: presetById('mp4-h264-download')!,
      outDir: join(work, 'out'),
    });
    const transcodeMs = performance.now() - x0;

    const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
    console.log(`recorder: recorded (copy into the recording) ${s(marks.recorded!)}; archive Available ${s(marks.archive!)}; by-hand copy ${s(copyMs)}`);
    console.log(
      `recorder: archive Available / by-hand copy: ${(marks.archive! / copyMs).toFixed(2)} (the archive copies twice: into the recording, then to the archive)`,
    );
    console.log(`recorder: by-hand store copy (server-side, 8 at a time) ${s(storeCopyMs)}`);
    console.log(`recorder: MP4 output Available ${s(marks.output!)}; by-hand transcode ${s(transcodeMs)}; ratio ${(marks.output! / transcodeMs).toFixed(2)}`);
  } finally {
    await platform.close();
    rmSync(work, { recursive: true, force: true });
  }
}
