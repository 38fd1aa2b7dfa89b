import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { asc, eq } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { runFfmpeg } from '../src/media/ffmpeg.ts';
import { liveMedia } from '../src/modules/live/media.ts';
import { ChannelRunner, startChannelRunner } from '../src/modules/live/runner/channelRunner.ts';
import { liveChannels } from '../src/modules/live/tables.ts';
import { events } from '../src/db/events.ts';
import { framePixels, pushEncoder, type Encoder } from './helpers/live.ts';
import { describeEachDb, itOnDb, startPlatform, type TestPlatform, type TestTenant } from './helpers/platform.ts';
import { until } from './helpers/until.ts';

/**
 * The channel runner on the real media layer: the RTMP ingest and the ffmpeg pipeline, with ffmpeg pushing to the
 * channel's `transportPrimaryIngestUrl`. What the runner records and when (statuses, events, leases, statistics, the
 * ingest's key check). Tiny on purpose: one 256x144 rung, 1 s segments, an encoder at a known bitrate.
 */

/** What the test encoder sends: CBR video (filler included) and AAC; the input statistics must come out near it. */
const PUSH_VIDEO_KBPS = 400;
const PUSH_AUDIO_KBPS = 64;
const PUSH_FPS = 15;

/** The ffmpeg processes running for a channel: their command lines name its work directory. */
function encoderPids(channelDir: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const argv = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (/(^|\/)ffmpeg$/.test(argv[0] ?? '') && argv.some((a) => a.includes(`${channelDir}/`))) pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

function listFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name));
}

/** A tiny local HTTP server answering every request with `answer`; it records what it was asked. */
async function serve(answer: (req: IncomingMessage) => { type: string; body: Buffer; delayMs?: number } | 'unauthorized') {
  const requests: IncomingMessage[] = [];
  let answered = 0;
  const server = createServer((req, res) => {
    requests.push(req);
    const a = answer(req);
    if (a === 'unauthorized') return void res.writeHead(401, { 'www-authenticate': 'Basic realm="media"' }).end();
    const range = /bytes=(\d+)-(\d*)/.exec(req.headers.range ?? '');
    const send = () => {
      if (range) {
        const start = Number(range[1]);
        const end = range[2] ? Number(range[2]) : a.body.length - 1;
        res
          .writeHead(206, { 'content-type': a.type, 'content-range': `bytes ${start}-${end}/${a.body.length}`, 'accept-ranges': 'bytes' })
          .end(a.body.subarray(start, end + 1));
      } else res.writeHead(200, { 'content-type': a.type, 'accept-ranges': 'bytes' }).end(a.body);
      answered++;
    };
    if (a.delayMs) setTimeout(send, a.delayMs);
    else send();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    answered: () => answered,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describeEachDb('Live channel runner', (kind) => {
  // What the runner asks of the database is the same for every channel: only the takeover (leases) runs on both.
  const itOnce = itOnDb(kind, 'postgres');
  let p: TestPlatform;
  let t: TestTenant;
  let media: string;
  let png: Buffer;
  let mp4: Buffer;
  const runners: ChannelRunner[] = [];
  const pushes: Encoder[] = [];

  beforeAll(async () => {
    media = mkdtempSync(join(tmpdir(), 'mediaplane-live-runner-'));
    const [platform] = await Promise.all([
      startPlatform(kind, {
        MEDIAPLANE_ROLE: 'api',
        LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
        MEDIAPLANE_LIVE_POLL_MS: '100',
        MEDIAPLANE_LIVE_LEASE_SECONDS: '3',
        MEDIAPLANE_RTMP_HOST: '127.0.0.1',
        MEDIAPLANE_RTMP_PORT: '0',
        MEDIAPLANE_LIVE_SEGMENT_SECONDS: '1',
        MEDIAPLANE_LIVE_WINDOW_SEGMENTS: '6',
      }),
      // A red slate picture, and a 2 s clip of tone for a pulled audio input.
      runFfmpeg(['-f', 'lavfi', '-i', 'color=c=red:s=64x36', '-frames:v', '1', '-y', join(media, 'slate.png')]),
      runFfmpeg([
        '-f',
        'lavfi',
        '-i',
        'sine=frequency=330:sample_rate=48000:duration=2',
        '-c:a',
        'aac',
        '-b:a',
        '32k',
        '-movflags',
        '+faststart',
        '-y',
        join(media, 'tone.mp4'),
      ]),
    ]);
    p = platform;
    png = readFileSync(join(media, 'slate.png'));
    mp4 = readFileSync(join(media, 'tone.mp4'));
    t = await p.createTenant();
    await p.admin('PATCH', `/admin/v1/tenants/${t.id}`, { channelsLimit: 100 });
  }, 60_000);
  // One test's live processes are gone before the next starts: each test knows which process may take its channels.
  afterEach(async () => {
    await Promise.all(pushes.splice(0).map((x) => x.stop()));
    for (const r of runners.splice(0)) await r.close();
  });
  afterAll(async () => {
    await p?.stop();
    rmSync(media, { recursive: true, force: true });
  });

  const runner = (owner: string) => {
    const r = new ChannelRunner(p.ctx, liveMedia, { owner });
    runners.push(r);
    r.start();
    return r;
  };
  const push = (url: string, seconds?: number) => {
    const x = pushEncoder(url, { size: '256x144', rate: PUSH_FPS, videoKbps: PUSH_VIDEO_KBPS, audioKbps: PUSH_AUDIO_KBPS, seconds });
    pushes.push(x);
    return x;
  };
  const channel = async (id: string) => (await t.json('GET', `/live/v1/channels/${id}`)).body;
  const status = async (id: string) => (await t.json('GET', `/live/v1/channels/${id}/status`)).body.status;
  const waitStatus = (id: string, wanted: string) =>
    until(
      () => status(id),
      (s) => s === wanted,
      { timeoutMs: 60_000, everyMs: 50 },
    );
  const eventsOf = async (id: string) =>
    (await p.ctx.db.select().from(events).where(eq(events.tenantId, t.id)).orderBy(asc(events.occuredAt), asc(events.id))).filter(
      (e) => (e.data as any).id === id,
    );
  const eventTypes = async (id: string) => (await eventsOf(id)).map((e) => e.type);
  const count = async (id: string, type: string) => (await eventTypes(id)).filter((e) => e === type).length;
  const waitEvents = (id: string, type: string, n: number) =>
    until(
      () => count(id, type),
      (c) => c >= n,
      { timeoutMs: 60_000, everyMs: 50 },
    );
  const create = async (body: object = {}) => {
    const res = await t.json('POST', '/live/v1/channels', {
      name: 'runner',
      qualities: [{ resolution: '144p', frameRate: 25 }],
      input: { inputLoss: { type: 'COLOR', color: '#00FF00' } },
      ...body,
    });
    expect(res.status).toBe(200);
    return res.body.id as string;
  };
  const lease = async (id: string) => (await p.ctx.db.select({ owner: liveChannels.leaseOwner }).from(liveChannels).where(eq(liveChannels.id, id)))[0]?.owner;
  const channelDir = (id: string) => join(p.config.live.workDir, id);
  const storeDir = (id: string) => join(p.config.dataDir, 'objects', 'tenants', t.id, 'live', id);
  const ingestUrl = async (id: string) =>
    ((await t.json('GET', `/live/v1/channels/${id}/configuration`)).body.input.transportPrimaryIngestUrl as string).replace('//localhost:', '//127.0.0.1:');
  const keyOf = (url: string) => url.split('/').pop()!;
  const media404 = (id: string, file: string) => `${p.baseUrl}/media/live/${t.id}/${id}/${file}`;
  /** The first frame of the newest published segment of `rendition`, fetched as a player would, decoded. */
  const latestPicture = async (id: string, rendition: string) => {
    const playlist = await (await fetch(media404(id, `${rendition}.m3u8`))).text();
    const init = [...playlist.matchAll(/#EXT-X-MAP:URI="([^"]+)"/g)].at(-1)![1]!;
    const segment = playlist.trim().split('\n').at(-1)!;
    const dir = mkdtempSync(join(media, 'probe-'));
    for (const f of [init, segment]) {
      const body = Buffer.from(await (await fetch(media404(id, f))).arrayBuffer());
      writeFileSync(join(dir, f.replace('/', '_')), body);
    }
    return framePixels(dir, init.replace('/', '_'), segment.replace('/', '_'));
  };
  /** Statistics as the API gives them, per minute. */
  const minuteStats = async (id: string, fn: 'Sum' | 'Avg') =>
    (await t.json('GET', `/live/v1/channels/${id}/stats?periodSeconds=60&aggregationFunction=${fn}`)).body.metrics;
  const total = (m: { data: { value: number }[] }) => m.data.reduce((a, d) => a + d.value, 0);

  itOnce(
    'runs a started channel: On at the first segment, input connected and lost as events, key and CIDR checked at connect, encoder crashes recovered, key rotation, Off after stop',
    async () => {
      const r = runner('live-a');
      const id = await create({ input: { whitelistCidr: '10.1.0.0/16', inputLoss: { type: 'COLOR', color: '#00ff00' } } });
      expect(await t.call('POST', `/live/v1/channels/${id}/start`).then((res) => res.status)).toBe(200);
      await waitStatus(id, 'On');
      expect(await lease(id)).toBe('live-a');
      // What the pipeline publishes lands under the channel's prefix and plays from /media/live: the channel's ladder,
      // and the input-loss colour (green) until an encoder connects.
      const master = await fetch(media404(id, 'master.m3u8'));
      expect(master.status).toBe(200);
      const masterText = await master.text();
      expect(masterText).toMatch(/^#EXTM3U/);
      expect(masterText.match(/RESOLUTION=\d+x\d+,FRAME-RATE=[\d.]+/g)).toEqual(['RESOLUTION=256x144,FRAME-RATE=25.000']);
      expect(masterText).toContain('URI="audio.m3u8"');
      const green = await latestPicture(id, '144p');
      expect(green.g).toBeGreaterThan(200);
      expect(green.r + green.b).toBeLessThan(60);

      const url = await ingestUrl(id);
      expect(url).toMatch(/^rtmp:\/\/127\.0\.0\.1:\d+\/live\/[A-Za-z0-9_-]{32}$/);
      const key = keyOf(url);
      // A wrong key, and this machine's address (outside 10.1.0.0/16), are refused at connect: ffmpeg gives up.
      expect(await push(url.replace(/[^/]+$/, 'not-the-key')).exited).not.toBe(0);
      expect(await push(url).exited).not.toBe(0);
      expect(await r.authorize(key, '192.0.2.1')).toEqual({ refused: expect.stringMatching(/whitelistCidr/) });
      expect(await r.authorize(key, '::ffff:10.1.2.3')).toEqual({ channelId: id, slot: 'primary' });
      expect(await count(id, 'live.channel.input.connected')).toBe(0);

      // The slate run crashes (kill -9): internalStatus and an error event say so, status stays On, and it recovers.
      const [slateRun] = encoderPids(channelDir(id));
      expect(slateRun).toBeGreaterThan(0);
      process.kill(slateRun!, 'SIGKILL');
      await until(
        () => channel(id),
        (c) => /^EncoderFailed: .*SIGKILL/.test(c.internalStatus ?? ''),
        { timeoutMs: 30_000, everyMs: 20 },
      );
      expect(await status(id)).toBe('On');
      await until(
        () => channel(id),
        (c) => c.internalStatus === 'InputLost',
        { timeoutMs: 30_000, everyMs: 50 },
      );
      await until(
        async () => encoderPids(channelDir(id)),
        (pids) => pids.length === 1 && pids[0] !== slateRun,
        { timeoutMs: 30_000, everyMs: 50 },
      );

      // The whitelist now holds this machine: the runner applies the PATCH at its next pass.
      expect((await t.json('PATCH', `/live/v1/channels/${id}`, { input: { whitelistCidr: '127.0.0.0/8' } })).status).toBe(200);
      await until(
        async () => r.authorize(key, '127.0.0.1'),
        (v) => 'channelId' in v,
        { timeoutMs: 10_000, everyMs: 20 },
      );
      let live = push(url);
      await waitEvents(id, 'live.channel.input.connected', 1);
      expect((await channel(id)).internalStatus).toBe('InputConnected');
      // The players get testsrc2's picture, not a flat colour.
      await until(
        () => latestPicture(id, '144p'),
        (px) => px.spread > 100,
        { timeoutMs: 30_000, everyMs: 100 },
      );

      // The live run crashes: an error event, the input lost, then the pipeline reads the ingest again by itself.
      const [liveRun] = encoderPids(channelDir(id));
      process.kill(liveRun!, 'SIGKILL');
      await waitEvents(id, 'live.channel.error', 2);
      await waitEvents(id, 'live.channel.input.lost', 1);
      await waitEvents(id, 'live.channel.input.connected', 2);
      await until(
        () => channel(id),
        (c) => c.internalStatus === 'InputConnected',
        { timeoutMs: 30_000, everyMs: 50 },
      );
      const crash = (await eventsOf(id)).filter((e) => e.type === 'live.channel.error').at(-1)!;
      expect(crash.data).toMatchObject({ id, status: 'On', message: expect.stringMatching(/SIGKILL/) });
      expect(JSON.stringify(crash.data)).not.toContain(key);

      // The encoder goes away: the input is lost.
      await live.stop();
      await waitEvents(id, 'live.channel.input.lost', 2);
      expect((await channel(id)).internalStatus).toBe('InputLost');

      // A rotated key: the connected encoder is dropped, the old key refused, the new one taken.
      live = push(url);
      await waitEvents(id, 'live.channel.input.connected', 3);
      const rotatedUrl = (await t.json('POST', `/live/v1/channels/${id}/stream-key/rotate`)).body.transportPrimaryIngestUrl.replace(
        '//localhost:',
        '//127.0.0.1:',
      );
      const rotated = keyOf(rotatedUrl);
      expect(rotated).not.toBe(key);
      expect(await live.exited).not.toBe(0);
      await waitEvents(id, 'live.channel.input.lost', 3);
      expect(await push(url).exited).not.toBe(0);
      live = push(rotatedUrl);
      await waitEvents(id, 'live.channel.input.connected', 4);

      expect(await t.call('POST', `/live/v1/channels/${id}/stop`).then((res) => res.status)).toBe(200);
      await waitStatus(id, 'Off');
      // Stopping disconnects the encoder and ends every ffmpeg run of the channel.
      expect(await live.exited).not.toBe(0);
      expect(encoderPids(channelDir(id))).toEqual([]);
      expect(await lease(id)).toBeNull();
      expect(await r.authorize(rotated, '127.0.0.1')).toEqual({ refused: expect.any(String) });
      const types = await eventTypes(id);
      expect(types.filter((e) => !e.startsWith('live.channel.input') && e !== 'live.channel.updated')).toEqual([
        'live.channel.created',
        'live.channel.starting',
        'live.channel.on',
        'live.channel.error',
        'live.channel.error',
        'live.channel.stopping',
        'live.channel.off',
      ]);
      expect(types.filter((e) => e.startsWith('live.channel.input'))).toEqual([
        'live.channel.input.connected',
        'live.channel.input.lost',
        'live.channel.input.connected',
        'live.channel.input.lost',
        'live.channel.input.connected',
        'live.channel.input.lost',
        'live.channel.input.connected',
      ]);
      await r.close();

      // What the runner sampled is in the channel's statistics (written at close, and every 10 s while running): every
      // segment the pipeline published, of every track, is counted once.
      const published = listFiles(storeDir(id)).filter((f) => f.endsWith('.m4s')).length;
      expect(published).toBeGreaterThan(0);
      expect(total((await minuteStats(id, 'Sum')).segmentsWritten)).toBe(published);
    },
  );

  itOnce('statistics: the input bitrate and frame rate are what the encoder sent, the connected time what it was connected', async () => {
    runner('live-stats');
    const id = await create();
    await t.call('POST', `/live/v1/channels/${id}/start`);
    await waitStatus(id, 'On');
    const seconds = 6;
    const sent = push(await ingestUrl(id), seconds);
    await waitEvents(id, 'live.channel.input.connected', 1);
    expect(await sent.exited).toBe(0);
    await waitEvents(id, 'live.channel.input.lost', 1);
    // The channel plays its input-loss colour a while without an encoder: that time is no frame rate of the input.
    // 5 s of it (with the seconds before the push) would pull the day's average below 0.7 of the sent rate if counted:
    // 6 s of frames over 11 s or more is 0.55 of it.
    await new Promise((r) => setTimeout(r, 5_000));
    await t.call('POST', `/live/v1/channels/${id}/stop`);
    await waitStatus(id, 'Off');
    for (const r of runners.splice(0)) await r.close();

    const avg = await minuteStats(id, 'Avg');
    const sum = await minuteStats(id, 'Sum');
    // A minute's figure averages its samples with the encoder connected. The band is wide, but a figure of 0 or one
    // not measured would fall outside it.
    const kbps = PUSH_VIDEO_KBPS + PUSH_AUDIO_KBPS;
    const bitrate = Math.max(...avg.inputBitrate.data.map((d: any) => d.value));
    expect(bitrate).toBeGreaterThanOrEqual(kbps * 0.5);
    expect(bitrate).toBeLessThanOrEqual(kbps * 2);
    // Pushed at 15 fps into a 25 fps rung: the input's rate, not the output's (the duplicated frames are taken out).
    // Compared with what the encoder really sent: on a loaded machine it sends fewer than 15 a second.
    const sentFps = sent.sentFrameRate();
    console.log(`encoder sent ${sentFps.toFixed(2)} fps (nominal ${PUSH_FPS})`);
    expect(sentFps).toBeGreaterThan(0);
    expect(sentFps).toBeLessThanOrEqual(PUSH_FPS * 1.1);
    const fps = Math.max(...avg.inputFrameRate.data.map((d: any) => d.value));
    expect(fps).toBeGreaterThanOrEqual(sentFps * 0.5);
    expect(fps).toBeLessThanOrEqual(sentFps * 1.4);
    // Over the whole run (a day's bucket), the input's rate averages over the connected time only: the seconds of
    // colour before and after the push do not pull it down (they made 15 fps read about 5).
    const day = (
      await t.json('GET', `/live/v1/channels/${id}/stats?periodSeconds=86400&aggregationFunction=Avg&start=${new Date(Date.now() - 3600_000).toISOString()}`)
    ).body.metrics;
    const overall = Math.max(...day.inputFrameRate.data.map((d: any) => d.value));
    expect(overall).toBeGreaterThanOrEqual(sentFps * 0.7);
    expect(overall).toBeLessThanOrEqual(sentFps * 1.4);
    const connected = total(sum.ingestConnectedSeconds);
    expect(connected).toBeGreaterThan(seconds * 0.4);
    expect(connected).toBeLessThanOrEqual(seconds + 2);
    const published = listFiles(storeDir(id)).filter((f) => f.endsWith('.m4s')).length;
    expect(total(sum.segmentsWritten)).toBe(published);
  });

  itOnce('an audio channel gets no video ladder; a pulled input is set at start, with its credentials, and looped', async () => {
    // The source asks for the channel's credentials, as a protected origin would.
    const credentials = `Basic ${Buffer.from('u:p@ss').toString('base64')}`;
    const source = await serve((req) => (req.headers.authorization === credentials ? { type: 'video/mp4', body: mp4 } : 'unauthorized'));
    runner('live-audio');
    try {
      const id = await create({
        transmissionType: 'Audio',
        input: { type: 'MP4_FILE', mp4Sources: [{ url: `${source.url}/loop.mp4`, username: 'u', password: 'p@ss' }], inputLoss: { type: 'COLOR' } },
      });
      await t.call('POST', `/live/v1/channels/${id}/start`);
      // 127.0.0.1 is a loopback address: the address guard refuses it unless MEDIAPLANE_FETCH_ALLOW_PRIVATE is set.
      await waitStatus(id, 'Error');
      expect((await channel(id)).internalStatus).toMatch(/loopback/);
      expect(await lease(id)).toBeNull();
      expect(await eventTypes(id)).toContain('live.channel.error');
      expect(source.requests).toHaveLength(0);
      p.ctx.config.fetchAllowPrivate = true;
      try {
        await t.call('POST', `/live/v1/channels/${id}/start`);
        await waitStatus(id, 'On');
        // The 2 s clip plays as the live input, read again from the start as it ends: looped.
        await waitEvents(id, 'live.channel.input.connected', 1);
        const served = () => source.requests.filter((r) => r.headers.authorization === credentials).length;
        await until(
          async () => served(),
          (n) => n >= 3,
          { timeoutMs: 60_000, everyMs: 50 },
        );
      } finally {
        p.ctx.config.fetchAllowPrivate = false;
      }
      const master = await (await fetch(media404(id, 'master.m3u8'))).text();
      expect(master).not.toContain('RESOLUTION');
      expect(master.split('\n').filter((l) => l && !l.startsWith('#'))).toEqual(['audio.m3u8']);
      expect(readdirSync(storeDir(id))).not.toContain('144p');
      await t.call('POST', `/live/v1/channels/${id}/stop`);
      await waitStatus(id, 'Off');
    } finally {
      await source.close();
    }
  });

  itOnce('fetches the input-loss slate through the address guard and shows its picture', async () => {
    const slate = await serve(() => ({ type: 'image/png', body: png }));
    runner('live-slate');
    try {
      const id = await create({ input: { inputLoss: { type: 'SLATE', imageSlateUri: `${slate.url}/slate` } } });
      await t.call('POST', `/live/v1/channels/${id}/start`);
      // A loopback address: refused unless private addresses are allowed.
      await waitStatus(id, 'Error');
      expect((await channel(id)).internalStatus).toMatch(/loopback/);
      expect(slate.requests).toHaveLength(0);
      p.ctx.config.fetchAllowPrivate = true;
      try {
        await t.call('POST', `/live/v1/channels/${id}/start`);
        await waitStatus(id, 'On');
      } finally {
        p.ctx.config.fetchAllowPrivate = false;
      }
      // Saved with its picture type's extension, as fetched; the channel shows it (red) while no encoder is connected.
      expect(readFileSync(join(channelDir(id), 'slate.png'))).toEqual(png);
      const red = await latestPicture(id, '144p');
      expect(red.r).toBeGreaterThan(200);
      expect(red.g + red.b).toBeLessThan(60);
      await t.call('POST', `/live/v1/channels/${id}/stop`);
      await waitStatus(id, 'Off');
    } finally {
      await slate.close();
    }
  });

  itOnce('an encoder that cannot run at all turns the channel Error, and it can be started again', async () => {
    runner('live-err');
    const id = await create();
    const before = process.env.FFMPEG_PATH;
    process.env.FFMPEG_PATH = join(media, 'no-such-ffmpeg');
    try {
      await t.call('POST', `/live/v1/channels/${id}/start`);
      await waitStatus(id, 'Error');
    } finally {
      if (before === undefined) delete process.env.FFMPEG_PATH;
      else process.env.FFMPEG_PATH = before;
    }
    const failed = await channel(id);
    expect(failed.internalStatus).toMatch(/^Could not start: .*could not be started.*FFMPEG_PATH/);
    expect(await lease(id)).toBeNull();
    const error = (await eventsOf(id)).filter((e) => e.type === 'live.channel.error').at(-1)!;
    expect(error.data).toMatchObject({ id, status: 'Error', previousStatus: 'Starting' });
    await t.call('POST', `/live/v1/channels/${id}/start`);
    await waitStatus(id, 'On');
    expect((await eventTypes(id)).filter((e) => e === 'live.channel.on')).toHaveLength(1);
    await t.call('POST', `/live/v1/channels/${id}/stop`);
    await waitStatus(id, 'Off');
    expect(encoderPids(channelDir(id))).toEqual([]);
  });

  itOnce('a stop that comes while the channel is still starting (fetching its slate) leaves nothing running', async () => {
    const slow = await serve(() => ({ type: 'image/png', body: png, delayMs: 1500 }));
    p.ctx.config.fetchAllowPrivate = true;
    runner('live-slow');
    try {
      const id = await create({ input: { inputLoss: { type: 'SLATE', imageSlateUri: `${slow.url}/slate.png` } } });
      await t.call('POST', `/live/v1/channels/${id}/start`);
      await until(
        async () => slow.requests.length,
        (n) => n === 1,
        { timeoutMs: 10_000, everyMs: 20 },
      );
      expect(await lease(id)).toBe('live-slow');
      await t.call('POST', `/live/v1/channels/${id}/stop`);
      await waitStatus(id, 'Off');
      // `Off` is written only once the start in progress has ended: the fetch was answered, and no run followed it.
      expect(slow.answered()).toBe(1);
      expect(await lease(id)).toBeNull();
      expect(encoderPids(channelDir(id))).toEqual([]);
      expect(existsSync(join(storeDir(id), 'master.m3u8'))).toBe(false);
      expect(await eventTypes(id)).not.toContain('live.channel.on');
    } finally {
      p.ctx.config.fetchAllowPrivate = false;
      await slow.close();
    }
  });

  itOnce('a channel whose encoder never produces a segment (a slate it cannot decode) stays Starting, and stops', async () => {
    const garbage = await serve(() => ({ type: 'image/png', body: Buffer.from('not a picture at all') }));
    p.ctx.config.fetchAllowPrivate = true;
    runner('live-stuck');
    try {
      const id = await create({ input: { inputLoss: { type: 'SLATE', imageSlateUri: `${garbage.url}/slate.png` } } });
      await t.call('POST', `/live/v1/channels/${id}/start`);
      await until(
        async () => encoderPids(channelDir(id)),
        (pids) => pids.length === 1,
        { timeoutMs: 30_000, everyMs: 50 },
      );
      expect(await status(id)).toBe('Starting');
      await t.call('POST', `/live/v1/channels/${id}/stop`);
      await waitStatus(id, 'Off');
      expect(encoderPids(channelDir(id))).toEqual([]);
      expect(await eventTypes(id)).not.toContain('live.channel.on');
    } finally {
      p.ctx.config.fetchAllowPrivate = false;
      await garbage.close();
    }
  });

  it('a live process acts on a start and a stop when they commit, not at its next poll', async () => {
    // A poll and a lease of an hour: only the notification on commit can make this process act within the test (and
    // the channel stays held, so the stop waits for it rather than turning Off at once).
    const live = { ...p.ctx.config.live, pollMs: 3_600_000, leaseSeconds: 3600 };
    const stop = await startChannelRunner({ ...p.ctx, config: { ...p.ctx.config, live } }, { owner: `wake-${kind}` });
    try {
      const id = await create();
      expect((await t.call('POST', `/live/v1/channels/${id}/start`)).status).toBe(200);
      await waitStatus(id, 'On');
      expect(await lease(id)).toBe(`wake-${kind}`);
      expect((await t.call('POST', `/live/v1/channels/${id}/stop`)).status).toBe(200);
      await waitStatus(id, 'Off');
    } finally {
      await stop();
    }
  });

  it('another live process takes over a channel whose owner gave it back or died, and it stays On', async () => {
    const ra = runner('live-one');
    const id = await create();
    await t.call('POST', `/live/v1/channels/${id}/start`);
    await waitStatus(id, 'On');
    expect(await lease(id)).toBe('live-one');
    const [first] = encoderPids(channelDir(id));
    expect(first).toBeGreaterThan(0);

    // A clean shutdown gives the lease back and stops its encoder: the other process takes the channel at its next pass.
    await ra.close();
    expect(encoderPids(channelDir(id))).toEqual([]);
    expect(await lease(id)).toBeNull();
    runner('live-two');
    await until(
      () => lease(id),
      (o) => o === 'live-two',
      { timeoutMs: 10_000, everyMs: 50 },
    );
    const playlist = async () => (await fetch(media404(id, '144p.m3u8'))).text();
    const before = await playlist();
    // Its encoder publishes: the playlist moves on.
    await until(playlist, (text) => text !== before && encoderPids(channelDir(id)).length === 1, { timeoutMs: 30_000, everyMs: 100 });
    const [second] = encoderPids(channelDir(id));
    expect(await status(id)).toBe('On');

    // An owner that died leaves its lease to run out; then a live process takes the channel.
    const dead = new Date(Date.now() - 1000);
    await p.ctx.db.update(liveChannels).set({ leaseOwner: 'live-dead', leaseUntil: dead }).where(eq(liveChannels.id, id));
    await until(
      () => lease(id),
      (o) => o === 'live-two',
      { timeoutMs: 10_000, everyMs: 50 },
    );
    // It stopped the run it no longer held and started a new one.
    await until(
      async () => encoderPids(channelDir(id)),
      (pids) => pids.length === 1 && pids[0] !== second,
      { timeoutMs: 30_000, everyMs: 50 },
    );
    expect(await status(id)).toBe('On');
    expect((await eventTypes(id)).filter((e) => e === 'live.channel.on')).toHaveLength(1);

    // A channel left Stopping by a dead owner is finished by any live process, and nothing keeps running it.
    await p.ctx.db.update(liveChannels).set({ status: 'Stopping', leaseOwner: 'live-dead', leaseUntil: dead }).where(eq(liveChannels.id, id));
    await waitStatus(id, 'Off');
    expect((await eventTypes(id)).at(-1)).toBe('live.channel.off');
    await until(
      async () => encoderPids(channelDir(id)),
      (pids) => pids.length === 0,
      { timeoutMs: 30_000, everyMs: 50 },
    );
    expect(await lease(id)).toBeNull();
  });
});
