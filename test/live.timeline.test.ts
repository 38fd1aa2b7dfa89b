import { createServer } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runFfprobe } from '../src/media/ffmpeg.ts';
import { rangeEndpoints, rangeSegments } from '../src/modules/live/timeline.ts';
import { pushRtmp } from './helpers/live.ts';
import { describeEachDb, startPlatform, type TestPlatform, type TestTenant } from './helpers/platform.ts';
import { until } from './helpers/until.ts';

/**
 * The channel's timeline: every published segment is a row; a range of it plays as one HLS stream, across an encoder
 * that drops and reconnects (one discontinuity, the slate in between), and segments past the retention go away.
 */
async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = createServer().listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

const duration = async (url: string) => Number(JSON.parse(await runFfprobe(['-of', 'json', '-show_entries', 'format=duration', url])).format.duration);

describeEachDb('Live timeline', (kind) => {
  let p: TestPlatform;
  let t: TestTenant;
  let encoder: ReturnType<typeof pushRtmp> | undefined;

  beforeAll(async () => {
    p = await startPlatform(kind, {
      MEDIAPLANE_RTMP_HOST: '127.0.0.1',
      MEDIAPLANE_RTMP_PORT: String(await freePort()),
      MEDIAPLANE_LIVE_POLL_MS: '200',
      MEDIAPLANE_LIVE_SEGMENT_SECONDS: '1',
      MEDIAPLANE_LIVE_RETENTION_SECONDS: '14',
    });
    t = await p.createTenant();
  });
  afterAll(async () => {
    await encoder?.stop();
    await p?.stop();
  });

  it('plays a range across an encoder reconnect as one stream, and prunes past the retention', async () => {
    const created = await t.json('POST', '/live/v1/channels', {
      name: 'timeline',
      input: { inputLoss: { type: 'COLOR', color: '#1060C0' } },
      qualities: [{ resolution: '144p', frameRate: 15 }],
    });
    const id = created.body.id as string;
    expect((await t.call('POST', `/live/v1/channels/${id}/start`)).status).toBe(200);
    const configuration = async () => (await t.json('GET', `/live/v1/channels/${id}/configuration`)).body;
    await until(configuration, (c) => c.status.value === 'On', { timeoutMs: 60_000, everyMs: 200 });
    const ingest = (await configuration()).input.transportPrimaryIngestUrl;
    const live = (await t.json('GET', `/live/v1/channels/${id}`)).body;
    expect(live.status).toBe('On');

    encoder = pushRtmp(ingest, { size: '160x90', rate: 15 });
    const connected = async () => (await t.json('GET', `/live/v1/channels/${id}`)).body.internalStatus;
    await until(connected, (s) => s === 'InputConnected', { timeoutMs: 60_000, everyMs: 200 });
    const start = new Date();
    await until(
      () => rangeSegments(p.ctx, t.id, id, start.getTime(), undefined, '144p'),
      (s) => s.length >= 2,
      { timeoutMs: 30_000, everyMs: 200 },
    );
    // The encoder drops: the slate fills in; it comes back: a new run.
    await encoder.stop();
    await until(connected, (s) => s === 'InputLost', { timeoutMs: 60_000, everyMs: 200 });
    encoder = pushRtmp(ingest, { size: '160x90', rate: 15 });
    await until(connected, (s) => s === 'InputConnected', { timeoutMs: 60_000, everyMs: 200 });
    const runsSince = async () => [...new Set((await rangeSegments(p.ctx, t.id, id, start.getTime(), undefined, '144p')).map((s) => s.run))];
    await until(runsSince, (runs) => runs.length >= 3, { timeoutMs: 60_000, everyMs: 200, what: 'three runs in the range (live, slate, live)' });
    const mid = await rangeSegments(p.ctx, t.id, id, start.getTime(), undefined, '144p');
    const end = new Date(mid.at(-1)!.startMs + 2000);

    // While the range runs, its playlist grows without an end; then it ends at `end`.
    const [endpoint] = await rangeEndpoints(p.ctx, t.id, id, start, end);
    expect(endpoint).toMatchObject({ format: 'HLS', accessType: 'Http', protection: 'None' });
    const variant = endpoint!.url.replace('master.m3u8', '144p.m3u8');
    const text = async () => (await fetch(variant)).text();
    await until(text, (s) => s.includes('#EXT-X-ENDLIST'), { timeoutMs: 30_000, everyMs: 300 });
    const playlist = await text();
    expect(playlist).toContain('#EXT-X-PLAYLIST-TYPE:EVENT');
    expect(playlist.split('#EXT-X-DISCONTINUITY\n').length - 1).toBeGreaterThanOrEqual(2);
    const seconds = await duration(endpoint!.url);
    const wanted = (end.getTime() - start.getTime()) / 1000;
    expect(Math.abs(seconds - wanted)).toBeLessThanOrEqual(1.5);

    // An open range (`now`) has no end tag.
    const [open] = await rangeEndpoints(p.ctx, t.id, id, start, undefined);
    expect(await (await fetch(open!.url.replace('master.m3u8', '144p.m3u8'))).text()).not.toContain('#EXT-X-ENDLIST');
    // Another tenant's channel is not there.
    expect((await fetch(endpoint!.url.replace(t.id, '00000000-0000-4000-8000-000000000000'))).status).toBe(404);

    // Past the retention, the rows and the files are gone.
    const first = mid[0]!;
    await until(
      () => rangeSegments(p.ctx, t.id, id, first.startMs, first.startMs + 1, '144p'),
      (s) => s.length === 0,
      { timeoutMs: 60_000, everyMs: 500 },
    );
    expect(await p.ctx.store.head(`tenants/${t.id}/live/${id}/${first.key}`)).toBeUndefined();
    await encoder.stop();
    await t.call('POST', `/live/v1/channels/${id}/stop`);
  });
});
