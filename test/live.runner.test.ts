import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { asc, eq } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import type { LiveInput, LiveMedia, LivePipeline, LivePipelineOptions, RtmpIngest, RtmpIngestOptions } from '../src/modules/live/media.ts';
import { ChannelRunner } from '../src/modules/live/runner.ts';
import { liveChannels } from '../src/modules/live/tables.ts';
import { events } from '../src/db/events.ts';
import { describeEachDb, startPlatform, type TestPlatform, type TestTenant } from './helpers/platform.ts';
import { until } from './helpers/until.ts';

/**
 * The channel runner against a stand-in media layer: what it records and when (statuses, events, leases, statistics,
 * the ingest's key check), without ffmpeg. test/live.e2e.test.ts runs the real media layer.
 */
class FakeIngest implements RtmpIngest {
  readonly port = 19350;
  readonly kicked: string[] = [];
  private readonly publishing = new Set<string>();
  constructor(readonly opts: RtmpIngestOptions) {}
  inputUrl(channelId: string) {
    return this.publishing.has(channelId) ? `rtmp://127.0.0.1:${this.port}/internal/${channelId}` : undefined;
  }
  /** An encoder connecting with `key` from `address`: refused, or publishing. */
  connect(key: string, address: string): string {
    const verdict = this.opts.authorize(key, address);
    if ('refused' in verdict) return `refused: ${verdict.refused}`;
    this.publishing.add(verdict.channelId);
    this.opts.onPublish(verdict.channelId);
    return verdict.channelId;
  }
  bytesReceived(channelId: string) {
    return this.publishing.has(channelId) ? 1000 : undefined;
  }
  disconnect(channelId: string) {
    if (this.publishing.delete(channelId)) this.opts.onUnpublish(channelId);
  }
  kick(channelId: string) {
    this.kicked.push(channelId);
    this.disconnect(channelId);
  }
  async close() {}
}

class FakePipeline implements LivePipeline {
  inputs: (LiveInput | null)[] = [];
  stopped = false;
  private segments = 0;
  private timer: NodeJS.Timeout | undefined;
  constructor(readonly opts: LivePipelineOptions) {}
  async start() {
    if (this.opts.channelId === failingChannel) throw new Error('ffmpeg exited with code 1');
    // A burst of segments, as a real pipeline makes over time: the runner writes `On` once, not per segment.
    // Like the real packager: a segment is reported once it and the playlists are published.
    const next = async () => {
      const n = ++this.segments;
      await this.opts.publish('master.m3u8', Buffer.from(`#EXTM3U\n#${n}\n`), 'application/vnd.apple.mpegurl');
      this.opts.onEvent({ type: 'segment', rendition: this.opts.renditions[0]?.name ?? 'audio', sequence: n, durationSeconds: 2 });
      if (!this.stopped) this.timer = setTimeout(() => void next(), 20);
    };
    this.timer = setTimeout(() => void next(), 20);
  }
  setInput(input: LiveInput | null) {
    this.inputs.push(input);
  }
  stats() {
    const connected = !!this.inputs.at(-1);
    return {
      inputConnected: connected,
      inputBitrateKbps: connected ? 2500 : 0,
      inputFrameRate: connected ? 30 : 0,
      droppedFrames: 0,
      segmentsWritten: this.segments,
      inputConnectedSeconds: 0,
    };
  }
  async stop() {
    clearTimeout(this.timer);
    this.stopped = true;
  }
}

let failingChannel = '';

function fakeMedia() {
  const pipelines = new Map<string, FakePipeline>();
  let ingest: FakeIngest | undefined;
  const media: LiveMedia = {
    startRtmpIngest: async (opts) => (ingest = new FakeIngest(opts)),
    createLivePipeline: (opts) => {
      const p = new FakePipeline(opts);
      pipelines.set(opts.channelId, p);
      return p;
    },
  };
  return { media, pipelines, ingest: () => ingest! };
}

describeEachDb('Live channel runner', (kind) => {
  let p: TestPlatform;
  let t: TestTenant;
  const runners: ChannelRunner[] = [];

  beforeAll(async () => {
    p = await startPlatform(kind, {
      MEDIAPLANE_ROLE: 'api',
      MEDIAPLANE_LIVE_POLL_MS: '100',
      MEDIAPLANE_LIVE_LEASE_SECONDS: '3',
      MEDIAPLANE_RTMP_PORT: '19350',
    });
    t = await p.createTenant();
    await p.admin('PATCH', `/admin/v1/tenants/${t.id}`, { channelsLimit: 100 });
  });
  // One test's live processes are gone before the next starts: each test knows which process may take its channels.
  afterEach(async () => {
    for (const r of runners.splice(0)) await r.close();
  });
  afterAll(() => p.stop());

  const runner = (owner: string, media: LiveMedia) => {
    const r = new ChannelRunner(p.ctx, media, { owner });
    runners.push(r);
    r.start();
    return r;
  };
  const status = async (id: string) => (await t.json('GET', `/live/v1/channels/${id}/status`)).body.status;
  const waitStatus = (id: string, wanted: string) =>
    until(
      () => status(id),
      (s) => s === wanted,
      { timeoutMs: 20_000, everyMs: 50 },
    );
  const eventTypes = async (id: string) =>
    (await p.ctx.db.select().from(events).where(eq(events.tenantId, t.id)).orderBy(asc(events.occuredAt), asc(events.id)))
      .filter((e) => (e.data as any).id === id)
      .map((e) => e.type);
  const create = async (body: object = {}) => {
    const res = await t.json('POST', '/live/v1/channels', { name: 'runner', input: { inputLoss: { type: 'COLOR', color: '#00FF00' } }, ...body });
    expect(res.status).toBe(200);
    return res.body.id as string;
  };
  const lease = async (id: string) => (await p.ctx.db.select({ owner: liveChannels.leaseOwner }).from(liveChannels).where(eq(liveChannels.id, id)))[0]?.owner;

  it('runs a started channel: On at the first segment, input connected and lost as events, key and CIDR checked at connect, Off after stop', async () => {
    const fake = fakeMedia();
    const r = runner('live-a', fake.media);
    const id = await create({
      qualities: [{ resolution: '1080p' }, { resolution: '360p', frameRate: 25 }],
      input: { whitelistCidr: '10.1.0.0/16', inputLoss: { type: 'COLOR', color: '#00ff00' } },
    });
    expect(await t.call('POST', `/live/v1/channels/${id}/start`).then((res) => res.status)).toBe(200);
    await waitStatus(id, 'On');
    expect(await lease(id)).toBe('live-a');
    const pipeline = fake.pipelines.get(id)!;
    expect(pipeline.opts.renditions.map((x) => [x.name, x.width, x.height, x.frameRate])).toEqual([
      ['1080p', 1920, 1080, 30],
      ['360p', 640, 360, 25],
    ]);
    expect(pipeline.opts.inputLoss).toEqual({ type: 'COLOR', color: '#00FF00' });
    expect(pipeline.opts.audioOnly).toBe(false);
    // What the pipeline publishes lands under the channel's prefix and plays from /media/live.
    const master = await fetch(`${p.baseUrl}/media/live/${t.id}/${id}/master.m3u8`);
    expect(master.status).toBe(200);
    expect(await master.text()).toMatch(/^#EXTM3U/);

    const key = (await t.json('GET', `/live/v1/channels/${id}/configuration`)).body.input.transportPrimaryIngestUrl.split('/').pop();
    const ingest = fake.ingest();
    expect(ingest.connect('wrong-key', '10.1.2.3')).toMatch(/^refused/);
    expect(ingest.connect(key, '192.0.2.1')).toMatch(/^refused: .*whitelistCidr/);
    expect(ingest.connect(key, '::ffff:10.1.2.3')).toBe(id);
    // An encoder crash (the media layer restarts it) shows in internalStatus and as an error event; status stays On.
    pipeline.opts.onEvent({ type: 'encoder.failed', message: 'ffmpeg exited with signal SIGSEGV' });
    await until(
      () => t.json('GET', `/live/v1/channels/${id}`),
      (r) => /^EncoderFailed: .*SIGSEGV/.test(r.body.internalStatus),
      { timeoutMs: 10_000, everyMs: 50 },
    );
    expect(await status(id)).toBe('On');
    pipeline.opts.onEvent({ type: 'encoder.recovered' });
    await until(
      () => t.json('GET', `/live/v1/channels/${id}`),
      (r) => r.body.internalStatus === 'InputConnected',
      { timeoutMs: 10_000, everyMs: 50 },
    );
    expect(pipeline.inputs.at(-1)).toMatchObject({ url: `rtmp://127.0.0.1:19350/internal/${id}` });
    expect(pipeline.inputs.at(-1)!.bytesReceived!()).toBe(1000);
    await until(
      () => eventTypes(id),
      (e) => e.includes('live.channel.input.connected'),
      { timeoutMs: 10_000, everyMs: 50 },
    );
    ingest.disconnect(id);
    expect(pipeline.inputs.at(-1)).toBeNull();
    await until(
      () => eventTypes(id),
      (e) => e.includes('live.channel.input.lost'),
      { timeoutMs: 10_000, everyMs: 50 },
    );
    expect((await t.json('GET', `/live/v1/channels/${id}`)).body.internalStatus).toBe('InputLost');

    // A rotated key: the connected encoder is dropped, the old key refused, the new one taken.
    expect(ingest.connect(key, '10.1.2.3')).toBe(id);
    const rotated = (await t.json('POST', `/live/v1/channels/${id}/stream-key/rotate`)).body.transportPrimaryIngestUrl.split('/').pop();
    await until(
      async () => ingest.kicked.includes(id),
      (v) => v,
      { timeoutMs: 10_000, everyMs: 50 },
    );
    expect(ingest.connect(key, '10.1.2.3')).toMatch(/^refused/);
    expect(ingest.connect(rotated, '10.1.2.3')).toBe(id);

    expect(await t.call('POST', `/live/v1/channels/${id}/stop`).then((res) => res.status)).toBe(200);
    await waitStatus(id, 'Off');
    expect(pipeline.stopped).toBe(true);
    expect(await lease(id)).toBeNull();
    expect(ingest.connect(rotated, '10.1.2.3')).toMatch(/^refused/);
    const types = await eventTypes(id);
    expect(types.filter((e) => !e.startsWith('live.channel.input') && e !== 'live.channel.updated')).toEqual([
      'live.channel.created',
      'live.channel.starting',
      'live.channel.on',
      'live.channel.error',
      'live.channel.stopping',
      'live.channel.off',
    ]);
    expect(types.filter((e) => e === 'live.channel.on')).toHaveLength(1);
    await r.close();

    // What the runner sampled is in the channel's statistics (written at close, and every 10 s while running).
    const stats = (await t.json('GET', `/live/v1/channels/${id}/stats?periodSeconds=3600&aggregationFunction=Sum`)).body.metrics;
    expect(stats.segmentsWritten.data.reduce((a: number, d: any) => a + d.value, 0)).toBe(pipeline.stats().segmentsWritten);
    expect(stats.inputBitrate.data.length).toBeGreaterThan(0);
    expect(Math.max(...stats.inputBitrate.data.map((d: any) => d.value))).toBeLessThanOrEqual(2500);
  });

  it('an audio channel gets no video ladder; a pulled input is set at start and looped', async () => {
    const fake = fakeMedia();
    runner('live-audio', fake.media);
    const id = await create({
      transmissionType: 'Audio',
      input: { type: 'MP4_FILE', mp4Sources: [{ url: 'http://127.0.0.1:9/loop.mp4', username: 'u', password: 'p@ss' }], inputLoss: { type: 'COLOR' } },
    });
    await t.call('POST', `/live/v1/channels/${id}/start`);
    // 127.0.0.1 is a loopback address: the address guard refuses it unless MEDIAPLANE_FETCH_ALLOW_PRIVATE is set.
    await waitStatus(id, 'Error');
    const ch = (await t.json('GET', `/live/v1/channels/${id}`)).body;
    expect(ch.internalStatus).toMatch(/loopback/);
    expect(await lease(id)).toBeNull();
    expect(await eventTypes(id)).toContain('live.channel.error');
    p.ctx.config.fetchAllowPrivate = true;
    try {
      await t.call('POST', `/live/v1/channels/${id}/start`);
      await waitStatus(id, 'On');
      const pipeline = fake.pipelines.get(id)!;
      expect(pipeline.opts.audioOnly).toBe(true);
      expect(pipeline.opts.renditions).toEqual([]);
      expect(pipeline.inputs[0]).toEqual({ url: 'http://u:p%40ss@127.0.0.1:9/loop.mp4', loop: true });
    } finally {
      p.ctx.config.fetchAllowPrivate = false;
    }
    await t.call('POST', `/live/v1/channels/${id}/stop`);
    await waitStatus(id, 'Off');
  });

  it('fetches the input-loss slate through the address guard and gives the pipeline its picture', async () => {
    const png = Buffer.from('89504e470d0a1a0a', 'hex');
    const server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'image/png' }).end(png));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const slate = `http://127.0.0.1:${(server.address() as AddressInfo).port}/slate`;
    const fake = fakeMedia();
    runner('live-slate', fake.media);
    try {
      const id = await create({ input: { inputLoss: { type: 'SLATE', imageSlateUri: slate } } });
      await t.call('POST', `/live/v1/channels/${id}/start`);
      // A loopback address: refused unless private addresses are allowed.
      await waitStatus(id, 'Error');
      expect((await t.json('GET', `/live/v1/channels/${id}`)).body.internalStatus).toMatch(/loopback/);
      p.ctx.config.fetchAllowPrivate = true;
      await t.call('POST', `/live/v1/channels/${id}/start`);
      await waitStatus(id, 'On');
      const loss = fake.pipelines.get(id)!.opts.inputLoss;
      expect(loss.type).toBe('SLATE');
      const imagePath = (loss as { imagePath: string }).imagePath;
      expect(imagePath).toMatch(/\.png$/);
      expect(readFileSync(imagePath)).toEqual(png);
      await t.call('POST', `/live/v1/channels/${id}/stop`);
      await waitStatus(id, 'Off');
    } finally {
      p.ctx.config.fetchAllowPrivate = false;
      server.close();
    }
  });

  it('a pipeline that cannot start turns the channel Error, and it can be started again', async () => {
    const fake = fakeMedia();
    runner('live-err', fake.media);
    const id = await create();
    failingChannel = id;
    await t.call('POST', `/live/v1/channels/${id}/start`);
    await waitStatus(id, 'Error');
    expect((await t.json('GET', `/live/v1/channels/${id}`)).body.internalStatus).toContain('ffmpeg exited with code 1');
    failingChannel = '';
    await t.call('POST', `/live/v1/channels/${id}/start`);
    await waitStatus(id, 'On');
    await t.call('POST', `/live/v1/channels/${id}/stop`);
    await waitStatus(id, 'Off');
  });

  it('a stop that comes while the channel is still starting (fetching its slate) leaves nothing running', async () => {
    let answered = false;
    const server = createServer((_req, res) =>
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.from('89504e470d0a1a0a', 'hex'));
        answered = true;
      }, 1500),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    p.ctx.config.fetchAllowPrivate = true;
    const fake = fakeMedia();
    runner('live-slow', fake.media);
    try {
      const id = await create({
        input: { inputLoss: { type: 'SLATE', imageSlateUri: `http://127.0.0.1:${(server.address() as AddressInfo).port}/slate.png` } },
      });
      await t.call('POST', `/live/v1/channels/${id}/start`);
      await until(
        () => lease(id),
        (o) => o === 'live-slow',
        { timeoutMs: 10_000, everyMs: 20 },
      );
      await t.call('POST', `/live/v1/channels/${id}/stop`);
      await waitStatus(id, 'Off');
      await until(
        async () => answered,
        (v) => v,
        { timeoutMs: 10_000, everyMs: 20 },
      );
      await new Promise((r) => setTimeout(r, 200));
      // The start went no further than the fetch, or its pipeline was stopped: no encoder is left running.
      const pipeline = fake.pipelines.get(id);
      expect(pipeline === undefined || pipeline.stopped).toBe(true);
      expect(await eventTypes(id)).not.toContain('live.channel.on');
    } finally {
      p.ctx.config.fetchAllowPrivate = false;
      server.close();
    }
  });

  it('another live process takes over a channel whose owner gave it back or died, and it stays On', async () => {
    const a = fakeMedia();
    const ra = runner('live-one', a.media);
    const id = await create();
    await t.call('POST', `/live/v1/channels/${id}/start`);
    await waitStatus(id, 'On');
    expect(await lease(id)).toBe('live-one');

    // A clean shutdown gives the lease back: the other process takes the channel at its next pass.
    await ra.close();
    expect(a.pipelines.get(id)!.stopped).toBe(true);
    const b = fakeMedia();
    runner('live-two', b.media);
    await until(
      () => lease(id),
      (o) => o === 'live-two',
      { timeoutMs: 10_000, everyMs: 50 },
    );
    await until(
      async () => b.pipelines.has(id),
      (v) => v,
      { timeoutMs: 10_000, everyMs: 50 },
    );
    expect(await status(id)).toBe('On');

    // An owner that died leaves its lease to run out (3 s here); then a live process takes the channel.
    const dead = new Date(Date.now() - 1000);
    await p.ctx.db.update(liveChannels).set({ leaseOwner: 'live-dead', leaseUntil: dead }).where(eq(liveChannels.id, id));
    await until(
      () => lease(id),
      (o) => o === 'live-two',
      { timeoutMs: 10_000, everyMs: 50 },
    );
    expect(await status(id)).toBe('On');
    expect((await eventTypes(id)).filter((e) => e === 'live.channel.on')).toHaveLength(1);

    // A channel left Stopping by a dead owner is finished by any live process.
    await p.ctx.db.update(liveChannels).set({ status: 'Stopping', leaseOwner: 'live-dead', leaseUntil: dead }).where(eq(liveChannels.id, id));
    await waitStatus(id, 'Off');
    expect((await eventTypes(id)).at(-1)).toBe('live.channel.off');
  });
});
