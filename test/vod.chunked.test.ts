import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import pg from 'pg';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { mpdTimelines } from '../src/media/mpdTimeline.ts';
import { launchBrowser, play, servePlayerPage } from './helpers/browser.ts';
import { expectFastStart, fastStartSegments, frameAt, makeClip, makeImage, meanColor, tempDir } from './helpers/media.ts';
import { describeEachDb, freshStorage, itOnDb, oneDb, tenantClient, type TestStorage, type TestTenant } from './helpers/platform.ts';
import { freePort, mediaplane, waitReady, type Run } from './helpers/process.ts';
import { uploadFile } from './helpers/upload.ts';
import { until } from './helpers/until.ts';
import { WebhookReceiver } from './helpers/webhookReceiver.ts';

const run = promisify(execFile);

/** Source seconds and frame rate of the test clip: four chunks of one 4 s segment each, the last one short. */
const SECONDS = 14;
const FPS = 25;
const FRAME = 1 / FPS;

/**
 * The times ffprobe reads from one stream of a media playlist, in presentation order, segment by segment (ffprobe
 * reading the playlist itself repeats and skips audio packets where one segment meets the next); fMP4 segments are read
 * as one file after their initialisation segment, as a player appends them.
 */
async function packetTimes(url: string, stream: 'v:0' | 'a:0', fmp4Dir: string): Promise<{ pts: number; duration: number }[]> {
  const playlist = await (await fetch(url)).text();
  const segments = playlist.split('\n').filter((l) => l && !l.startsWith('#'));
  const probe = async (file: string) => {
    const { stdout } = await run('ffprobe', ['-v', 'error', '-select_streams', stream, '-show_entries', 'packet=pts_time,duration_time', '-of', 'json', file], {
      maxBuffer: 64 * 1024 * 1024,
    });
    return (JSON.parse(stdout).packets as { pts_time: string; duration_time?: string }[]).map((p) => ({
      pts: Number(p.pts_time),
      duration: Number(p.duration_time ?? 0),
    }));
  };
  const init = /#EXT-X-MAP:URI="([^"]+)"/.exec(playlist)?.[1];
  if (init) {
    const bytes = await Promise.all([init, ...segments].map(async (s) => Buffer.from(await (await fetch(new URL(s, url))).arrayBuffer())));
    const file = join(fmp4Dir, `${Math.random().toString(36).slice(2)}.mp4`);
    writeFileSync(file, Buffer.concat(bytes));
    // The AAC encoder's priming frame lies before zero, where the edit list drops it: it is never played.
    return (await probe(file)).filter((p) => p.pts >= 0).sort((a, b) => a.pts - b.pts);
  }
  const all = await Promise.all(segments.map((segment) => probe(new URL(segment, url).toString())));
  return all.flat().sort((a, b) => a.pts - b.pts);
}

/** Every video rung plays continuously for the source's length, and the audio runs to its end. */
async function expectContinuous(masterUrl: string, dir: string): Promise<void> {
  const master = await (await fetch(masterUrl)).text();
  const video = master
    .split('\n')
    .filter((l) => l && !l.startsWith('#'))
    .map((l) => new URL(l, masterUrl).toString());
  const audio = /TYPE=AUDIO[^\n]*URI="([^"]+)"/.exec(master)?.[1];
  expect(video.length).toBeGreaterThan(0);
  expect(audio).toBeDefined();
  let videoEnd = 0;
  for (const url of video) {
    const frames = await packetTimes(url, 'v:0', dir);
    const gaps = frames.slice(1).map((f, i) => f.pts - frames[i].pts);
    // No gap over 1.5 frames anywhere, chunk borders included, and no frame twice.
    expect(Math.max(...gaps)).toBeLessThan(1.5 * FRAME);
    expect(Math.min(...gaps)).toBeGreaterThan(0.5 * FRAME);
    const duration = frames.at(-1)!.pts + FRAME - frames[0].pts;
    expect(Math.abs(duration - SECONDS)).toBeLessThanOrEqual(FRAME + 1e-6);
    videoEnd = frames.at(-1)!.pts + FRAME;
    // The preset's 4 s segments, chunk borders or not, after the fast start's short ones in the first 4 s (HLS written
    // by the chunks; an encrypted output is stitched and has no fast start).
    const playlist = await (await fetch(url)).text();
    const lengths = [...playlist.matchAll(/#EXTINF:([\d.]+)/g)].map((m) => Number(m[1]));
    const fast = lengths[0] < 2;
    if (fast) expectFastStart(lengths, { fps: FPS });
    expect(
      lengths.slice(fast ? fastStartSegments() : 0, -1).every((s) => Math.abs(s - 4) < 0.01),
      lengths.join(','),
    ).toBe(true);
  }
  const samples = await packetTimes(new URL(audio!, masterUrl).toString(), 'a:0', dir);
  const audioGaps = samples.slice(1).map((s, i) => s.pts - samples[i].pts - samples[i].duration);
  expect(Math.max(...audioGaps.map(Math.abs))).toBeLessThan(0.001);
  expect(samples.at(-1)!.pts + samples.at(-1)!.duration).toBeGreaterThan(videoEnd - FRAME);
}

/**
 * The chunked path (docs/decisions/vod-chunked.md), as operators run it: an API process and worker processes on one
 * database and one store. On PostgreSQL two worker processes share the chunks; PGlite is opened by one process at a
 * time, so there one process runs every role with two transcodes at once, and its kill -9 is followed by a restart.
 */
describeEachDb('VOD chunked transcoding', (kind) => {
  const { dir, cleanup } = tempDir();
  let storage: TestStorage;
  let api: Run | undefined;
  const workers: Run[] = [];
  let base = '';
  let env: Record<string, string> = {};
  let t: TestTenant;
  let fileId = '';
  let audioTrack: unknown;
  let browser: Browser;
  let page: { url: string; close(): Promise<void> };
  let logos: Server;
  let logoUrl = '';
  let receiver: WebhookReceiver;
  const twoProcesses = kind === 'postgres';
  // What a player sees (hls.js across the chunk borders) is the media's, whichever database: on one of them. The
  // continuity of every rung (ffprobe) and the overlay's pixels stay on both.
  const players = kind === oneDb('postgres');

  /** A worker process (on PGlite the one process, serving the API too). */
  async function startWorker(): Promise<Run> {
    const health = await freePort();
    const w = twoProcesses
      ? mediaplane(['serve'], { ...env, MEDIAPLANE_ROLE: 'worker', MEDIAPLANE_HEALTH_PORT: String(health) })
      : mediaplane(['serve'], { ...env, PORT: new URL(base).port, MEDIAPLANE_TRANSCODE_CONCURRENCY: '2' });
    await waitReady(twoProcesses ? `http://127.0.0.1:${health}` : base, w);
    workers.push(w);
    return w;
  }

  const finishedParts = (w: Run) =>
    w
      .output()
      .split('\n')
      .filter((l) => l.includes('"msg":"part transcoded"')).length;

  beforeAll(async () => {
    storage = await freshStorage(kind);
    const port = await freePort();
    base = `http://localhost:${port}`;
    env = {
      HOST: '127.0.0.1',
      MEDIAPLANE_DATA_DIR: storage.dataDir,
      MEDIAPLANE_ADMIN_TOKEN: 'chunked-token',
      MEDIAPLANE_PUBLIC_URL: base,
      MEDIAPLANE_DRM_MASTER_KEY: '11'.repeat(32),
      MEDIAPLANE_URL_SIGNING_SECRET: 'chunked-signing-secret',
      MEDIAPLANE_FETCH_ALLOW_PRIVATE: 'true',
      MEDIAPLANE_WEBHOOK_ALLOW_PRIVATE: 'true',
      // Small settings for a short clip: split anything over 6 s into 4 s chunks; a dead worker's part is taken up
      // again 4 s (its lease) and a sweep after it died.
      MEDIAPLANE_CHUNK_THRESHOLD_SECONDS: '6',
      MEDIAPLANE_CHUNK_SECONDS: '4',
      MEDIAPLANE_TRANSCODE_LEASE_SECONDS: '4',
      MEDIAPLANE_SWEEP_INTERVAL_MS: '500',
      LOG_LEVEL: 'info',
      ...(storage.databaseUrl ? { DATABASE_URL: storage.databaseUrl } : {}),
    };
    if (twoProcesses) {
      api = mediaplane(['serve'], { ...env, PORT: String(port), MEDIAPLANE_ROLE: 'api' });
      await waitReady(base, api);
      await startWorker();
      await startWorker();
    } else await startWorker();
    const created = (await (
      await fetch(`${base}/admin/v1/tenants`, {
        method: 'POST',
        headers: { authorization: 'Bearer chunked-token', 'content-type': 'application/json' },
        body: JSON.stringify({ name: `chunked-${kind}` }),
      })
    ).json()) as { id: string; name: string; apiKey: { key: string } };
    t = tenantClient(base, created.id, created.name, created.apiKey.key);
    receiver = await WebhookReceiver.start();
    const hook = await t.json('POST', '/notifications/v1/webhook', {
      name: 'progress',
      url: receiver.url,
      eventTypes: ['vod.output.progress'],
      isEnabled: true,
    });
    expect(hook.status).toBe(200);
    const clip = await makeClip(dir, `clip-${kind}`, { width: 320, height: 180, seconds: SECONDS, fps: FPS, audio: [{ language: 'eng', frequency: 440 }] });
    fileId = await uploadFile(t, clip);
    audioTrack = (await t.json('POST', `/vod/v1/files/${fileId}/detect`)).body.tracks.find((x: { type: string }) => x.type === 'Audio');
    const png = readFileSync(await makeImage(dir, 'logo.png', { width: 64, height: 64, color: 'red' }));
    logos = createServer((_req, res) => res.writeHead(200, { 'content-type': 'image/png', 'content-length': png.length }).end(png));
    await new Promise<void>((r) => logos.listen(0, '127.0.0.1', r));
    logoUrl = `http://127.0.0.1:${(logos.address() as AddressInfo).port}/logo.png`;
    if (players) [browser, page] = await Promise.all([launchBrowser(), servePlayerPage()]);
  }, 240_000);

  afterAll(async () => {
    for (const w of [...workers, api]) w?.child.kill('SIGKILL');
    await Promise.all([browser?.close(), page?.close(), receiver?.close(), logos && new Promise((r) => logos.close(r))]);
    await storage?.drop();
    cleanup();
  });

  const create = async (preset: string, more: object = {}) => {
    const r = await t.json('POST', '/vod/v1/assets', { transcodedSources: [{ fileId, transcodingTracks: [audioTrack] }], preset, ...more });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return r.body.id as string;
  };
  const available = async (id: string, timeoutMs = 300_000) => {
    const asset = (
      await until(
        () => t.json('GET', `/vod/v1/assets/${id}`),
        (r) => ['Available', 'Error'].includes(r.body.status),
        { timeoutMs },
      )
    ).body;
    expect(asset.status, asset.errorMessage).toBe('Available');
    return asset;
  };

  /** The progress of the asset's own output (`GET .../outputs/{id}/progress`). */
  async function progressOf(id: string, asset?: { outputs?: { id: string }[] }): Promise<number | undefined> {
    const outputId = (asset ?? (await t.json('GET', `/vod/v1/assets/${id}`)).body).outputs?.[0]?.id;
    if (!outputId) return undefined;
    return (await t.json('GET', `/vod/v1/assets/${id}/outputs/${outputId}/progress`)).body.progressPercent as number;
  }

  /** hls.js plays from before each chunk border to past it. */
  async function playsAcrossBorders(url: string, opts: { drmToken?: string } = {}) {
    for (const border of [4, 8, 12]) {
      const r = await play(browser, page.url, url, { startTime: border - 1, untilAdvanced: 2, seconds: 20, ...opts });
      expect(r.error).toBeUndefined();
      expect(Math.max(...r.times)).toBeGreaterThan(border + 0.5);
    }
  }

  it('encodes the source in chunks on every worker into one continuous ladder that plays across the borders, overlay included', async () => {
    const id = await create('hls-h264-ladder', {
      // Across the first border (4 s): each chunk draws its part at the source's times.
      overlays: [{ startTime: '2500', duration: 3000, width: 64, height: 64, imageX: 0, imageY: 0, input: { type: 'URL', url: logoUrl } }],
    });
    const progress: number[] = [];
    // What a player found while the chunks were encoding: the master and the growing playlist of the top rung.
    let growing: string | undefined;
    const asset = await until(
      async () => {
        const r = await t.json('GET', `/vod/v1/assets/${id}`);
        const p = await progressOf(id, r.body);
        if (typeof p === 'number' && p !== progress.at(-1)) progress.push(p);
        const early = r.body.outputs?.[0]?.endpoints?.find((e: { format: string }) => e.format === 'HLS');
        if (r.body.status === 'Processing' && early && growing === undefined) {
          const master = await (await fetch(early.url)).text();
          const top = new URL(
            master.split('\n').find((l) => l && !l.startsWith('#'))!,
            early.url,
          );
          growing = await (await fetch(top)).text();
        }
        return r.body;
      },
      (a) => ['Available', 'Error'].includes(a.status),
      { timeoutMs: 300_000, everyMs: 200 },
    );
    expect(asset.status, asset.errorMessage).toBe('Available');
    // Playable while the chunks encoded: the first chunk's first seconds, in a playlist still growing.
    expect(growing).toContain('#EXT-X-PLAYLIST-TYPE:EVENT');
    expect(growing).not.toContain('#EXT-X-ENDLIST');
    expect(growing).toContain('c0000_00000.ts');
    // Progress combined from the parts: it rose through the encode and never fell.
    expect(progress.filter((p) => p > 0 && p < 100).length).toBeGreaterThan(0);
    expect(progress).toEqual([...progress].sort((a, b) => a - b));
    const steps = (await until(
      async () => receiver.ofType('vod.output.progress').map((r) => r.json.data.progressPercent as number),
      (s) => s.length > 0,
      { timeoutMs: 30_000 },
    )) as number[];
    expect(steps.every((p) => p % 10 === 0 && p < 100)).toBe(true);
    // Every worker took parts.
    for (const w of workers) expect(finishedParts(w)).toBeGreaterThan(0);
    // Four chunks; the first makes the audio beside its video.
    if (twoProcesses) expect(workers.reduce((n, w) => n + finishedParts(w), 0)).toBe(4);
    const hls = asset.endpoints.find((e: { format: string }) => e.format === 'HLS');
    expect(Math.abs(hls.durationMilliseconds - SECONDS * 1000)).toBeLessThanOrEqual(40);
    await expectContinuous(hls.url, dir);
    // The overlay is drawn on both sides of the chunk border, and not after its window.
    const master = await (await fetch(hls.url)).text();
    const top = new URL(
      master.split('\n').find((l) => l && !l.startsWith('#'))!,
      hls.url,
    ).toString();
    for (const [at, red] of [
      [3, true],
      [4.5, true],
      [7, false],
    ] as const) {
      const [r, g, b] = meanColor(await frameAt(top, at), 24, 24);
      expect(r > 180 && g < 80 && b < 80, `overlay at ${at} s: ${r},${g},${b}`).toBe(red);
    }
    if (players) await playsAcrossBorders(hls.url);
    // Nothing of the parts is left behind: neither their rows nor their files.
    if (storage.databaseUrl) {
      const c = new pg.Client({ connectionString: storage.databaseUrl });
      await c.connect();
      expect((await c.query('select count(*)::int as n from vod_output_chunks')).rows[0].n).toBe(0);
      await c.end();
    }
  }, 600_000);

  // What it asks of the database is the first test's: on one of them.
  itOnDb(kind, 'postgres')(
    'an encrypted preset (HLS AES-128) goes through the chunked path and plays across the borders',
    async () => {
      const id = await create('hls-h264-ladder-aes128');
      const asset = await available(id);
      const hls = asset.endpoints[0];
      expect(hls).toMatchObject({ format: 'HLS', protection: 'Aes128', isDrmProtected: true });
      const master = await (await fetch(hls.url)).text();
      const media = await (
        await fetch(
          new URL(
            master.split('\n').find((l: string) => l && !l.startsWith('#'))!,
            hls.url,
          ),
        )
      ).text();
      expect(media).toContain('#EXT-X-KEY:METHOD=AES-128');
      expect([...media.matchAll(/#EXTINF:/g)].length).toBe(4);
      const token = (await t.json('POST', '/drm/v1/tokens', { assetId: id })).body.token as string;
      await playsAcrossBorders(hls.url, { drmToken: token });
    },
    600_000,
  );

  // What it asks of the database is the first test's: on one of them, with the players.
  itOnDb(kind, 'postgres')(
    'a CMAF output is written by its chunks: HLS and DASH play from the first chunk while it encodes, then both are continuous',
    async () => {
      const id = await create('cmaf-h264-ladder');
      // What a player found while the chunks were encoding: the MPD, and the growing playlist of the top rung.
      let growing: { mpd: string; playlist: string } | undefined;
      const asset = await until(
        async () => {
          const r = await t.json('GET', `/vod/v1/assets/${id}`);
          const dash = r.body.outputs?.[0]?.endpoints?.find((e: { format: string }) => e.format === 'DASH');
          const hls = r.body.outputs?.[0]?.endpoints?.find((e: { format: string }) => e.format === 'HLS');
          if (r.body.status === 'Processing' && dash && hls && growing === undefined) {
            const master = await (await fetch(hls.url)).text();
            const top = new URL(
              master.split('\n').find((l) => l && !l.startsWith('#'))!,
              hls.url,
            );
            growing = { mpd: await (await fetch(dash.url)).text(), playlist: await (await fetch(top)).text() };
          }
          return r.body;
        },
        (a) => ['Available', 'Error'].includes(a.status),
        { timeoutMs: 300_000, everyMs: 200 },
      );
      expect(asset.status, asset.errorMessage).toBe('Available');
      // Playable while the chunks encoded: the first chunk's first seconds, in a dynamic MPD and a growing playlist.
      expect(growing?.mpd).toContain('type="dynamic"');
      expect(growing?.mpd).toContain('media="chunk-$RepresentationID$-$Time$.m4s"');
      expect(growing?.playlist).toContain('#EXT-X-PLAYLIST-TYPE:EVENT');
      expect(growing?.playlist).not.toContain('#EXT-X-ENDLIST');
      expect(growing?.playlist).toContain('#EXT-X-MAP:URI="init-0.m4s"');
      const hls = asset.endpoints.find((e: { format: string }) => e.format === 'HLS');
      const dash = asset.endpoints.find((e: { format: string }) => e.format === 'DASH');
      for (const e of [hls, dash]) expect(Math.abs(e.durationMilliseconds - SECONDS * 1000), e.format).toBeLessThanOrEqual(40);
      // The same segments, continuous across the chunk borders, and the MPD static at the same URL.
      await expectContinuous(hls.url, dir);
      const mpd = await (await fetch(dash.url)).text();
      expect(mpd).toContain('type="static"');
      expect(mpd).not.toContain('availabilityStartTime');
      // One timeline per representation, from 0: the fast start's short segments, then 4 s ones.
      const timeline = mpdTimelines(mpd).find((r) => r.id === '0');
      expect(timeline!.segments[0]!.t).toBe(0);
      expectFastStart(
        timeline!.segments.map((x) => x.d / timeline!.timescale),
        { fps: FPS },
      );
      if (players) {
        for (const border of [4, 8, 12]) {
          const r = await play(browser, page.url, dash.url, { player: 'dash', startTime: border - 1, untilAdvanced: 2, seconds: 20 });
          expect(r.error).toBeUndefined();
          expect(Math.max(...r.times)).toBeGreaterThan(border + 0.5);
        }
      }
    },
    600_000,
  );

  it('a worker killed with -9 in the middle of a chunk costs that chunk only: the output is complete and continuous', async () => {
    const victim = workers[0];
    const before = workers.map(finishedParts);
    const id = await create('hls-h264-ladder');
    // Wait until the victim is encoding a part, and has not finished every part of this output.
    const pid = String(victim.child.pid);
    const c = storage.databaseUrl ? new pg.Client({ connectionString: storage.databaseUrl }) : undefined;
    await c?.connect();
    await until(
      async () => {
        if (c)
          return (await c.query(`select count(*)::int as n from vod_output_chunks where status = 'Processing' and lease_owner like $1`, [`%:${pid}:%`])).rows[0]
            .n;
        // PGlite: the one process is the victim; a part is under way once the output has progress.
        return ((await progressOf(id)) ?? 0) > 0 ? 1 : 0;
      },
      (n) => n > 0,
      { timeoutMs: 120_000, everyMs: 100 },
    );
    await c?.end();
    const doneByVictim = finishedParts(victim) - before[0];
    victim.child.kill('SIGKILL');
    await victim.exit;
    workers.splice(0, 1);
    const survivor = twoProcesses ? workers[0] : await startWorker();
    const survivorBefore = twoProcesses ? before[1] : 0;
    const asset = await available(id);
    await expectContinuous(asset.endpoints.find((e: { format: string }) => e.format === 'HLS').url, dir);
    // The parts the victim had finished were not encoded again; the rest (its chunk under way included) were.
    expect(finishedParts(survivor) - survivorBefore).toBe(4 - doneByVictim);
  }, 600_000);
});
