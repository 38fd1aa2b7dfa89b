import { asc, eq } from 'drizzle-orm';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { events } from '../src/db/events.ts';
import { runFfprobe } from '../src/media/ffmpeg.ts';
import { pushEncoder } from './helpers/live.ts';
import { describeOnDb, freshStorage, startPlatform, type TestPlatform, type TestStorage } from './helpers/platform.ts';
import { until } from './helpers/until.ts';
import { freePort } from './helpers/process.ts';

/**
 * An `ensureChannel` event on a real channel: scheduled, the platform stopped and started again on the same data
 * (the schedule is in the database, not in timers), then the channel starts on its own before the event's start, plays
 * what ffmpeg pushes over RTMP, and stops on its own after the event's end. On the embedded database, which reopens its
 * own directory: the scheduler's queries on both databases are test/live.events.test.ts's (ensureChannel included).
 */
const LEAD_SECONDS = 4;

describeOnDb('pglite', 'Live events on a running channel', (kind) => {
  let storage: TestStorage;
  let p: TestPlatform | undefined;
  let encoder: ReturnType<typeof pushEncoder> | undefined;
  let env: Record<string, string>;

  beforeAll(async () => {
    storage = await freshStorage(kind);
    env = {
      MEDIAPLANE_RTMP_HOST: '127.0.0.1',
      MEDIAPLANE_RTMP_PORT: String(await freePort()),
      MEDIAPLANE_LIVE_POLL_MS: '200',
      MEDIAPLANE_LIVE_SEGMENT_SECONDS: '1',
      MEDIAPLANE_LIVE_LEASE_SECONDS: '5',
      MEDIAPLANE_LIVE_EVENT_LEAD_SECONDS: String(LEAD_SECONDS),
    };
  });
  afterAll(async () => {
    await encoder?.stop();
    await p?.stop();
    await storage?.drop();
  });

  it('starts the channel before start after a restart, plays the encoder during the event, and stops it after end', async () => {
    p = await startPlatform(kind, env, storage);
    const first = await p.createTenant();
    const channelId = (
      await first.json('POST', '/live/v1/channels', {
        name: 'event driven',
        activationMode: 'EventBased',
        input: { inputLoss: { type: 'COLOR', color: '#1060C0' } },
        qualities: [{ resolution: '144p', frameRate: 25 }],
      })
    ).body.id as string;
    const start = new Date(Date.now() + 10_000);
    const end = new Date(start.getTime() + 6_000);
    const created = await first.json('POST', '/live/v1/events', {
      channelId,
      start: start.toISOString(),
      end: end.toISOString(),
      ensureChannel: true,
      title: 'show',
    });
    expect(created.status).toBe(200);
    const eventId = created.body.id as string;
    // Before its start an event has no video to take frames from.
    const early = await first.json('GET', `/streaming/v1/assets/${eventId}/images/frames`);
    expect([early.status, early.body.status?.code]).toEqual([409, 'frames_unavailable']);

    // Stopped and started again on the same data directory and database before anything was due.
    await p.stop();
    p = await startPlatform(kind, env, storage);
    const restartedBeforeLead = Date.now() < start.getTime() - LEAD_SECONDS * 1000;
    const t = p.client(first.id, first.name, first.key);
    const event = async () => (await t.json('GET', `/live/v1/events/${eventId}`)).body;
    const channel = async () => (await t.json('GET', `/live/v1/channels/${channelId}`)).body;
    // On a loaded machine the restart may take longer than the time left before start; the rest holds either way.
    if (Date.now() < start.getTime() - 500) expect((await event()).status).toBe('Scheduled');

    await until(
      async () => (await channel()).status,
      (s) => s === 'On',
      { timeoutMs: 60_000, everyMs: 200, what: 'the channel On' },
    );
    const conf = (await t.json('GET', `/live/v1/channels/${channelId}/configuration`)).body;
    encoder = pushEncoder((conf.input.transportPrimaryIngestUrl as string).replace('localhost', '127.0.0.1'), { size: '320x180' });
    await until(
      async () => (await channel()).internalStatus,
      (s) => s === 'InputConnected',
      { timeoutMs: 60_000, everyMs: 200, what: () => `the encoder connected (encoder: ${encoder?.stderr() || 'running'})` },
    );
    await until(
      async () => (await event()).status,
      (s) => s !== 'Scheduled',
      { timeoutMs: 30_000, everyMs: 200 },
    );

    // It plays: the HLS endpoint's master playlist leads to a media playlist with segments, published during the event.
    const hls = ((await channel()).endpoints as any[]).find((e) => e.format === 'HLS').url as string;
    const master = await (await fetch(hls)).text();
    const variant = new URL(
      master.split('\n').find((l) => l && !l.startsWith('#'))!,
      hls,
    ).toString();
    const playlist = await until(
      async () => await (await fetch(variant)).text(),
      (text) => (text.match(/^#EXTINF/gm) ?? []).length >= 2 && /#EXT-X-PROGRAM-DATE-TIME:(.+)/.test(text),
      { timeoutMs: 30_000, everyMs: 200 },
    );
    const lastSegment = playlist.trim().split('\n').pop()!;
    const segment = await fetch(new URL(lastSegment, variant));
    expect(segment.status).toBe(200);
    expect((await segment.arrayBuffer()).byteLength).toBeGreaterThan(0);

    // Start-over while it runs: the event's catch-up plays from its start.
    const catchup = ((await event()).catchup.endpoints as any[]).find((e) => e.format === 'HLS').url as string;
    const catchupMaster = await (await fetch(catchup)).text();
    const catchupVariant = new URL(
      catchupMaster.split('\n').find((l) => l && !l.startsWith('#'))!,
      catchup,
    ).toString();
    await until(
      async () => await (await fetch(catchupVariant)).text(),
      (text) => /^#EXTINF/m.test(text),
      {
        timeoutMs: 30_000,
        everyMs: 200,
        what: 'a catch-up segment',
      },
    );

    // Frames of live content (on one database: it is not the point): the channel's of what it plays now (named by their
    // take: taken again as it plays), the event's of its catch-up so far, each with a poster; another tenant has none.
    const frames = (id: string) =>
      until(
        () => t.json('GET', `/streaming/v1/assets/${id}/images/frames`),
        (r) => r.status !== 202,
        { timeoutMs: 60_000, everyMs: 500, what: `frames of ${id}` },
      );
    const other = kind === 'pglite' ? await p.createTenant() : undefined;
    if (other) {
      for (const id of [channelId, eventId]) {
        const live = await frames(id);
        expect(live.status, JSON.stringify(live.body)).toBe(200);
        expect(Object.keys(live.body)).toEqual(expect.arrayContaining(['frame_00001', 'poster']));
        // The event may be over by now (it lasts 6 s): then its frames are final.
        if (id === channelId) expect(live.body.poster.url).toMatch(/\/frames\/poster\.jpg\?v=\d+$/);
        const poster = await fetch(live.body.poster.url);
        expect([poster.status, poster.headers.get('content-type')]).toEqual([200, 'image/jpeg']);
        const probed = JSON.parse(await runFfprobe(['-of', 'json', '-show_streams', live.body.frame_00001.url])).streams[0];
        expect([probed.codec_name, probed.width]).toEqual(['mjpeg', 320]);
        expect((await other.json('GET', `/streaming/v1/assets/${id}/images/frames`)).status).toBe(404);
      }
    }

    await until(
      async () => (await event()).status,
      (s) => s === 'Finished',
      { timeoutMs: 30_000, everyMs: 200 },
    );
    await until(
      async () => (await channel()).status,
      (s) => s === 'Off',
      { timeoutMs: 60_000, everyMs: 200, what: 'the channel Off after end' },
    );

    // After end, the same address is a finished stream of the event: it ends, and lasts the event's time.
    expect(((await event()).catchup.endpoints as any[]).find((e) => e.format === 'HLS').url).toBe(catchup);
    const finished = await until(
      async () => await (await fetch(catchupVariant)).text(),
      (text) => text.includes('#EXT-X-ENDLIST'),
      {
        timeoutMs: 60_000,
        everyMs: 500,
        what: 'the catch-up playlist ended',
      },
    );
    // Finished and complete: the event's frames are taken again (the previous ones answer meanwhile), of all of it, and
    // stand (no take in their address).
    if (other) {
      const done = await until(
        () => t.json('GET', `/streaming/v1/assets/${eventId}/images/frames`),
        (r) => r.status !== 200 || !r.body.poster.url.includes('?v='),
        { timeoutMs: 60_000, everyMs: 500, what: 'final frames of the event' },
      );
      expect(done.status, JSON.stringify(done.body)).toBe(200);
      expect(done.body.poster.url).toMatch(/\/frames\/poster\.jpg$/);
      expect((await fetch(done.body.poster.url)).status).toBe(200);
    }
    const listed = [...finished.matchAll(/^#EXTINF:([\d.]+)/gm)].reduce((sum, m) => sum + Number(m[1]), 0);
    const probed = JSON.parse(await runFfprobe(['-of', 'json', '-show_entries', 'format=duration', catchup]));
    // It holds no more than the segments overlapping [start, end), and plays. Its total is not asserted from below: on a
    // CPU-starved machine the live encoder falls behind real time and the channel's timeline gets holes (seen here at
    // load 20-30 on PGlite: 1-2 s of a 6 s event missing; docs/decisions/live.md, "Runs on one timeline").
    const seconds = (end.getTime() - start.getTime()) / 1000;
    const firstAt = Date.parse(/#EXT-X-PROGRAM-DATE-TIME:(\S+)/.exec(finished)![1]!);
    expect(firstAt, finished).toBeGreaterThanOrEqual(start.getTime() - 1000);
    expect(Number(probed.format.duration)).toBeCloseTo(listed, 1);
    expect(listed, finished).toBeGreaterThan(0);
    expect(listed, finished).toBeLessThanOrEqual(seconds + 2);

    const log = (await p.ctx.db.select().from(events).where(eq(events.tenantId, t.id)).orderBy(asc(events.occuredAt), asc(events.id))).filter(
      (e) => [eventId, channelId].includes((e.data as any).id) && !e.type.includes('input') && !e.type.endsWith('.created'),
    );
    const types = log.map((e) => e.type);
    expect(types.filter((x) => x.startsWith('live.event.'))).toEqual(['live.event.live', 'live.event.finished']);
    expect(types.filter((x) => x.startsWith('live.channel.'))).toEqual([
      'live.channel.starting',
      'live.channel.on',
      'live.channel.stopping',
      'live.channel.off',
    ]);
    const when = (type: string) => log.find((e) => e.type === type)!.occuredAt.getTime();
    // Stopped after its end (the stop waits for the end plus a two-segment tail). When the platform was up in time it
    // started ahead of the event, and the lead time is long enough for the first segment to be out by start.
    expect(when('live.channel.stopping')).toBeGreaterThanOrEqual(end.getTime());
    if (restartedBeforeLead) {
      expect(when('live.channel.starting')).toBeLessThan(start.getTime());
      expect(when('live.channel.on')).toBeLessThanOrEqual(when('live.event.live'));
    }
  }, 180_000);
});
