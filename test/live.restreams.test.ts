import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { asc, eq } from 'drizzle-orm';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { events } from '../src/db/events.ts';
import { runFfprobe } from '../src/media/ffmpeg.ts';
import { liveMedia, type RestreamDestination, type RestreamDestinationOptions, type RestreamSource } from '../src/modules/live/media.ts';
import { ChannelRestreams } from '../src/modules/live/restreams.ts';
import { ChannelRunner } from '../src/modules/live/runner/channelRunner.ts';
import { fileSize, pushEncoder, rtmpReceiver } from './helpers/live.ts';
import { describeOnDb, startPlatform, type TestPlatform, type TestTenant } from './helpers/platform.ts';
import { until } from './helpers/until.ts';
import { freePort } from './helpers/process.ts';

/**
 * Restreams with real ffmpeg: a channel pushes to two local RTMP listeners (ffmpeg `-listen 1`, as a platform's
 * ingest would take it); one listener dies and comes back while the other keeps receiving; a PATCH removes a restream.
 */
/** What ffprobe finds in a received file: a video stream, and the time its video packets span. */
async function probe(file: string): Promise<{ video: boolean; seconds: number }> {
  const out = JSON.parse(await runFfprobe(['-of', 'json', '-show_streams', '-show_entries', 'packet=pts_time,stream_index', file]));
  const video = (out.streams as any[]).find((s) => s.codec_type === 'video');
  const times = (out.packets as any[])
    .filter((p) => p.stream_index === video?.index)
    .map((p) => Number(p.pts_time))
    .filter(Number.isFinite);
  return { video: !!video, seconds: times.length ? Math.max(...times) - Math.min(...times) : 0 };
}

/** The diff a PATCH makes while On, against stand-in destinations: only what changed starts, stops or restarts. */
describe('Channel restreams', () => {
  it('starts the added, stops the removed, restarts the changed and leaves the rest running', async () => {
    const made: { url: string; streamKey: string; stopped: boolean; sources: (RestreamSource | null)[] }[] = [];
    const media = {
      ...liveMedia,
      createRestreamDestination: (o: RestreamDestinationOptions): RestreamDestination => {
        const d = { url: o.url, streamKey: o.streamKey, stopped: false, sources: [] as (RestreamSource | null)[] };
        made.push(d);
        return {
          setSource: (s) => void d.sources.push(s),
          state: () => ({ status: 'Active', lastError: null, bytesSent: 0 }),
          stop: async () => void (d.stopped = true),
        };
      },
    };
    const set = new ChannelRestreams(media, { allowPrivate: true, log: pino({ level: 'silent' }), onChange: () => {}, onNotice: () => {} });
    const r = (id: string, ...dests: [string, string][]) => ({
      id,
      protocol: 'RTMP' as const,
      destination: id,
      rtmpDestinations: dests.map(([url, streamKey]) => ({ url, streamKey })),
    });
    set.setSource({ url: 'rtmp://in' });
    set.apply([r('a', ['rtmp://a', 'ka']), r('b', ['rtmp://b1', 'kb1'], ['rtmp://b2', 'kb2'])]);
    expect(made.map((d) => [d.url, d.sources])).toEqual([
      ['rtmp://a', [{ url: 'rtmp://in' }]],
      ['rtmp://b1', [{ url: 'rtmp://in' }]],
      ['rtmp://b2', [{ url: 'rtmp://in' }]],
    ]);
    // Same again (a label change): nothing restarts.
    set.apply([{ ...r('a', ['rtmp://a', 'ka']), label: 'x' }, r('b', ['rtmp://b1', 'kb1'], ['rtmp://b2', 'kb2'])]);
    expect(made).toHaveLength(3);
    // b's second key changes, c is added, a is removed.
    set.apply([r('b', ['rtmp://b1', 'kb1'], ['rtmp://b2', 'kb2-new']), r('c', ['rtmp://c', 'kc'])]);
    expect(made.map((d) => [d.url, d.streamKey, d.stopped])).toEqual([
      ['rtmp://a', 'ka', true],
      ['rtmp://b1', 'kb1', false],
      ['rtmp://b2', 'kb2', true],
      ['rtmp://b2', 'kb2-new', false],
      ['rtmp://c', 'kc', false],
    ]);
    expect(set.statuses()).toEqual({
      b: [
        { status: 'Active', lastError: null },
        { status: 'Active', lastError: null },
      ],
      c: [{ status: 'Active', lastError: null }],
    });
    await set.stop();
    expect(made.every((d) => d.stopped)).toBe(true);
  });
});

describeOnDb('pglite', 'Live restreams', (kind) => {
  let p: TestPlatform;
  let t: TestTenant;
  let runner: ChannelRunner | undefined;
  let encoder: ReturnType<typeof pushEncoder> | undefined;
  const listeners: ChildProcess[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'mediaplane-restream-'));
  let logged = '';
  let rtmpPort = 0;

  beforeAll(async () => {
    rtmpPort = await freePort();
    p = await startPlatform(kind, {
      MEDIAPLANE_ROLE: 'api',
      MEDIAPLANE_RTMP_HOST: '127.0.0.1',
      MEDIAPLANE_RTMP_PORT: String(rtmpPort),
      MEDIAPLANE_LIVE_POLL_MS: '200',
      MEDIAPLANE_LIVE_SEGMENT_SECONDS: '1',
      MEDIAPLANE_RESTREAM_ALLOW_PRIVATE: 'true',
    });
    t = await p.createTenant();
  });
  afterAll(async () => {
    for (const l of listeners) l.kill('SIGKILL');
    await encoder?.stop();
    await runner?.close();
    await p?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('pushes to each destination, survives one dying and coming back, and a PATCH stops only the restream removed', async () => {
    // Everything the runner logs (info and up) is kept: no stream key may appear in it.
    const log = pino({ level: 'info' }, new Writable({ write: (c, _e, cb) => ((logged += c.toString()), cb()) }));
    runner = new ChannelRunner(p.ctx, liveMedia, { owner: `restream-test-${kind}`, log });
    runner.start();
    const [portA, portB] = [await freePort(), await freePort()];
    const [keyA, keyB] = ['secret-key-aaaa', 'secret-key-bbbb'];
    const restream = (id: string, port: number, streamKey: string) => ({
      protocol: 'RTMP',
      id,
      destination: `dest-${id}`,
      rtmpDestinations: [{ url: `rtmp://127.0.0.1:${port}/live`, streamKey }],
    });
    const created = await t.json('POST', '/live/v1/channels', {
      name: 'restreams',
      input: { inputLoss: { type: 'COLOR', color: '#1060C0' } },
      qualities: [{ resolution: '144p', frameRate: 25 }],
      restreams: [restream('a', portA, keyA), restream('b', portB, keyB)],
    });
    expect(created.status).toBe(200);
    const id = created.body.id as string;
    const fileA = join(dir, 'a.flv');
    const fileB = join(dir, 'b.flv');
    let a = rtmpReceiver(portA, fileA);
    const b = rtmpReceiver(portB, fileB);
    listeners.push(a.child, b.child);

    expect((await t.call('POST', `/live/v1/channels/${id}/start`)).status).toBe(200);
    const configuration = async () => (await t.json('GET', `/live/v1/channels/${id}/configuration`)).body;
    await until(configuration, (c) => c.status.value === 'On', { timeoutMs: 60_000, everyMs: 200 });
    // Before the encoder connects the destinations wait for input; they are not failing.
    expect((await configuration()).restreams.map((r: any) => r.rtmpDestinations[0].status)).toEqual(['WaitingForInput', 'WaitingForInput']);
    encoder = pushEncoder((await configuration()).input.transportPrimaryIngestUrl, { size: '160x90' });

    const statuses = async () => (await configuration()).restreams.map((r: any) => r.rtmpDestinations[0].status);
    await until(statuses, (s) => s[0] === 'Active' && s[1] === 'Active', { timeoutMs: 60_000, everyMs: 200 });
    await until(
      async () => [fileSize(fileA), fileSize(fileB)],
      ([x, y]) => x > 20_000 && y > 20_000,
      { timeoutMs: 60_000, everyMs: 200 },
    );
    for (const file of [fileA, fileB]) {
      const found = await probe(file);
      expect(found.video).toBe(true);
      expect(found.seconds).toBeGreaterThan(0);
    }
    const conf = await configuration();
    expect(conf.restreams[0].rtmpDestinations[0]).toMatchObject({ url: `rtmp://127.0.0.1:${portA}/live`, streamKey: '********' });

    // Destination A dies: B keeps receiving, A is retried and reported once.
    a.child.kill('SIGKILL');
    await a.exited;
    const bBefore = fileSize(fileB);
    await until(statuses, (s) => s[0] === 'Retrying', { timeoutMs: 60_000, everyMs: 200 });
    await until(
      async () => fileSize(fileB),
      (n) => n > bBefore + 20_000,
      { timeoutMs: 60_000, everyMs: 200 },
    );
    expect((await statuses())[1]).toBe('Active');
    const restreamEvents = async () =>
      (await p.ctx.db.select().from(events).where(eq(events.tenantId, t.id)).orderBy(asc(events.occuredAt), asc(events.id)))
        .filter((e) => e.type.startsWith('live.channel.restream.'))
        .map((e) => ({ type: e.type, ...(e.data as any) }));
    await until(restreamEvents, (e) => e.some((x) => x.type === 'live.channel.restream.failed'), { timeoutMs: 30_000, everyMs: 200 });
    const failedConf = await configuration();
    expect(failedConf.restreams[0].rtmpDestinations[0].lastError).toBeTruthy();
    expect(failedConf.restreams[0].rtmpDestinations[0].lastError).not.toContain(keyA);

    // A comes back: recovered, and it receives again.
    const fileA2 = join(dir, 'a2.flv');
    a = rtmpReceiver(portA, fileA2);
    listeners.push(a.child);
    await until(restreamEvents, (e) => e.some((x) => x.type === 'live.channel.restream.recovered'), { timeoutMs: 60_000, everyMs: 200 });
    await until(
      async () => fileSize(fileA2),
      (n) => n > 20_000,
      { timeoutMs: 60_000, everyMs: 200 },
    );
    expect((await probe(fileA2)).video).toBe(true);
    const seen = await restreamEvents();
    // Once per transition, however many retries it took.
    expect(seen.map((e) => [e.type, e.restreamId])).toEqual([
      ['live.channel.restream.failed', 'a'],
      ['live.channel.restream.recovered', 'a'],
    ]);
    expect(seen[0]).toMatchObject({ id, destination: 'dest-a', url: `rtmp://127.0.0.1:${portA}/live` });
    expect(JSON.stringify(seen)).not.toContain(keyA);

    // PATCH removes B: only B stops (its listener sees the publisher leave); A's connection is not restarted.
    const patched = await t.json('PATCH', `/live/v1/channels/${id}`, { restreams: [{ ...restream('a', portA, '********') }] });
    expect(patched.status).toBe(200);
    await b.exited;
    const aBefore = fileSize(fileA2);
    await until(
      async () => fileSize(fileA2),
      (n) => n > aBefore + 20_000,
      { timeoutMs: 60_000, everyMs: 200 },
    );
    expect(a.child.exitCode).toBeNull();
    const after = await configuration();
    expect(after.restreams.map((r: any) => [r.id, r.rtmpDestinations[0].status])).toEqual([['a', 'Active']]);

    // The encoder leaves: the destination waits for input (no failure); it sends again when the encoder is back.
    await encoder.stop();
    await until(statuses, (s) => s[0] === 'WaitingForInput', { timeoutMs: 60_000, everyMs: 200 });
    await a.exited;
    const fileA3 = join(dir, 'a3.flv');
    a = rtmpReceiver(portA, fileA3);
    listeners.push(a.child);
    encoder = pushEncoder((await configuration()).input.transportPrimaryIngestUrl, { size: '160x90' });
    await until(statuses, (s) => s[0] === 'Active', { timeoutMs: 60_000, everyMs: 200 });
    await until(
      async () => fileSize(fileA3),
      (n) => n > 20_000,
      { timeoutMs: 60_000, everyMs: 200 },
    );
    expect((await restreamEvents()).length).toBe(2);

    await runner.close();
    runner = undefined;
    const stats = await t.json('GET', `/live/v1/channels/${id}/stats?periodSeconds=60&aggregationFunction=Avg`);
    expect(stats.body.metrics.restreamsActive.data.some((d: any) => d.value > 0)).toBe(true);
    // Stream keys never reach the log, even in ffmpeg's arguments or errors.
    expect(logged).toContain('restream destination failed');
    expect(logged).not.toContain(keyA);
    expect(logged).not.toContain(keyB);
  });
});
