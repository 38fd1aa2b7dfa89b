import { afterAll, beforeAll, expect, it } from 'vitest';
import { runFfprobe } from '../src/media/ffmpeg.ts';
import { mpdDurationMs } from '../src/media/finish.ts';
import { rangeSegments, type TimelineSegment } from '../src/modules/live/timeline.ts';
import { recordedSegments } from '../src/modules/recorder/record.ts';
import { PRESETS } from '../src/modules/transcoder/presets.ts';
import { pushEncoder } from './helpers/live.ts';
import { describeOnDb, startPlatform, type TestPlatform, type TestTenant } from './helpers/platform.ts';
import { freePort } from './helpers/process.ts';
import { until } from './helpers/until.ts';

/**
 * A recording's outputs are as long as the recording, whatever the range's offset on the channel's timeline and
 * whatever changes of run (the input-loss colour, then an encoder; the encoder dropping and coming back) are in it or
 * before it: a past range (recorded at once), a running one (created while it runs) and a future one, each with a run
 * change inside and without one (in the channel's first run, or after a run change). Every output preset is made of a
 * range across a run change; the others get the MP4 download. Each output's durations: ffprobe's of MP4 files (each
 * track from 0 to its recorded length), HLS playlists' (per track) and ffprobe's, an MPD's own. A range's run files keep the channel's decode times: ffmpeg's concat of
 * them once put each next run seconds later, and the encode filled the gap with the last frame.
 */
const FPS = 15;
/** One frame: what a duration may differ by. */
const FRAME_S = 1 / FPS;
const SEGMENT_S = 1;

interface Probed {
  format: { duration: string };
  streams: { codec_type: string; start_time: string; duration: string }[];
}
const ffprobe = async (url: string): Promise<Probed> =>
  JSON.parse(await runFfprobe(['-of', 'json', '-show_entries', 'format=duration:stream=codec_type,start_time,duration', url]));

/** The durations of an HLS master playlist's media playlists (their EXTINFs: what players play), video first. */
async function playlistDurations(masterUrl: string): Promise<{ kind: 'video' | 'audio'; seconds: number }[]> {
  const master = await (await fetch(masterUrl)).text();
  const audio = [...master.matchAll(/TYPE=AUDIO[^\n]*URI="([^"]+)"/g)].map((m) => m[1]!);
  const video = master.split('\n').filter((l) => l && !l.startsWith('#'));
  const seconds = async (uri: string) => {
    const body = await (await fetch(new URL(uri.trim(), masterUrl))).text();
    return [...body.matchAll(/#EXTINF:([\d.]+)/g)].reduce((a, m) => a + Number(m[1]), 0);
  };
  // An audio-only output lists its audio as variants.
  const videoKind = audio.length === 0 && /CODECS="mp4a[^"]*"/.test(master) ? 'audio' : 'video';
  return [
    ...(await Promise.all(video.map(async (u) => ({ kind: videoKind, seconds: await seconds(u) }) as const))),
    ...(await Promise.all(audio.map(async (u) => ({ kind: 'audio', seconds: await seconds(u) }) as const))),
  ];
}

describeOnDb('pglite', 'Recorder outputs: the recording’s duration', (kind) => {
  let p: TestPlatform;
  let t: TestTenant;
  let encoder: ReturnType<typeof pushEncoder> | undefined;

  beforeAll(async () => {
    p = await startPlatform(kind, {
      MEDIAPLANE_RTMP_HOST: '127.0.0.1',
      MEDIAPLANE_RTMP_PORT: String(await freePort()),
      MEDIAPLANE_LIVE_POLL_MS: '200',
      MEDIAPLANE_LIVE_SEGMENT_SECONDS: String(SEGMENT_S),
      MEDIAPLANE_LIVE_RETENTION_SECONDS: '600',
      // Two outputs at a time: each of these small encodes takes less than the job queue's 1 s poll, so one worker made
      // one a second whatever the machine could do.
      MEDIAPLANE_TRANSCODE_CONCURRENCY: '2',
    });
    t = await p.createTenant();
  });
  afterAll(async () => {
    await encoder?.stop();
    await p?.stop();
  });

  it('every output preset, of past, running and future ranges, with and without a run change, is as long as its recording', async () => {
    const channel = await t.json('POST', '/live/v1/channels', {
      name: 'outputs',
      input: { inputLoss: { type: 'COLOR', color: '#1060C0' } },
      qualities: [{ resolution: '144p', frameRate: FPS }],
    });
    const channelId = channel.body.id as string;
    expect((await t.call('POST', `/live/v1/channels/${channelId}/start`)).status).toBe(200);
    const configuration = async () => (await t.json('GET', `/live/v1/channels/${channelId}/configuration`)).body;
    await until(configuration, (c) => c.status.value === 'On', { timeoutMs: 60_000, everyMs: 200 });
    const ingest = (await configuration()).input.transportPrimaryIngestUrl as string;
    const internalStatus = async () => (await t.json('GET', `/live/v1/channels/${channelId}`)).body.internalStatus;
    const runs = async (): Promise<TimelineSegment[][]> => {
      const rows = await rangeSegments(p.ctx, t.id, channelId, 0, undefined, '144p');
      return [...new Set(rows.map((s) => s.run))].map((run) => rows.filter((s) => s.run === run));
    };
    const iso = (ms: number) => new Date(ms).toISOString();
    const create = async (title: string, startMs: number, endMs: number) => {
      const res = await t.json('POST', '/cvr/v1/recordings', {
        source: { type: 'LiveChannel', liveChannelDetails: { channelId, start: iso(startMs), end: iso(endMs) } },
        catchup: { enabled: true },
        output: { preset: 'mp4-h264-download' },
        title,
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body.id as string;
    };

    const get = async (id: string) => (await t.json('GET', `/cvr/v1/recordings/${id}`)).body;
    // Every preset of the ranges across run changes (the MP4 download is there already).
    const allPresets = PRESETS.map((x) => x.id).filter((id) => id !== 'mp4-h264-download');
    // Every preset on the range across a reconnection; on the running range across colour → encoder, one preset per
    // packaging (HLS, DASH, CMAF, the HLS ladder with its MP4, audio only, the remux): the encrypted ladders and the
    // vertical one package as their clear ladders do, and are measured on the other range.
    const packagings = allPresets.filter((id) => !/aes128|cenc|cbcs|vertical/.test(id));
    const addOutputs = async (id: string, presets: string[]) => {
      for (const preset of presets) {
        const added = await t.json('POST', `/cvr/v1/recordings/${id}/outputs`, { preset });
        expect(added.status, JSON.stringify(added.body)).toBe(200);
      }
    };

    // The channel's first run: its input-loss colour, a few seconds of it on the timeline.
    const [colour] = await until(runs, (r) => r.length === 1 && r[0]!.length >= 4, { timeoutMs: 60_000, everyMs: 300, what: 'colour segments' });
    // Past ranges are made from the timeline itself (on a loaded machine the channel lags the wall clock), each once
    // the timeline holds it, so that its outputs are made while the channel goes on. In the channel's first run:
    const pastFirst = await create('past, in the first run', colour![1]!.startMs + 300, colour![3]!.startMs + 300);
    // A running range and a future one, the encoder connecting inside both (once the future one has begun).
    const now = Date.now();
    const runningAcross = await create('running, across colour → encoder', now - 2000, now + 14_000);
    const futureAcross = await create('future, across colour → encoder', now + 1500, now + 14_000);
    // The running range's outputs are added once it is recorded (Available), as to any finished recording, while the
    // channel goes on.
    const runningAcrossOutputs = until(
      () => get(runningAcross),
      (r) => r.status === 'Available' || r.status === 'Error',
      { timeoutMs: 600_000, everyMs: 500, what: 'the running range recorded' },
    ).then(() => addOutputs(runningAcross, packagings));
    // Awaited below; until then a failure must not be reported as unhandled.
    runningAcrossOutputs.catch(() => {});
    await until(
      async () => (await t.json('GET', `/cvr/v1/recordings/${futureAcross}`)).body.status,
      (s) => s === 'Live',
      { timeoutMs: 30_000, everyMs: 200, what: 'the future range begins' },
    );
    encoder = pushEncoder(ingest, { size: '160x90', rate: FPS });
    await until(internalStatus, (s) => s === 'InputConnected', { timeoutMs: 60_000, everyMs: 200 });
    const [, encoderRun] = await until(runs, (r) => r.length === 2 && r[1]!.length >= 3, { timeoutMs: 60_000, everyMs: 300, what: 'encoder segments' });
    // Inside the encoder's run (a run change before them): a running range and a future one.
    const t1 = Date.now();
    const runningAfter = await create('running, after a run change', Math.max(t1 - 1000, encoderRun![1]!.startMs), t1 + 4000);
    const futureAfter = await create('future, after a run change', t1 + 1500, t1 + 5500);
    // The encoder drops and comes back: colour, then its second run. Not before its run holds both ranges above: a
    // loaded machine writes the timeline in batches, so the run may already have reached seconds past t1 at t1.
    const endOf = (run: TimelineSegment[]) => run.at(-1)!.startMs + run.at(-1)!.durationMs;
    const [first, live] = await until(runs, (r) => r[1]!.length >= 10 && endOf(r[1]!) > t1 + 5500 + 1000 * SEGMENT_S, {
      timeoutMs: 60_000,
      everyMs: 300,
      what: 'ten encoder segments, past the ranges inside the run',
    });
    // Across the channel's first change of run, and after it.
    const pastAcross = await create('past, across colour → encoder', first!.at(-1)!.startMs - 700, live![2]!.startMs + 400);
    const pastAfter = await create('past, after a run change', live![3]!.startMs + 200, live![7]!.startMs + 200);
    await encoder.stop();
    await until(runs, (r) => r.length >= 3, { timeoutMs: 60_000, everyMs: 300, what: 'the colour after the encoder dropped' });
    encoder = pushEncoder(ingest, { size: '160x90', rate: FPS });
    const [, dropped, , again] = await until(runs, (r) => r.length >= 4 && r[3]!.length >= 3, {
      timeoutMs: 60_000,
      everyMs: 300,
      what: 'the encoder back',
    });
    // Across the encoder's reconnection.
    const pastReconnect = await create('past, across a reconnection', dropped!.at(-2)!.startMs + 100, again![1]!.startMs + 600);
    await encoder.stop();
    await addOutputs(pastReconnect, allPresets);
    await runningAcrossOutputs;

    const recordings = { runningAcross, futureAcross, runningAfter, futureAfter, pastFirst, pastAcross, pastAfter, pastReconnect };
    const done = (r: any) => r.status === 'Error' || (r.status === 'Available' && r.outputs.every((o: any) => ['Available', 'Error'].includes(o.status)));
    const failures: string[] = [];
    const near = (what: string, measured: number, expected: number) => between(what, measured, expected, expected);
    const between = (what: string, measured: number, low: number, high: number) => {
      const line = `${what}: ${measured.toFixed(3)} s, expected ${low === high ? low.toFixed(3) : `${low.toFixed(3)}–${high.toFixed(3)}`} s`;
      console.log(line);
      if (!(measured >= low - FRAME_S && measured <= high + FRAME_S)) failures.push(line);
    };
    // One recording after the other (one poll at a time), each measured while the later ones' outputs are still encoding.
    for (const [name, id] of Object.entries(recordings)) {
      const rec = await until(() => get(id), done, { timeoutMs: 600_000, everyMs: 500, what: `${name}: its outputs made` });
      expect(rec.status, `${name}: ${rec.errorMessage}`).toBe('Available');
      const rows = await recordedSegments(p.ctx, id);
      const runCount = new Set(rows.filter((s) => s.track === '144p').map((s) => s.run)).size;
      const trackS = (track: string) => rows.filter((s) => s.track === track).reduce((a, s) => a + s.durationMs, 0) / 1000;
      const expected = rec.durationMilliseconds / 1000;
      const tracks = { video: trackS('144p'), audio: trackS('audio') };
      const measureOutput = async (o: any) => {
        expect(o.status, `${name} ${o.preset}: ${o.errorMessage}`).toBe('Available');
        const progress = (await t.json('GET', `/cvr/v1/recordings/${id}/outputs/${o.id}/progress`)).body;
        expect(progress, `${name} ${o.preset}`).toEqual({ progressPercent: 100 });
        const drm = /aes128|cenc|cbcs/.test(o.preset);
        for (const e of o.endpoints) {
          const what = `${name} (${runCount} runs) ${o.preset} ${e.format}`;
          near(`${what} endpoint durationMilliseconds`, e.durationMilliseconds / 1000, expected);
          if (e.format === 'MP4') {
            const probed = await ffprobe(e.url);
            near(`${what} ffprobe`, Number(probed.format.duration), expected);
            // Each track from the start, at least as long as its recorded segments (a run's sound often ends a few
            // ms after its picture: the next run starts after both), at most as long as the recording.
            for (const st of probed.streams.filter((x) => x.codec_type === 'video' || x.codec_type === 'audio')) {
              near(`${what} ffprobe ${st.codec_type} start`, Number(st.start_time), 0);
              between(
                `${what} ffprobe ${st.codec_type} end`,
                Number(st.start_time) + Number(st.duration),
                tracks[st.codec_type as 'video' | 'audio'],
                expected,
              );
            }
          } else if (e.format === 'HLS') {
            const playlists = await playlistDurations(e.url);
            for (const pl of playlists) between(`${what} ${pl.kind} playlist`, pl.seconds, tracks[pl.kind], expected);
            // ffprobe's duration of HLS is its first variant's (ffprobe has no key for an encrypted one).
            if (!drm) near(`${what} ffprobe`, Number((await ffprobe(e.url)).format.duration), playlists[0]!.seconds);
          } else {
            // DASH: the MPD's own duration (ffmpeg's DASH reader takes whole seconds of it).
            const mpd = await (await fetch(e.url)).text();
            near(`${what} mediaPresentationDuration`, mpdDurationMs(mpd) / 1000, expected);
          }
        }
      };
      await Promise.all(rec.outputs.map(measureOutput));
      if (name.includes('Across') || name.includes('Reconnect')) expect(runCount, `${name}: a run change inside`).toBeGreaterThanOrEqual(2);
      else {
        const video = rows.filter((s) => s.track === '144p');
        const spans = [...new Set(video.map((s) => s.run))].map((run) => {
          const own = video.filter((s) => s.run === run);
          return `run ${run}: ${own[0]!.startMs}–${own.at(-1)!.startMs + own.at(-1)!.durationMs}`;
        });
        expect(runCount, `${name}: inside one run (${spans.join(', ')})`).toBe(1);
      }
    }
    expect(failures).toEqual([]);
  }, 900_000);
});
