import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, Socket, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, servePlayerPage } from './helpers/browser.ts';
import { fileSize, framePixels, playLive, pushEncoder, rtmpReceiver, type Encoder, type LivePlayer } from './helpers/live.ts';
import { DATABASES, freshStorage, tenantClient, type TestStorage, type TestTenant } from './helpers/platform.ts';
import { freePort, listening, mediaplane, waitReady, type Run } from './helpers/process.ts';
import { until } from './helpers/until.ts';

/**
 * Failover between live processes (docs/decisions/live.md, "Failover"): an API process and two `--role live`
 * processes on one PostgreSQL database and one store; encoders push to a shared ingest address (here a small layer-4
 * balancer that connects each encoder to the first live process whose RTMP port accepts, as HAProxy's `backup` rule
 * does). The owner of an `On` channel is killed with -9: the other process takes the channel over through the lease,
 * the encoder's reconnect reaches it through the same address, the playlists continue (hls.js keeps playing without
 * an error), and the restream resumes.
 *
 * PostgreSQL only: PGlite is an embedded database that one process opens at a time, so two live processes (and the
 * API process) cannot share it. That is why the platform needs PostgreSQL for more than one process.
 */

/** The shared ingest address: each connection goes to the first backend that accepts it. */
async function firstAccepting(backends: number[]): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    sockets.add(client);
    client.pause();
    const tryBackend = (i: number) => {
      if (i >= backends.length) return client.destroy();
      const upstream = new Socket();
      upstream.once('error', () => (upstream.destroy(), tryBackend(i + 1)));
      upstream.connect(backends[i]!, '127.0.0.1', () => {
        upstream.removeAllListeners('error');
        sockets.add(upstream);
        upstream.on('error', () => client.destroy());
        client.on('error', () => upstream.destroy());
        upstream.on('close', () => client.destroy());
        client.on('close', () => upstream.destroy());
        client.pipe(upstream).pipe(client);
        client.resume();
      });
    };
    tryBackend(0);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** An encoder pushing a test pattern and a tone over RTMP in real time; like OBS, it reconnects when it loses the server. */
function reconnectingEncoder(url: string): { stop(): void } {
  let encoder: Encoder | undefined;
  let stopped = false;
  const run = () => {
    if (stopped) return;
    encoder = pushEncoder(url, { size: '256x144', rate: 15 });
    void encoder.exited.then(() => setTimeout(run, 500));
  };
  run();
  return {
    stop: () => {
      stopped = true;
      void encoder?.kill();
    },
  };
}

describe.skipIf(!DATABASES.includes('postgres'))('Live failover between processes (PostgreSQL)', () => {
  let storage: TestStorage;
  let work: string;
  let api: Run | undefined;
  const live: { run: Run; rtmpPort: number }[] = [];
  let balancer: Awaited<ReturnType<typeof firstAccepting>> | undefined;
  let encoder: ReturnType<typeof reconnectingEncoder> | undefined;
  const destinations: ReturnType<typeof rtmpReceiver>[] = [];
  let browser: Browser;
  let page: { url: string; close(): Promise<void> };
  let player: LivePlayer | undefined;

  beforeAll(async () => {
    storage = await freshStorage('postgres');
    work = mkdtempSync(join(tmpdir(), 'mediaplane-live-failover-'));
    [browser, page] = await Promise.all([launchBrowser(), servePlayerPage()]);
  }, 60_000);
  afterAll(async () => {
    encoder?.stop();
    for (const d of destinations) d.child.kill('SIGKILL');
    for (const p of [api, ...live.map((l) => l.run)]) p?.child.kill('SIGKILL');
    await player?.close().catch(() => {});
    await Promise.all([browser?.close(), page?.close(), balancer?.close()]);
    await storage?.drop();
    rmSync(work, { recursive: true, force: true });
  });

  it('kill -9 of the owner: the other live process takes the channel over, the player keeps playing, the restream resumes', async () => {
    const [port, rtmpA, rtmpB, restreamPort] = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
    balancer = await firstAccepting([rtmpA, rtmpB]);
    const base = `http://localhost:${port}`;
    const env: Record<string, string> = {
      DATABASE_URL: storage.databaseUrl,
      MEDIAPLANE_DATA_DIR: storage.dataDir,
      MEDIAPLANE_PUBLIC_URL: base,
      MEDIAPLANE_ADMIN_TOKEN: 'failover-token',
      MEDIAPLANE_RTMP_HOST: '127.0.0.1',
      // What encoders are told: the shared address, not a process.
      MEDIAPLANE_RTMP_PUBLIC_URL: `rtmp://127.0.0.1:${balancer.port}/live`,
      MEDIAPLANE_RESTREAM_ALLOW_PRIVATE: 'true',
      MEDIAPLANE_LIVE_SEGMENT_SECONDS: '1',
      MEDIAPLANE_LIVE_WINDOW_SEGMENTS: '10',
      MEDIAPLANE_LIVE_POLL_MS: '200',
      MEDIAPLANE_LIVE_LEASE_SECONDS: '3',
      // One process runs the channels, the other stands by: the balancer's rule (first that accepts) then holds.
      MEDIAPLANE_LIVE_ACTIVE_STANDBY: 'true',
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
    };
    api = mediaplane(['serve', '--role', 'api'], { ...env, PORT: String(port), HOST: '127.0.0.1' });
    await waitReady(base, api);
    for (const rtmpPort of [rtmpA, rtmpB])
      live.push({ run: mediaplane(['serve', '--role', 'live'], { ...env, MEDIAPLANE_RTMP_PORT: String(rtmpPort) }), rtmpPort });

    const created = (await (
      await fetch(`${base}/admin/v1/tenants`, {
        method: 'POST',
        headers: { authorization: 'Bearer failover-token', 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'failover' }),
      })
    ).json()) as { id: string; name: string; apiKey: { key: string } };
    const t: TestTenant = tenantClient(base, created.id, created.name, created.apiKey.key);
    const res = await t.json('POST', '/live/v1/channels', {
      name: 'failover',
      qualities: [{ resolution: '144p', frameRate: 15 }],
      input: { inputLoss: { type: 'COLOR', color: '#00FF00' } },
      restreams: [{ protocol: 'RTMP', id: 'r1', destination: 'local', rtmpDestinations: [{ url: `rtmp://127.0.0.1:${restreamPort}/live`, streamKey: 'k' }] }],
    });
    expect(res.status).toBe(200);
    const id = res.body.id as string;
    const status = async () => (await t.json('GET', `/live/v1/channels/${id}/status`)).body.status as string;
    expect((await t.call('POST', `/live/v1/channels/${id}/start`)).status).toBe(200);
    await until(status, (s) => s === 'On', { timeoutMs: 60_000, everyMs: 200 });
    const conf = (await t.json('GET', `/live/v1/channels/${id}/configuration`)).body;
    expect(conf.input.transportPrimaryIngestUrl).toMatch(new RegExp(`^rtmp://127\\.0\\.0\\.1:${balancer.port}/live/`));

    // The owner is the live process whose RTMP port is open (a live process opens it when it first runs a channel).
    const open = await Promise.all(live.map((l) => listening(l.rtmpPort)));
    expect(open.filter(Boolean)).toHaveLength(1);
    const owner = live[open.indexOf(true)]!;
    const other = live[open.indexOf(false)]!;

    const media = (file: string) => `${base}/media/live/${t.id}/${id}/${file}`;
    const latest = async () => {
      const playlist = await (await fetch(media('144p.m3u8'))).text();
      const init = [...playlist.matchAll(/#EXT-X-MAP:URI="([^"]+)"/g)].at(-1)![1]!;
      const segment = playlist.trim().split('\n').at(-1)!;
      const first = Number(/#EXT-X-MEDIA-SEQUENCE:(\d+)/.exec(playlist)![1]);
      const dir = mkdtempSync(join(work, 'probe-'));
      try {
        for (const f of [init, segment]) writeFileSync(join(dir, f.replace('/', '_')), Buffer.from(await (await fetch(media(f))).arrayBuffer()));
        return { first, segment, ...(await framePixels(dir, init.replace('/', '_'), segment.replace('/', '_'))) };
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    };

    const before = join(work, 'restream-before.flv');
    destinations.push(rtmpReceiver(restreamPort, before));
    encoder = reconnectingEncoder(conf.input.transportPrimaryIngestUrl);
    const onAir = await until(latest, (px) => px.spread > 100, { timeoutMs: 60_000, everyMs: 250, what: 'the encoder on air' });
    await until(
      () => fileSize(before),
      (n) => n > 20_000,
      { timeoutMs: 30_000, what: 'the restream arriving' },
    );
    const hls = (await t.json('GET', `/live/v1/channels/${id}`)).body.endpoints.find((e: { format: string }) => e.format === 'HLS').url as string;
    player = await playLive(browser, page.url, hls, 'hls');
    const playing = await until(player.state, (s) => s.currentTime > 1 || !!s.error, { timeoutMs: 30_000, what: 'hls.js playing' });
    expect(playing.error).toBeUndefined();

    // kill -9 of the owner: its encoder connection, its restream and its lease renewals stop at once.
    owner.run.child.kill('SIGKILL');
    const killedWall = Date.now();
    await owner.run.exit;
    const killedAt = playing.currentTime;
    const after = join(work, 'restream-after.flv');
    destinations.push(rtmpReceiver(restreamPort, after));

    // The other process takes the channel over when the lease runs out, and the encoder's reconnect reaches it.
    await until(() => listening(other.rtmpPort), Boolean, { timeoutMs: 60_000, what: 'the other live process running the channel' });
    const back = await until(latest, (px) => px.spread > 100 && px.segment !== onAir.segment, {
      timeoutMs: 60_000,
      everyMs: 250,
      what: 'the encoder on air again, from the other process',
    });
    // A figure for the report, not a threshold (the lease is 3 s here, 10 s by default).
    console.info(`failover: owner killed → the encoder's frames published by the other process in ${((Date.now() - killedWall) / 1000).toFixed(1)} s`);
    // The same playlist continues (its numbering was not restarted), and it keeps growing.
    expect(back.first).toBeGreaterThanOrEqual(onAir.first);
    expect(Number(back.segment.match(/(\d+)\.m4s$/)![1])).toBeGreaterThan(Number(onAir.segment.match(/(\d+)\.m4s$/)![1]));
    expect(await status()).toBe('On');
    // The player never failed and plays on past the takeover.
    const later = await until(player.state, (s) => s.currentTime > killedAt + 4 || !!s.error, { timeoutMs: 60_000, what: 'hls.js playing on' });
    expect(later.error).toBeUndefined();
    // The restream resumes from the new owner.
    await until(
      () => fileSize(after),
      (n) => n > 20_000,
      { timeoutMs: 60_000, what: 'the restream arriving again' },
    );

    expect((await t.call('POST', `/live/v1/channels/${id}/stop`)).status).toBe(200);
    await until(status, (s) => s === 'Off', { timeoutMs: 30_000, everyMs: 200 });
  }, 240_000);
});
