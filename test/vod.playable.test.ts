import { afterAll, beforeAll, expect } from 'vitest';
import { inspect } from '../src/media/inspect.ts';
import { FAST_START_SEGMENT_S } from '../src/media/packaging.ts';
import { expectFastStart, makeClip, parseMaster, tempDir } from './helpers/media.ts';
import { itOnDb, startPlatform, type TestPlatform, type TestTenant } from './helpers/platform.ts';
import { describeEachDbAndStore, storeEnv } from './helpers/stores.ts';
import { uploadFile } from './helpers/upload.ts';
import { until } from './helpers/until.ts';
import { WebhookReceiver } from './helpers/webhookReceiver.ts';

/**
 * Issue 24, item 1: an output plays while it is encoded. The source is long enough (half a minute of 360p) that its
 * encode takes several seconds after its first segment (half a second, a fast start) on this machine; nothing throttles
 * ffmpeg.
 */
const SOURCE_SECONDS = 30;
const TEST_MS = 600_000;
const WAIT = { timeoutMs: 240_000, everyMs: 100 };

const segmentsOf = (playlist: string) => playlist.split('\n').filter((l) => l && !l.startsWith('#'));
const durationsOf = (playlist: string) =>
  playlist
    .split('\n')
    .filter((l) => l.startsWith('#EXTINF:'))
    .map((l) => Number.parseFloat(l.slice(8)));
const startOf = async (url: string) => (await inspect(url)).streams[0]?.startTime ?? Number.NaN;
const text = async (url: string) => {
  const res = await fetch(url);
  return { status: res.status, cache: res.headers.get('cache-control'), body: await res.text() };
};

describeEachDbAndStore('VOD outputs playable while they encode', (db, store) => {
  const { dir, cleanup } = tempDir('mediaplane-playable-');
  let p: TestPlatform;
  let t: TestTenant;
  let receiver: WebhookReceiver;
  let fileId: string;
  let audio: unknown;

  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    p = await startPlatform(db, { ...(await storeEnv(store)), MEDIAPLANE_WEBHOOK_ALLOW_PRIVATE: 'true' });
    t = await p.createTenant();
    const hook = await t.json('POST', '/notifications/v1/webhook', {
      name: 'playable',
      url: receiver.url,
      eventTypes: ['vod.output.playable', 'vod.output.available', 'vod.asset.available'],
    });
    expect(hook.status, JSON.stringify(hook.body)).toBe(200);
    fileId = await uploadFile(
      t,
      await makeClip(dir, 'long', { width: 640, height: 360, seconds: SOURCE_SECONDS, audio: [{ language: 'eng', frequency: 440 }] }),
    );
    audio = (await t.json('POST', `/vod/v1/files/${fileId}/detect`)).body.tracks.find((x: any) => x.type === 'Audio');
  }, 300_000);
  afterAll(async () => {
    await Promise.all([p?.stop(), receiver?.close()]);
    cleanup();
  });

  const asset = async (id: string) => (await t.json('GET', `/vod/v1/assets/${id}`)).body;
  const create = async (preset: string) => {
    const { status, body } = await t.json('POST', '/vod/v1/assets', { transcodedSources: [{ fileId, transcodingTracks: [audio] }], preset });
    expect(status).toBe(200);
    return body.id as string;
  };
  /** The asset as soon as it shows an endpoint, which must come while it is still encoding. */
  const whenPlayable = async (id: string) => {
    const a = await until(
      () => asset(id),
      (a) => a.endpoints.length > 0 || ['Available', 'Error'].includes(a.status),
      WAIT,
    );
    expect(a.status, a.errorMessage).toBe('Processing');
    expect(a.outputs[0].status).toBe('Processing');
    expect(a.outputs[0].endpoints).toEqual(a.endpoints);
    return a;
  };

  // Each on one database and store (the other's publisher and growing state are the same code): CI's time.
  itOnDb(db, 'pglite')(
    'publishes an HLS output as growing EVENT playlists while it encodes, then as VOD at the same URLs',
    async () => {
      const id = await create('hls-h264-ladder');
      const playable = await whenPlayable(id);
      const hls = playable.endpoints.find((e: any) => e.format === 'HLS');
      expect(hls).toMatchObject({ accessType: 'Http', protection: 'None', preset: 'hls-h264-ladder' });
      expect(hls.url).toMatch(/\/master\.m3u8$/);

      const master = await text(hls.url);
      expect(master.status).toBe(200);
      expect(master.cache).toBe('no-cache');
      const variant = new URL(segmentsOf(master.body)[0], hls.url).href;
      const first = await text(variant);
      expect(first.status).toBe(200);
      expect(first.cache).toBe('no-cache');
      expect(first.body).toContain('#EXT-X-PLAYLIST-TYPE:EVENT');
      expect(first.body).not.toContain('#EXT-X-ENDLIST');
      const firstSegments = segmentsOf(first.body);
      expect(firstSegments.length).toBeGreaterThan(0);
      // Fast start: the first segment is FAST_START_SEGMENT_S of video, all a player waits for; the audio, made beside
      // it by a process of its own, is there already (the growing master names it).
      expect(Math.abs(durationsOf(first.body)[0]! - FAST_START_SEGMENT_S)).toBeLessThan(0.05);
      // Its target duration is the preset's 4 s from the start: a playlist's target duration may not change.
      expect(first.body).toContain('#EXT-X-TARGETDURATION:4\n');
      const audioPlaylist = new URL(parseMaster(master.body).media.find((m) => m.TYPE === 'AUDIO')!.URI, hls.url).href;
      expect(segmentsOf((await text(audioPlaylist)).body).length).toBeGreaterThan(0);
      // Every segment it names is there to fetch.
      for (const s of firstSegments) {
        const res = await fetch(new URL(s, variant));
        expect(res.status).toBe(200);
        expect((await res.arrayBuffer()).byteLength).toBeGreaterThan(0);
      }

      // It grows while the output is still being encoded.
      let grown: { body: string; status: string } | undefined;
      await until(
        async () => {
          const body = (await text(variant)).body;
          const status = (await asset(id)).status;
          if (segmentsOf(body).length > firstSegments.length) grown = { body, status };
          return grown ?? status;
        },
        (v) => typeof v === 'object' || v !== 'Processing',
        WAIT,
      );
      expect(grown?.status).toBe('Processing');
      expect(grown?.body).toContain('#EXT-X-PLAYLIST-TYPE:EVENT');
      expect(grown?.body).not.toContain('#EXT-X-ENDLIST');
      expect(segmentsOf(grown!.body).slice(0, firstSegments.length)).toEqual(firstSegments);
      const last = segmentsOf(grown!.body).at(-1)!;
      expect((await fetch(new URL(last, variant))).status).toBe(200);

      const done = await until(
        () => asset(id),
        (a) => ['Available', 'Error'].includes(a.status),
        WAIT,
      );
      expect(done.status, done.errorMessage).toBe('Available');
      expect(done.endpoints.find((e: any) => e.format === 'HLS').url).toBe(hls.url);
      const vod = await text(variant);
      expect(vod.body).toContain('#EXT-X-PLAYLIST-TYPE:VOD');
      expect(vod.body).toContain('#EXT-X-ENDLIST');
      expect(vod.cache).not.toBe('no-cache');
      expect(segmentsOf(vod.body).length).toBeGreaterThan(segmentsOf(grown!.body).length);
      const seconds = vod.body
        .split('\n')
        .filter((l) => l.startsWith('#EXTINF:'))
        .reduce((s, l) => s + Number.parseFloat(l.slice(8)), 0);
      expect(seconds).toBeGreaterThan(SOURCE_SECONDS - 1);
      // The first segment's time in short segments, the preset's 4 s after it; the audio in 4 s segments from its
      // start, as long as the video, and on its clock: AAC begins its 1024 priming samples before the first frame.
      expectFastStart(durationsOf(vod.body), { after: 2 });
      const audioVod = (await text(audioPlaylist)).body;
      expect(durationsOf(audioVod).slice(0, 3).map(Math.round)).toEqual([4, 4, 4]);
      expect(durationsOf(audioVod).reduce((a, b) => a + b, 0)).toBeCloseTo(seconds, 0);
      const videoStart = await startOf(new URL(segmentsOf(vod.body)[0], variant).href);
      const audioStart = await startOf(new URL(segmentsOf(audioVod)[0], audioPlaylist).href);
      expect(audioStart + 1024 / 48_000).toBeCloseTo(videoStart, 3);

      // The webhook said so, before the asset turned Available.
      const mine = () => receiver.received.map((r) => r.json).filter((e) => e?.source === `/tenant/${t.id}`);
      await receiver.waitFor(() => mine().some((e) => e.type === 'vod.asset.available' && e.data.id === id), 60_000);
      const events = mine().filter((e) => e.data.id === id || e.data.assetId === id);
      const announced = events.findIndex((e) => e.type === 'vod.output.playable');
      expect(announced).toBeGreaterThanOrEqual(0);
      expect(announced).toBeLessThan(events.findIndex((e) => e.type === 'vod.asset.available'));
      expect(events[announced].data).toEqual({
        id: playable.outputs[0].id,
        assetId: id,
        preset: 'hls-h264-ladder',
        endpoints: [{ format: 'HLS', url: hls.url }],
      });
      expect(events.filter((e) => e.type === 'vod.output.playable')).toHaveLength(1);
    },
    TEST_MS,
  );

  itOnDb(db, 'postgres')(
    'publishes a CMAF output as a dynamic MPD and EVENT playlists while it encodes, then static and VOD, starting fast',
    async () => {
      const id = await create('cmaf-h264-ladder');
      const playable = await whenPlayable(id);
      const dash = playable.endpoints.find((e: any) => e.format === 'DASH');
      const hls = playable.endpoints.find((e: any) => e.format === 'HLS');
      const mpd = await text(dash.url);
      expect(mpd.status).toBe(200);
      expect(mpd.cache).toBe('no-cache');
      expect(mpd.body).toContain('type="dynamic"');
      expect(mpd.body).not.toContain('mediaPresentationDuration');
      const media = new URL(segmentsOf((await text(hls.url)).body)[0], hls.url).href;
      const playlist = (await text(media)).body;
      expect(playlist).toContain('#EXT-X-PLAYLIST-TYPE:EVENT');
      expect(playlist).not.toContain('#EXT-X-ENDLIST');
      const init = /#EXT-X-MAP:URI="([^"]+)"/.exec(playlist)![1];
      expect((await fetch(new URL(init, media))).status).toBe(200);
      for (const s of segmentsOf(playlist)) expect((await fetch(new URL(s, media))).status).toBe(200);

      const done = await until(
        () => asset(id),
        (a) => ['Available', 'Error'].includes(a.status),
        WAIT,
      );
      expect(done.status, done.errorMessage).toBe('Available');
      const finished = await text(dash.url);
      expect(finished.body).toContain('type="static"');
      expect(finished.body).toContain('mediaPresentationDuration');
      const vod = (await text(media)).body;
      expect(vod).toContain('#EXT-X-ENDLIST');
      // A fast start: the first segment's time in short segments, the preset's 4 s after it (one process: the
      // audio's segments end where the video's do meanwhile).
      expectFastStart(durationsOf(vod), { after: 2 });
      const audioSet = /<AdaptationSet[^>]*contentType="audio"[\s\S]*?<\/AdaptationSet>/.exec(finished.body)![0];
      const timescale = Number(/timescale="(\d+)"/.exec(audioSet)![1]);
      const [, first] = /<S t="\d+" d="(\d+)"/.exec(audioSet)!;
      expect(Math.abs(Number(first) / timescale - FAST_START_SEGMENT_S)).toBeLessThan(0.1);
    },
    TEST_MS,
  );
});
