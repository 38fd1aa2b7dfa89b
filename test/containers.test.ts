import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { containerImage, IMAGE, podman, startContainer, waitHealthy, type Container } from './helpers/containers.ts';
import { pushEncoder } from './helpers/live.ts';
import { makeClip, tempDir } from './helpers/media.ts';
import { DATABASES, tenantClient, type TestTenant } from './helpers/platform.ts';
import { freePort } from './helpers/process.ts';
import { startSwift, type SwiftServer } from './helpers/swift.ts';
import { until } from './helpers/until.ts';
import { uploadFile } from './helpers/upload.ts';

/**
 * The image as a self-hoster runs it (Containerfile, compose.yaml): built once per run from the working tree, then
 * started with its embedded defaults, and as the api, worker and live processes of one deployment on PostgreSQL and
 * S3. Skipped, saying why, where podman cannot be installed. Media end to end on one database each (PGlite, then
 * PostgreSQL); the API's database work is covered on both elsewhere.
 */
const execute = promisify(execFile);
const SHUTDOWN_TIMEOUT_S = 30; // the image's default MEDIAPLANE_SHUTDOWN_TIMEOUT_SECONDS
const START_MS = 240_000; // a first start creates the database; a loaded machine takes long
const dir = tempDir('mediaplane-containers-');
let unavailable: string | undefined;

beforeAll(async () => {
  const image = await containerImage();
  if ('unavailable' in image) {
    unavailable = image.unavailable;
    console.warn(`container tests skipped: ${unavailable}`);
  }
}, 40 * 60_000);
afterAll(() => dir.cleanup());

async function ffprobe(url: string): Promise<{ streams: any[]; format: any }> {
  const { stdout } = await execute('ffprobe', ['-v', 'error', '-show_streams', '-show_format', '-of', 'json', url]);
  return JSON.parse(stdout);
}

async function createTenant(base: string, adminToken: string, name: string): Promise<TestTenant> {
  const res = await fetch(`${base}/admin/v1/tenants`, {
    method: 'POST',
    headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name }),
  });
  expect(res.status).toBe(201);
  const t = (await res.json()) as any;
  return tenantClient(base, t.id, t.name, t.apiKey.key);
}

/** Uploads a short clip, transcodes it with the HLS ladder and answers the HLS endpoint, probed. */
async function transcodeClip(t: TestTenant): Promise<{ streams: any[]; format: any }> {
  const fileId = await uploadFile(
    t,
    await makeClip(dir.dir, `clip-${t.name}`, { width: 640, height: 360, seconds: 2, audio: [{ language: 'eng', frequency: 440 }] }),
  );
  const tracks = (await t.json('POST', `/vod/v1/files/${fileId}/detect`)).body.tracks as any[];
  const created = await t.json('POST', '/vod/v1/assets', {
    preset: 'hls-h264-ladder',
    title: 'Clip',
    transcodedSources: [{ fileId, transcodingTracks: [tracks.find((x) => x.type === 'Audio')] }],
  });
  expect(created.status).toBe(200);
  const asset = (
    await until(
      () => t.json('GET', `/vod/v1/assets/${created.body.id}`),
      (r) => ['Available', 'Error'].includes(r.body?.status),
      { timeoutMs: 180_000, everyMs: 500, what: 'the asset to be transcoded' },
    )
  ).body;
  expect(asset.errorMessage).toBeNull();
  expect(asset.status).toBe('Available');
  return ffprobe(asset.endpoints.find((e: any) => e.format === 'HLS').url);
}

/** SIGTERM to the container's PID 1 (what `docker stop` sends): a graceful stop, exit code 0, before the timeout. */
async function stopGracefully(c: Container): Promise<void> {
  await c.kill('SIGTERM');
  // Past the timeout serve exits 1 by itself, and podman's wait gives up a little later: either fails the test.
  const code = await c.exited((SHUTDOWN_TIMEOUT_S + 15) * 1000);
  expect(code, await c.logs()).toBe(0);
}

describe('container image, embedded defaults', () => {
  let c: Container | undefined;
  afterAll(() => c?.remove());

  it(
    'serves, transcodes and plays on its embedded database and store, runs as a user with node as PID 1, and stops on SIGTERM',
    async (ctx) => {
      if (unavailable) return ctx.skip(unavailable);
      const port = await freePort();
      const base = `http://localhost:${port}`;
      // Only PORT: several containers share the host's network here; in compose.yaml each has its own.
      c = await startContainer(`mediaplane-test-embedded-${process.pid}`, { PORT: String(port) });
      await waitHealthy(c, `${base}/readyz`, START_MS);
      const [image] = JSON.parse((await podman(['image', 'inspect', IMAGE])).stdout);
      expect(image.Healthcheck.Test).toEqual(['CMD', 'node', 'scripts/healthcheck.mjs']);
      // HTTP, RTMP and SRT's UDP range (podman keeps a range as one key, Docker one key per port).
      const ports = Object.keys(image.Config.ExposedPorts);
      expect(ports).toEqual(expect.arrayContaining(['8080/tcp', '1935/tcp']));
      expect(ports.some((p) => /^9000(-9199)?\/udp$/.test(p)) && ports.some((p) => /^(9000-)?9199\/udp$/.test(p))).toBe(true);
      expect(image.Config.Volumes).toEqual({ '/data': {} });
      // The HEALTHCHECK itself (podman runs it on a systemd timer, which this machine has not: run it by hand).
      expect((await podman(['healthcheck', 'run', c.name])).code).toBe(0);
      expect((await c.exec(['id', '-u'])).stdout.trim()).toBe('10001');
      expect((await c.exec(['cat', '/proc/1/cmdline'])).stdout.split('\0').slice(0, 3)).toEqual(['node', 'bin/mediaplane.js', 'serve']);

      // The README's first steps: the admin token printed on first start, a tenant through the admin API.
      const token = /Generated the admin token \(stored in \/data\/admin-token; shown only this once\):\s+(mpa_\S+)/.exec(await c.logs())?.[1];
      expect(token).toBeDefined();
      const t = await createTenant(base, token!, 'embedded');
      // The CLI in the running container finds the server through the data directory and goes through its admin API.
      const listed = await c.exec(['node', 'bin/mediaplane.js', 'tenant', 'list']);
      expect(listed.stdout).toMatch(/^\S+ {2}embedded +Active$/m);
      // ffmpeg in the image transcodes; the embedded store under /data serves the HLS ladder.
      const probe = await transcodeClip(t);
      expect(Math.max(...probe.streams.filter((s) => s.codec_type === 'video').map((s) => s.height))).toBe(360);
      expect(probe.streams.some((s) => s.codec_type === 'audio')).toBe(true);
      expect(Number(probe.format.duration)).toBeGreaterThan(1.5);
      // The tenant CLI in the image (it runs on the SDK's build, a workspace package the image must carry).
      const tenantCli = ['env', `MEDIAPLANE_URL=${base}`, `MEDIAPLANE_TENANT_ID=${t.id}`, `MEDIAPLANE_API_KEY=${t.key}`, 'node', 'bin/mediaplane.js'];
      const assets = await c.exec([...tenantCli, 'assets', 'list', '--json']);
      expect(assets.stderr).toBe('');
      expect(JSON.parse(assets.stdout)).toHaveLength(1);
      // What the image keeps of the player libraries is what the embed page serves; the recognizer's model is there.
      for (const lib of ['hls.js', 'dash.js']) expect((await fetch(`${base}/player/v1/lib/${lib}`)).status).toBe(200);
      expect((await t.json('GET', '/live/v1/channels/ai-live-caption-languages')).body).toEqual([{ name: 'English (United States)', code: 'en-US' }]);
      expect((await c.exec(['sh', '-c', 'command -v pocketsphinx_continuous'])).code).toBe(0);

      await stopGracefully(c);
    },
    2 * START_MS,
  );
});

describe.skipIf(!DATABASES.includes('postgres'))('container image, api + worker + live on PostgreSQL and S3', () => {
  const admin = process.env.TEST_DATABASE_URL!;
  const dbName = `mediaplane_containers_${process.pid}`;
  const containers: Container[] = [];
  let swift: SwiftServer | undefined;
  let push: ReturnType<typeof pushEncoder> | undefined;

  const database = async (sql: string) => {
    const client = new pg.Client({ connectionString: admin });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  afterAll(async () => {
    await push?.stop();
    for (const c of containers) await c.remove();
    await swift?.stop();
    await database(`drop database if exists ${dbName} with (force)`).catch(() => {});
  });

  it(
    'starts the three roles together on a new database, transcodes through the worker and runs a live channel through the live process',
    async (ctx) => {
      if (unavailable) return ctx.skip(unavailable);
      await database(`drop database if exists ${dbName} with (force)`);
      await database(`create database ${dbName}`);
      swift = await startSwift();
      const [apiPort, workerHealth, liveHealth, rtmpPort] = [await freePort(), await freePort(), await freePort(), await freePort()];
      const base = `http://127.0.0.1:${apiPort}`;
      const adminToken = `mpa_${randomBytes(24).toString('base64url')}`;
      const databaseUrl = new URL(admin);
      databaseUrl.pathname = `/${dbName}`;
      // What compose.yaml gives every process: the database, the store and the three shared secrets.
      const shared = {
        DATABASE_URL: databaseUrl.toString(),
        // As in compose.yaml, the processes reach the store at one address and clients at another.
        MEDIAPLANE_STORAGE_URL: `s3://mediaplane?endpoint=${encodeURIComponent(swift.endpoint)}&publicEndpoint=${encodeURIComponent(swift.endpoint.replace('127.0.0.1', 'localhost'))}&region=us-east-1&forcePathStyle=true`,
        AWS_ACCESS_KEY_ID: swift.accessKeyId,
        AWS_SECRET_ACCESS_KEY: swift.secretAccessKey,
        MEDIAPLANE_ADMIN_TOKEN: adminToken,
        MEDIAPLANE_DRM_MASTER_KEY: randomBytes(32).toString('hex'),
        MEDIAPLANE_URL_SIGNING_SECRET: randomBytes(32).toString('hex'),
        MEDIAPLANE_PUBLIC_URL: base,
        HOST: '127.0.0.1',
        MEDIAPLANE_LIVE_SEGMENT_SECONDS: '1',
        // The api tells encoders where to push (transportPrimaryIngestUrl): the live process's RTMP port.
        MEDIAPLANE_RTMP_PORT: String(rtmpPort),
      };
      const roles = {
        api: { MEDIAPLANE_ROLE: 'api', PORT: String(apiPort) },
        worker: { MEDIAPLANE_ROLE: 'worker', MEDIAPLANE_HEALTH_PORT: String(workerHealth) },
        live: {
          MEDIAPLANE_ROLE: 'live',
          MEDIAPLANE_HEALTH_PORT: String(liveHealth),
          MEDIAPLANE_RTMP_HOST: '127.0.0.1',
          MEDIAPLANE_RTMP_PORT: String(rtmpPort),
        },
      };
      // Started together, as compose does: each migrates the new database at start, one after the other.
      const [api, worker, live] = await Promise.all(
        Object.entries(roles).map(([role, env]) => startContainer(`mediaplane-test-${role}-${process.pid}`, { ...shared, ...env })),
      );
      containers.push(api!, worker!, live!);
      await Promise.all([
        waitHealthy(api!, `${base}/readyz`, START_MS),
        waitHealthy(worker!, `http://127.0.0.1:${workerHealth}/readyz`, START_MS),
        waitHealthy(live!, `http://127.0.0.1:${liveHealth}/readyz`, START_MS),
      ]);
      for (const c of containers) expect((await podman(['healthcheck', 'run', c.name])).code, c.name).toBe(0);
      // The worker and the live process answer only health and metrics on their port: the API is the api's.
      expect((await fetch(`http://127.0.0.1:${workerHealth}/admin/v1/tenants`, { headers: { authorization: `Bearer ${adminToken}` } })).status).toBe(404);

      const t = await createTenant(base, adminToken, 'deployment');
      expect((await api!.exec(['node', 'bin/mediaplane.js', 'tenant', 'list'])).stdout).toMatch(/^\S+ {2}deployment +Active$/m);
      // The api hands out S3 part URLs, the worker transcodes, the api serves the ladder from S3.
      const probe = await transcodeClip(t);
      expect(Math.max(...probe.streams.filter((s) => s.codec_type === 'video').map((s) => s.height))).toBe(360);
      const workerMetrics = await (await fetch(`http://127.0.0.1:${workerHealth}/metrics`, { headers: { authorization: `Bearer ${adminToken}` } })).text();
      expect(workerMetrics).toMatch(/^mediaplane_transcode_seconds_count\{preset="hls-h264-ladder"\} 1$/m);

      // A live channel: the api creates and starts it, the live process runs it and takes the RTMP push.
      const id = (
        await t.json('POST', '/live/v1/channels', {
          name: 'studio',
          input: { inputLoss: { type: 'COLOR', color: '#000000' } },
          qualities: [{ resolution: '180p', frameRate: 25 }],
        })
      ).body.id as string;
      expect((await t.call('POST', `/live/v1/channels/${id}/start`)).status).toBe(200);
      const status = async () => (await t.json('GET', `/live/v1/channels/${id}/status`)).body.status as string;
      await until(status, (s) => s === 'On', { timeoutMs: 120_000, everyMs: 500, what: 'the channel to be On' });
      const ingest = (await t.json('GET', `/live/v1/channels/${id}/configuration`)).body.input.transportPrimaryIngestUrl as string;
      expect(ingest).toMatch(new RegExp(`^rtmp://127\\.0\\.0\\.1:${rtmpPort}/live/`));
      push = pushEncoder(ingest);
      const liveMetrics = () => fetch(`http://127.0.0.1:${liveHealth}/metrics`, { headers: { authorization: `Bearer ${adminToken}` } }).then((r) => r.text());
      await until(liveMetrics, (m) => /^mediaplane_live_channels\{input="connected"\} 1$/m.test(m), {
        timeoutMs: 60_000,
        everyMs: 500,
        what: () => `the push to be connected (${push!.stderr()})`,
      });
      // The live process publishes to S3; the api serves the playlists and segments.
      const hls = (await t.json('GET', `/live/v1/channels/${id}`)).body.endpoints.find((e: any) => e.format === 'HLS').url as string;
      expect(hls.startsWith(base)).toBe(true);
      const played = await ffprobe(hls);
      expect(played.streams.filter((s) => s.codec_type === 'video').map((s) => s.height)).toContain(180);
      expect((await t.call('POST', `/live/v1/channels/${id}/stop`)).status).toBe(200);
      await until(status, (s) => s === 'Off', { timeoutMs: 60_000, everyMs: 500, what: 'the channel to be Off' });
      await push.stop();

      for (const c of [live!, worker!, api!]) await stopGracefully(c);
    },
    4 * START_MS,
  );
});
