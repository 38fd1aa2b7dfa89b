import { eq } from 'drizzle-orm';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runFfprobe } from '../src/media/ffmpeg.ts';
import { rangeEndpoints, rangeSegments } from '../src/modules/live/timeline.ts';
import { signPlaybackToken } from '../src/modules/streaming/tokens.ts';
import { withToken } from '../src/platform/playback.ts';
import { recorderRecordings } from '../src/modules/recorder/tables.ts';
import { MASTER, MPD } from '../src/modules/recorder/storageKeys.ts';
import { recordingPrefix } from '../src/modules/recorder/storageKeys.ts';
import { launchBrowser, play, servePlayerPage } from './helpers/browser.ts';
import { pushEncoder } from './helpers/live.ts';
import { describeOnDb, startPlatform, type TestPlatform, type TestTenant } from './helpers/platform.ts';
import { PROCESS_START_TIMEOUT_MS, until } from './helpers/until.ts';
import { freePort } from './helpers/process.ts';

/**
 * Recordings of a real channel (ffmpeg pushing RTMP): a range that is running (the encoder drops and reconnects in it:
 * still one recording), one in the future and one in the past each play as a catch-up stream of the range's length;
 * the channel's own range playlist plays the same range; the archive plays after the channel's own segments are gone
 * (with a playback token until it is made public);
 * an MP4 output has the range's duration; expirations remove files; a channel that was off gives a clear error.
 * Headless Chromium plays a recording's catch-up and an event's catch-up with hls.js and with dash.js (the channel has
 * both endpoint types: its ranges have an MPD over the same segments, dynamic while running, static once over), and
 * dash.js plays the dynamic MPDs of a growing recording (one that asks for playback tokens: its stored MPD's clock is
 * the delivery's public one) and of a running range while they grow.
 */
const duration = async (url: string) => Number(JSON.parse(await runFfprobe(['-of', 'json', '-show_entries', 'format=duration', url])).format.duration);
const SEGMENT_S = 1;
const RUNNING_S = 6;

describeOnDb('postgres', 'Recorder end to end', (kind) => {
  let p: TestPlatform;
  let t: TestTenant;
  let encoder: ReturnType<typeof pushEncoder> | undefined;
  let browser: Browser | undefined;
  let page: Awaited<ReturnType<typeof servePlayerPage>> | undefined;

  beforeAll(async () => {
    p = await startPlatform(kind, {
      MEDIAPLANE_RTMP_HOST: '127.0.0.1',
      MEDIAPLANE_RTMP_PORT: String(await freePort()),
      MEDIAPLANE_LIVE_POLL_MS: '200',
      MEDIAPLANE_LIVE_SEGMENT_SECONDS: String(SEGMENT_S),
      MEDIAPLANE_LIVE_RETENTION_SECONDS: '40',
    });
    t = await p.createTenant();
    [browser, page] = await Promise.all([launchBrowser(), servePlayerPage()]);
  }, PROCESS_START_TIMEOUT_MS);
  afterAll(async () => {
    await browser?.close();
    await page?.close();
    await encoder?.stop();
    await p?.stop();
  });

  it('records running, future and past ranges, archives, transcodes and expires them', async () => {
    const channel = await t.json('POST', '/live/v1/channels', {
      name: 'recorded',
      input: { inputLoss: { type: 'COLOR', color: '#1060C0' } },
      qualities: [{ resolution: '144p', frameRate: 15 }],
    });
    const channelId = channel.body.id as string;
    // A channel that never runs: what is recorded of it is an error that says so.
    const off = (await t.json('POST', '/live/v1/channels', { name: 'off', input: { inputLoss: { type: 'COLOR', color: '#000000' } } })).body.id as string;
    expect((await t.call('POST', `/live/v1/channels/${channelId}/start`)).status).toBe(200);
    const configuration = async () => (await t.json('GET', `/live/v1/channels/${channelId}/configuration`)).body;
    await until(configuration, (c) => c.status.value === 'On', { timeoutMs: 60_000, everyMs: 200 });
    const ingest = (await configuration()).input.transportPrimaryIngestUrl as string;
    encoder = pushEncoder(ingest, { size: '160x90', rate: 15 });
    const internalStatus = async () => (await t.json('GET', `/live/v1/channels/${channelId}`)).body.internalStatus;
    await until(internalStatus, (s) => s === 'InputConnected', { timeoutMs: 60_000, everyMs: 200 });
    const get = async (id: string) => (await t.json('GET', `/cvr/v1/recordings/${id}`)).body;

    const t0 = Date.now() + 500;
    const at = (s: number) => new Date(t0 + s * 1000).toISOString();
    const create = async (body: object) => {
      const res = await t.json('POST', '/cvr/v1/recordings', body);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body.id as string;
    };
    const source = (start: number, end: number, id = channelId) => ({
      type: 'LiveChannel',
      liveChannelDetails: { channelId: id, start: at(start), end: at(end) },
    });
    const running = await create({
      source: source(0, RUNNING_S),
      catchup: { enabled: true },
      archive: { enabled: true, delaySeconds: 0 },
      output: { preset: 'mp4-h264-download' },
      title: 'running',
    });
    // Without an end: Live until deleted, long enough to play while it grows.
    const open = await create({ source: { type: 'LiveChannel', liveChannelDetails: { channelId, start: at(0) } }, catchup: { enabled: true }, title: 'open' });
    const future = await create({ source: source(RUNNING_S + 2, RUNNING_S + 6), catchup: { enabled: true }, title: 'future' });
    expect((await get(future)).status).toBe('Pending');
    // A past range of it is refused at once (it holds nothing); one that is not over yet turns Error once it is.
    const gone = await t.json('POST', '/cvr/v1/recordings', { source: { liveChannelDetails: { channelId: off, start: at(-6), end: at(-2) } } });
    expect([gone.status, gone.body.status?.code]).toEqual([400, 'range_not_retained']);
    // Its times from now, not t0: on a loaded machine the creates above may take longer than the range lasts.
    const fromNow = (s: number) => new Date(Date.now() + s * 1000).toISOString();
    const failed = await create({ source: { liveChannelDetails: { channelId: off, start: fromNow(-2), end: fromNow(3) } } });

    await until(
      () => get(running),
      (r) => r.status === 'Live',
      { timeoutMs: 30_000, everyMs: 200, what: 'the running recording goes Live' },
    );
    // While it runs, its catch-up address already plays (a growing EVENT playlist, a dynamic MPD).
    const live = await get(running);
    expect(live.catchup.endpoints.map((e: any) => [e.id, e.format, e.accessType])).toEqual([
      ['catchup-hls', 'HLS', 'Http'],
      ['catchup-dash', 'DASH', 'Http'],
    ]);
    await until(
      async () => (await fetch(live.catchup.endpoints[1].url)).text(),
      (mpd) => mpd.includes('type="dynamic"') && mpd.includes('<S '),
      { timeoutMs: 30_000, everyMs: 300, what: 'the running recording has a dynamic MPD' },
    );
    // The past range, recorded at once from the channel's retained segments: asked for as soon as it is over, while
    // the channel still holds it (its 40 s retention passes during the playback below on a loaded machine).
    await until(
      () => Date.now(),
      (now) => now > t0 + 5000,
      { timeoutMs: 30_000, what: 'the past range being over' },
    );
    const past = await create({ source: source(1, 5), catchup: { enabled: true }, expirationDate: new Date(Date.now() + 3600_000).toISOString() });
    // dash.js plays the dynamic MPDs of a growing recording and of a running range of the channel's timeline (an
    // event's catch-up while the event runs) past what they first listed: it refreshes them as they grow.
    const growing = await until(
      () => get(open),
      (r) => r.status === 'Live' && r.catchup.endpoints.length === 2,
      { timeoutMs: 30_000, everyMs: 200, what: 'the open recording goes Live' },
    );
    // The growing recording asks for playback tokens (its own settings): its stored MPD's clock must not need one.
    const signingKey = (await t.json('GET', '/streaming/v1/settings')).body.contentAcquisitionInfo.authorization.signingKey as string;
    expect((await t.json('PATCH', `/streaming/v1/assets/${open}/settings`, { tokenRequired: 'Enabled' })).status).toBe(200);
    const growingUrl = growing.catchup.endpoints[1].url as string;
    expect((await fetch(growingUrl)).status).toBe(401);
    const growingDash = async () => withToken(growingUrl, await signPlaybackToken(signingKey, open, 120));
    // A range from now: it lists a segment or two when the player first loads it, as the recording does.
    const rangeDash = async () =>
      (await rangeEndpoints(p.ctx, t.id, channelId, new Date(), new Date(Date.now() + 300_000))).find((e) => e.format === 'DASH')!.url;
    for (const [what, mpdUrl] of [
      ['token-protected growing recording DASH', growingDash],
      ['running range DASH', rangeDash],
    ] as const) {
      const url = await mpdUrl();
      const first = await until(
        async () => (await fetch(url)).text(),
        (mpd) => mpd.includes('type="dynamic"') && mpd.includes('<S '),
        { timeoutMs: 30_000, everyMs: 300, what: `${what}: a dynamic MPD` },
      );
      // Its clock answers a player that has no credentials (the way the scheme asks: a HEAD for http-head, else a GET).
      const [, scheme, clockUrl] = /<UTCTiming schemeIdUri="([^"]+)" value="([^"]+)"/.exec(first)!;
      if (!scheme!.includes(':direct:')) {
        const clock = await fetch(clockUrl!, { method: scheme!.includes(':http-head:') ? 'HEAD' : 'GET' });
        expect(clock.status, `${what}: ${scheme} ${clockUrl}`).toBe(200);
      }
      // The clock from the MPD's UTCTiming only (dash.js would otherwise fall back to the MPD response's Date).
      const playback = await play(browser!, page!.url, url, { player: 'dash', seconds: 30, untilAdvanced: 4, mpdClockOnly: true });
      const from = playback.times.find((x) => x > 0) ?? 0;
      console.log(`${what}: ${first.split('<S ').length - 1} segments listed first; playhead ${playback.times.map((x) => x.toFixed(2)).join(' ')}`);
      expect(playback.error, what).toBeUndefined();
      expect(playback.videoHeight, what).toBeGreaterThan(0);
      expect(playback.times.at(-1)! - from, what).toBeGreaterThanOrEqual(4);
      expect(await (await fetch(url)).text(), what).toContain('type="dynamic"');
    }
    expect((await t.call('DELETE', `/cvr/v1/recordings/${open}`)).status).toBe(200);
    // Deleted while the recorder copies it (a pass a second): checked below, once later passes have run.
    const openFiles = [MASTER, '144p.m3u8', MPD].map((f) => `${recordingPrefix(t.id, open)}media/${f}`);

    const available = (id: string) =>
      until(
        () => get(id),
        (r) => r.status === 'Available' || r.status === 'Error',
        { timeoutMs: 180_000, everyMs: 300 },
      );
    const rec = await available(running);
    expect(rec.status).toBe('Available');
    for (const key of openFiles) expect(await p.ctx.store.head(key), `${key} of the deleted recording`).toBeUndefined();
    const [pastRec, futureRec] = await Promise.all([available(past), available(future)]);
    const catchup = rec.catchup.endpoints[0].url as string;
    // The channel's own range playlist (event catch-up) plays the same range.
    const [range] = await rangeEndpoints(p.ctx, t.id, channelId, new Date(t0), new Date(t0 + RUNNING_S * 1000));
    expect(Math.abs((await duration(range!.url)) - (await duration(catchup)))).toBeLessThan(0.5);
    expect((await fetch(range!.url.replace(t.id, '0190b0a0-0000-7000-8000-0000000000ad'))).status).toBe(404);
    for (const [r, seconds] of [
      [rec, RUNNING_S],
      [pastRec, 4],
      [futureRec, 4],
    ] as const) {
      expect(r.status).toBe('Available');
      // Every segment that overlaps the range: at most one segment more at each end.
      const played = await duration(r.catchup.endpoints[0].url);
      expect(played).toBeGreaterThanOrEqual(seconds - 0.2);
      expect(played).toBeLessThanOrEqual(seconds + 2 * SEGMENT_S + 0.2);
      expect(Math.abs(r.durationMilliseconds / 1000 - played)).toBeLessThan(0.5);
    }
    // An event over the latest range (the channel's own segments of it outlive the players by the most): its catch-up
    // lists the range's HLS and DASH addresses.
    const event = await t.json('POST', '/live/v1/events', { channelId, start: at(RUNNING_S + 2), end: at(RUNNING_S + 6), title: 'event' });
    expect(event.status, JSON.stringify(event.body)).toBe(200);
    const eventCatchup = (await t.json('GET', `/live/v1/events/${event.body.id}`)).body.catchup.endpoints as any[];
    expect(eventCatchup.map((e) => e.format)).toEqual(['HLS', 'DASH']);
    expect(eventCatchup[1].url).toBe(eventCatchup[0].url.replace('master.m3u8', 'manifest.mpd'));
    expect(eventCatchup[1].url).toContain(`/range/${t0 + (RUNNING_S + 2) * 1000}-${t0 + (RUNNING_S + 6) * 1000}/`);
    const recMpd = await (await fetch(rec.catchup.endpoints[1].url)).text();
    expect(recMpd).toContain('type="static"');
    expect(await (await fetch(eventCatchup[1].url)).text()).toContain('type="static"');
    // The MPDs are as long as the HLS playlists of the same segments.
    expect(Math.abs((await duration(rec.catchup.endpoints[1].url)) - (await duration(catchup)))).toBeLessThan(0.5);
    expect(Math.abs((await duration(eventCatchup[1].url)) - (await duration(eventCatchup[0].url)))).toBeLessThan(0.5);
    // Both players play both catch-ups: the recording's copy and the event's range of the channel's timeline.
    for (const [what, url, player] of [
      ['event HLS', eventCatchup[0].url, 'hls'],
      ['event DASH', eventCatchup[1].url, 'dash'],
      ['recording HLS', catchup, 'hls'],
      ['recording DASH', rec.catchup.endpoints[1].url, 'dash'],
    ] as const) {
      // Until the playhead has moved a second (a loaded machine may take longer than that to serve the first segments).
      const playback = await play(browser!, page!.url, url, { player, seconds: 10, untilAdvanced: 1 });
      console.log(`${what}: playhead ${playback.times.map((x) => x.toFixed(2)).join(' ')} (${playback.videoWidth}x${playback.videoHeight})`);
      expect(playback.error, what).toBeUndefined();
      expect(playback.videoHeight, what).toBeGreaterThan(0);
      expect(playback.times.at(-1)!, what).toBeGreaterThan(playback.times[0]!);
    }
    // The streaming catalogue's frames of the recording: stills of its recorded video, and a poster.
    const frames = await until(
      () => t.json('GET', `/streaming/v1/assets/${running}/images/frames`),
      (r) => r.status === 200,
      { timeoutMs: 60_000, everyMs: 500, what: 'frames of the recording' },
    );
    // One still every 10 s from 0 s, and the poster.
    expect(Object.keys(frames.body).sort()).toEqual([...Array.from({ length: Math.ceil(RUNNING_S / 10) }, (_, i) => `frame_0000${i + 1}`), 'poster']);
    const poster = await fetch(frames.body.poster.url);
    expect(poster.status).toBe(200);
    expect(poster.headers.get('content-type')).toBe('image/jpeg');
    expect((await poster.arrayBuffer()).byteLength).toBeGreaterThan(1000);
    const failedRec = await until(
      () => get(failed),
      (r) => r.status === 'Error',
      { timeoutMs: 30_000, everyMs: 300 },
    );
    expect(failedRec.errorMessage).toMatch(/channel produced no output during the range/);

    // The encoder drops and comes back: the slate fills in; a recording across it is one, with a discontinuity at each
    // change of run (ranges taken from the timeline itself: on a loaded machine the encoder lags the wall clock).
    // From a little before the drop (what came long before may be past the 40 s retention by now).
    const since = Date.now() - 5000;
    await encoder.stop();
    await until(internalStatus, (s) => s === 'InputLost', { timeoutMs: 60_000, everyMs: 200 });
    const runs = async () => {
      const rows = await rangeSegments(p.ctx, t.id, channelId, since, undefined, '144p');
      return [...new Set(rows.map((s) => s.run))].map((run) => rows.filter((s) => s.run === run));
    };
    // The encoder comes back once the slate is out (on a loaded machine a slate run can take longer to start than a
    // reconnect, and is then ended before its first segment: no slate on the timeline to record across).
    await until(runs, (r) => r.length >= 2, { timeoutMs: 60_000, everyMs: 300, what: 'a slate segment' });
    encoder = pushEncoder(ingest, { size: '160x90', rate: 15 });
    await until(internalStatus, (s) => s === 'InputConnected', { timeoutMs: 60_000, everyMs: 200 });
    const [first, , third] = await until(runs, (r) => r.length >= 3 && r[2]!.length >= 2, { timeoutMs: 60_000, everyMs: 300, what: 'live, slate, live' });
    const across = await create({
      source: {
        liveChannelDetails: { channelId, start: new Date(first!.at(-1)!.startMs - 1000).toISOString(), end: new Date(third![0]!.startMs + 1500).toISOString() },
      },
      catchup: { enabled: true },
    });
    const acrossRec = await available(across);
    expect(acrossRec.status).toBe('Available');
    const acrossUrl = acrossRec.catchup.endpoints[0].url as string;
    const variant = await (await fetch(acrossUrl.replace('master.m3u8', '144p.m3u8'))).text();
    expect(variant.split('#EXT-X-DISCONTINUITY\n').length - 1).toBeGreaterThanOrEqual(2);
    expect(variant).toContain('#EXT-X-ENDLIST');
    // It plays (ffprobe's duration of an HLS stream with discontinuities is not the sum of its segments: not compared).
    expect(await duration(acrossUrl)).toBeGreaterThan(0);

    // The MP4 output: the range's duration.
    const withOutput = await until(
      () => get(running),
      (r) => ['Available', 'Error'].includes(r.outputs[0]?.status),
      { timeoutMs: 90_000, everyMs: 500 },
    );
    expect(withOutput.outputs[0].status, withOutput.outputs[0].errorMessage).toBe('Available');
    const mp4 = withOutput.outputs[0].endpoints.find((e: any) => e.format === 'MP4');
    expect(Math.abs((await duration(mp4.url)) - rec.durationMilliseconds / 1000)).toBeLessThan(0.5);
    expect((await t.json('GET', `/cvr/v1/recordings/${running}/outputs/${withOutput.outputs[0].id}/progress`)).body).toEqual({ progressPercent: 100 });

    // The archive plays after the channel's own segments of the range are gone (retention 40 s).
    const archived = await until(
      () => get(running),
      (r) => r.archive.status === 'Available',
      { timeoutMs: 30_000, everyMs: 300 },
    );
    expect(archived.archive.archivisationCompletedDate).toBeTruthy();
    // Made due here rather than 40 s after the range: nothing below needs the channel's own segments, and the timeline
    // prunes what is past the retention as it is now.
    p.ctx.config.live.retentionSeconds = 5;
    await until(
      () => rangeSegments(p.ctx, t.id, channelId, t0, t0 + RUNNING_S * 1000),
      (s) => s.length === 0,
      { timeoutMs: 60_000, everyMs: 500, what: "the channel's segments of the range are pruned" },
    );
    // Not `archive.public`: it plays with a playback token for the recording (the tenant's signing key), only.
    const archiveUrl = archived.archive.endpoints[0].url as string;
    expect((await fetch(archiveUrl)).status).toBe(401);
    expect((await fetch(withToken(archiveUrl, await signPlaybackToken(signingKey, past, 60)))).status).toBe(403);
    const archivedSeconds = await duration(withToken(archiveUrl, await signPlaybackToken(signingKey, running, 60)));
    expect(Math.abs(archivedSeconds - rec.durationMilliseconds / 1000)).toBeLessThan(0.5);
    // Made public: no token needed (the catch-up copy never needed one: the tenant does not require tokens).
    expect((await t.json('PATCH', `/cvr/v1/recordings/${running}`, { archive: { public: true } })).status).toBe(200);
    await until(
      async () => (await fetch(archiveUrl)).status,
      (s) => s === 200,
      { timeoutMs: 10_000, everyMs: 300, what: 'the public archive plays without a token' },
    );

    // The past recording expired (made due here rather than in an hour): gone, with its files.
    await p.ctx.db
      .update(recorderRecordings)
      .set({ expirationDate: new Date(Date.now() - 1000) })
      .where(eq(recorderRecordings.id, past));
    await until(
      async () => (await t.call('GET', `/cvr/v1/recordings/${past}`)).status,
      (s) => s === 404,
      { timeoutMs: 30_000, everyMs: 500 },
    );
    // The row goes first (in the transaction with its event), the files right after it.
    await until(
      () => p.ctx.store.head(`tenants/${t.id}/recordings/${past}/media/master.m3u8`),
      (head) => head === undefined,
      { timeoutMs: 10_000, everyMs: 200, what: "the expired recording's files are removed" },
    );

    // The catch-up address stops at its expiration time (made due here rather than in 14 days).
    const catchupUrl = futureRec.catchup.endpoints[0].url as string;
    expect((await fetch(catchupUrl)).status).toBe(200);
    await p.ctx.db
      .update(recorderRecordings)
      .set({ catchupExpirationTime: new Date(Date.now() - 1000) })
      .where(eq(recorderRecordings.id, future));
    expect((await fetch(catchupUrl)).status).toBe(404);
    expect((await get(future)).catchup.endpoints).toEqual([]);
    await encoder.stop();
  }, 480_000);
});
