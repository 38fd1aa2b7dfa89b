import { asc, eq } from 'drizzle-orm';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { events } from '../src/db/events.ts';
import { pushEncoder } from './helpers/live.ts';
import { describeEachDb, startPlatform, type TestPlatform, type TestTenant } from './helpers/platform.ts';
import { freePort } from './helpers/process.ts';
import { PROCESS_START_TIMEOUT_MS, until } from './helpers/until.ts';

/**
 * A channel's `autoRecord` (docs/decisions/recorder.md, "Automatic recording"): a real encoder (ffmpeg pushing RTMP)
 * in two runs of the channel, the first with an encoder drop shorter than the reconnect window, gives exactly two
 * recordings, one per session, each titled by the channel and the time, Live with a growing catch-up while its session
 * is on air, then Available with its archive and output, and a catch-up as long as its session; bad bodies are refused
 * in the one error shape; the configuration answer shows the setting.
 */
const SEGMENT_S = 1;
const RECONNECT_S = 6;

/** The duration of an HLS media playlist (the sum of its EXTINFs). */
const playlistSeconds = (text: string) =>
  text
    .split('\n')
    .filter((l) => l.startsWith('#EXTINF:'))
    .reduce((a, l) => a + Number.parseFloat(l.slice(8)), 0);

describeEachDb('Recorder: automatic recording of live sessions', (kind) => {
  let p: TestPlatform;
  let t: TestTenant;
  let encoder: ReturnType<typeof pushEncoder> | undefined;

  beforeAll(async () => {
    p = await startPlatform(kind, {
      MEDIAPLANE_RTMP_HOST: '127.0.0.1',
      MEDIAPLANE_RTMP_PORT: String(await freePort()),
      MEDIAPLANE_LIVE_POLL_MS: '200',
      MEDIAPLANE_LIVE_SEGMENT_SECONDS: String(SEGMENT_S),
      MEDIAPLANE_LIVE_RETENTION_SECONDS: '120',
      MEDIAPLANE_AUTORECORD_RECONNECT_SECONDS: String(RECONNECT_S),
    });
    t = await p.createTenant();
  }, PROCESS_START_TIMEOUT_MS);
  afterAll(async () => {
    await encoder?.stop();
    await p?.stop();
  });

  const input = { inputLoss: { type: 'COLOR', color: '#1060C0' } };

  it('refuses bad autoRecord bodies and shows the setting in the configuration', async () => {
    const bad = async (autoRecord: unknown, method = 'POST', path = '/live/v1/channels') => {
      const res = await t.json(method, path, method === 'POST' ? { name: 'bad', input, autoRecord } : { autoRecord });
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(Object.keys(res.body)).toEqual(['status', 'errors']);
      return [res.body.status.code, res.body.errors.map((e: { field: string }) => e.field)];
    };
    const past = new Date(Date.now() - 60_000).toISOString();
    expect((await bad({ enabled: 'yes' }))[0]).toBe('validation_failed');
    expect((await bad({ enabled: true, archive: { delaySeconds: -1 } }))[0]).toBe('validation_failed');
    expect((await bad({ enabled: true, outputs: [{}] }))[0]).toBe('validation_failed');
    expect((await bad({ enabled: true, recordings: 2 }))[0]).toBe('validation_failed');
    expect(await bad({ enabled: true, outputs: [{ preset: 'mp4-h264-download' }, { preset: 'no-such-preset' }] })).toEqual([
      'preset_not_found',
      ['autoRecord.outputs[1].preset'],
    ]);
    expect(
      await bad({ enabled: true, archive: { enabled: true, expirationDate: past }, outputs: [{ preset: 'mp4-h264-download', expirationDate: past }] }),
    ).toEqual(['validation_failed', ['autoRecord.archive.expirationDate', 'autoRecord.outputs[0].expirationDate']]);

    const expires = new Date(Date.now() + 86400_000).toISOString();
    const created = await t.json('POST', '/live/v1/channels', {
      name: 'configured',
      input,
      autoRecord: { enabled: true, archive: { enabled: true, delaySeconds: 30, expirationDate: expires }, outputs: [{ preset: 'mp4-h264-download' }] },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const id = created.body.id as string;
    const configured = async () => (await t.json('GET', `/live/v1/channels/${id}/configuration`)).body.autoRecord;
    expect(await configured()).toEqual({
      enabled: true,
      archive: { enabled: true, delaySeconds: 30, public: false, expirationDate: expires },
      outputs: [{ preset: 'mp4-h264-download', expirationDate: null }],
    });
    // An update replaces the fields it gives and keeps the others.
    expect((await t.json('PATCH', `/live/v1/channels/${id}`, { autoRecord: { enabled: false } })).status).toBe(200);
    expect(await configured()).toMatchObject({ enabled: false, archive: { delaySeconds: 30 }, outputs: [{ preset: 'mp4-h264-download' }] });
    expect((await t.json('PATCH', `/live/v1/channels/${id}`, { autoRecord: { outputs: [] } })).status).toBe(200);
    expect((await configured()).outputs).toEqual([]);
    expect(await bad({ outputs: [{ preset: 'nope' }] }, 'PATCH', `/live/v1/channels/${id}`)).toEqual(['preset_not_found', ['autoRecord.outputs[0].preset']]);
    // A channel created without it has it off.
    const plain = (await t.json('POST', '/live/v1/channels', { name: 'plain', input })).body.id as string;
    expect((await t.json('GET', `/live/v1/channels/${plain}/configuration`)).body.autoRecord).toEqual({
      enabled: false,
      archive: { enabled: false, delaySeconds: 0, public: false, expirationDate: null },
      outputs: [],
    });
  });

  it('records each on-air session once, an encoder drop inside the reconnect window included', async () => {
    const name = 'Morning show';
    const created = await t.json('POST', '/live/v1/channels', {
      name,
      input,
      qualities: [{ resolution: '144p', frameRate: 15 }],
      autoRecord: { enabled: true, archive: { enabled: true, delaySeconds: 0 }, outputs: [{ preset: 'mp4-h264-download' }] },
    });
    expect(created.status).toBe(200);
    const channelId = created.body.id as string;
    const configuration = async () => (await t.json('GET', `/live/v1/channels/${channelId}/configuration`)).body;
    const internalStatus = async () => (await t.json('GET', `/live/v1/channels/${channelId}`)).body.internalStatus;
    const recordings = async () =>
      ((await t.json('GET', `/cvr/v1/recordings?channelId=${channelId}&limit=10`)).body.items as any[]).sort(
        (x, y) => Date.parse(x.createDate) - Date.parse(y.createDate),
      );
    const get = async (id: string) => (await t.json('GET', `/cvr/v1/recordings/${id}`)).body;
    const startChannel = async () => {
      expect((await t.call('POST', `/live/v1/channels/${channelId}/start`)).status).toBe(200);
      await until(configuration, (c) => c.status.value === 'On', { timeoutMs: 60_000, everyMs: 200, what: 'the channel is On' });
      return (await configuration()).input.transportPrimaryIngestUrl as string;
    };
    const stopChannel = async () => {
      expect((await t.call('POST', `/live/v1/channels/${channelId}/stop`)).status).toBe(200);
      await until(configuration, (c) => c.status.value === 'Off', { timeoutMs: 60_000, everyMs: 200, what: 'the channel is Off' });
    };
    /** Pushes for `seconds` once connected; answers when it connected and when it was stopped (wall clock). */
    const push = async (ingest: string, seconds: number) => {
      encoder = pushEncoder(ingest, { size: '160x90', rate: 15 });
      await until(internalStatus, (s) => s === 'InputConnected', { timeoutMs: 60_000, everyMs: 100, what: 'the encoder is connected' });
      const connected = Date.now();
      await new Promise((r) => setTimeout(r, seconds * 1000));
      return { connected, stop: async () => (await encoder!.stop(), Date.now()) };
    };
    const sessionOf = (r: any) => (Date.parse(r.source.liveChannelDetails.end) - Date.parse(r.source.liveChannelDetails.start)) / 1000;
    const catchupSeconds = async (r: any) => {
      const master = r.catchup.endpoints.find((e: any) => e.format === 'HLS').url as string;
      const text = await (await fetch(master)).text();
      const variants = text.split('\n').filter((l) => l && !l.startsWith('#'));
      const audio = /TYPE=AUDIO[^\n]*URI="([^"]+)"/.exec(text)?.[1];
      return Promise.all([...variants, ...(audio ? [audio] : [])].map(async (v) => playlistSeconds(await (await fetch(new URL(v, master))).text())));
    };

    // Run 1: a session with an encoder drop shorter than the reconnect window: one recording.
    let ingest = await startChannel();
    const a = await push(ingest, 4);
    const first = await until(recordings, (rs) => rs.length === 1 && rs[0].status === 'Live', {
      timeoutMs: 30_000,
      everyMs: 200,
      what: 'the session has a Live recording',
    });
    const one = first[0].id as string;
    // Catch-up while it runs: a growing EVENT playlist.
    const running = await get(one);
    expect(running.title).toMatch(new RegExp(`^${name} \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d UTC$`));
    expect(running.source.liveChannelDetails.end).toBeNull();
    expect(running.catchup.enabled).toBe(true);
    expect(running.outputs.map((o: any) => [o.preset, o.status])).toEqual([['mp4-h264-download', 'Pending']]);
    await a.stop();
    await until(internalStatus, (s) => s === 'InputLost', { timeoutMs: 30_000, everyMs: 100, what: 'the drop is seen' });
    await new Promise((r) => setTimeout(r, 1000));
    const b = await push(ingest, 4);
    const bStopped = await b.stop();
    const wall1 = (bStopped - a.connected) / 1000;
    // Over once the encoder has been gone for the window; the channel still runs (the input-loss picture). Its archive
    // and output are made while the channel's second run goes on (awaited below).
    const over1 = await until(
      () => get(one),
      (r) => r.status === 'Available' || r.status === 'Error',
      { timeoutMs: 60_000, everyMs: 300, what: 'the first recording is made' },
    );
    expect(over1.status).toBe('Available');
    expect((await configuration()).status.value).toBe('On');
    // The drop did not split the session: one recording, spanning both pushes.
    expect((await recordings()).map((r) => r.id)).toEqual([one]);
    await stopChannel();

    // Run 2: the session ends with the channel, the encoder still pushing.
    ingest = await startChannel();
    const c = await push(ingest, 5);
    const wall2 = (Date.now() - c.connected) / 1000;
    await stopChannel();
    await c.stop();
    const done1 = await until(
      () => get(one),
      (r) => r.status === 'Available' && r.archive.status === 'Available' && r.outputs[0]?.status === 'Available',
      { timeoutMs: 60_000, everyMs: 300, what: 'the first recording, its archive and output are made' },
    );
    const all = await until(recordings, (rs) => rs.length === 2 && rs.every((r) => r.status === 'Available'), {
      timeoutMs: 60_000,
      everyMs: 300,
      what: 'the second recording is Available',
    });
    expect(all[0].id).toBe(one);
    expect((await recordings()).length).toBe(2);
    const done2 = await until(
      () => get(all[1].id),
      (r) => r.archive.status === 'Available' && r.outputs[0]?.status === 'Available',
      { timeoutMs: 60_000, everyMs: 300, what: "the second recording's archive and output are made" },
    );

    // Run 1 switches three times (to the input, to the input-loss picture, back), run 2 once.
    for (const [r, wall, switches] of [
      [done1, wall1, 3],
      [done2, wall2, 1],
    ] as const) {
      const session = sessionOf(r);
      const tracks = await catchupSeconds(r);
      console.log(
        `session ${session.toFixed(2)} s, pushed ${wall.toFixed(2)} s, catch-up ${tracks.map((d) => d.toFixed(2)).join(', ')} s, duration ${r.durationMilliseconds} ms`,
      );
      // The catch-up is the session, to a segment (each track's segments cut the range's ends).
      for (const d of tracks) expect(Math.abs(d - session)).toBeLessThanOrEqual(SEGMENT_S + 0.05);
      expect(Math.abs(r.durationMilliseconds / 1000 - session)).toBeLessThanOrEqual(SEGMENT_S + 0.05);
      // The session is what the encoder pushed, less what the channel's timeline loses at each switch of its encoder run
      // (the new run's start-up: 0.3-2 s, docs/decisions/live.md "Runs on one timeline").
      expect(session).toBeGreaterThan(wall - switches * 2 - SEGMENT_S);
      expect(session).toBeLessThan(wall + SEGMENT_S + 0.5);
      expect(r.archive.endpoints.length).toBeGreaterThan(0);
    }

    // The Recorder's usual events, for each recording.
    const log = await p.ctx.db.select().from(events).where(eq(events.tenantId, t.id)).orderBy(asc(events.occuredAt), asc(events.id));
    for (const r of [done1, done2]) {
      const types = log.filter((e) => (e.data as any).id === r.id).map((e) => e.type);
      expect(types).toEqual(
        expect.arrayContaining(['recorder.recording.created', 'recorder.recording.live', 'recorder.recording.available', 'recorder.archive.available']),
      );
    }
    expect(log.filter((e) => e.type === 'recorder.recording.created').length).toBe(2);
    // A hang guard (about 45 s on an idle machine): two channel runs, an MP4 output and an archive each.
  }, 240_000);
});
