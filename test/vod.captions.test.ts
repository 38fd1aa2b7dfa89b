import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { launchBrowser, play, servePlayerPage } from './helpers/browser.ts';
import { tempDir } from './helpers/media.ts';
import { describeOnDb, startPlatform, type TestPlatform, type TestTenant } from './helpers/platform.ts';
import { spokenClip } from './helpers/speech.ts';
import { until } from './helpers/until.ts';
import { uploadFile } from './helpers/upload.ts';

/** Words of the clip (test/helpers/speech.ts); the recognizer is imperfect, so a few of them are enough. */
const SPOKEN_WORDS = ['hello', 'world', 'this', 'is', 'test', 'live', 'captions'];
const heard = (vtt: string) =>
  new Set(
    vtt
      .toLowerCase()
      .split(/\s+/)
      .filter((w) => SPOKEN_WORDS.includes(w)),
  );

/**
 * Issue 27, item 4: captions made from a VOD asset's speech (`aiCaptioningLanguageCode`) by the live captions'
 * recognizer, added to its HLS and DASH outputs as one more subtitle track: to the output that was encoding when they
 * were made, and to one added after.
 */
describeOnDb('pglite', 'VOD captions made from speech', (kind) => {
  const { dir, cleanup } = tempDir();
  let p: TestPlatform;
  let t: TestTenant;
  let fileId = '';
  let audio: unknown;
  let video: unknown;
  let browser: Browser;
  let page: { url: string; close(): Promise<void> };

  beforeAll(async () => {
    [p, browser, page] = await Promise.all([startPlatform(kind), launchBrowser(), servePlayerPage()]);
    t = await p.createTenant();
    fileId = await uploadFile(t, await spokenClip(dir));
    const tracks = (await t.json('POST', `/vod/v1/files/${fileId}/detect`)).body.tracks;
    audio = tracks.find((x: { type: string }) => x.type === 'Audio');
    video = tracks.find((x: { type: string }) => x.type === 'Video');
  }, 120_000);
  afterAll(async () => {
    await Promise.all([p?.stop(), browser?.close(), page?.close()]);
    cleanup();
  });

  const create = (body: object) => t.json('POST', '/vod/v1/assets', { transcodedSources: [{ fileId, transcodingTracks: [audio] }], ...body });

  it('refuses a language without a model, an asset without audio and a preset without HLS or DASH, in the error shape', async () => {
    const cases: [object, RegExp][] = [
      [{ preset: 'hls-h264-ladder', aiCaptioningLanguageCode: 'xx-YY' }, /no speech model for xx-YY is installed; installed: .*en-US/],
      [
        { preset: 'hls-h264-ladder', aiCaptioningLanguageCode: 'en-US', transcodedSources: [{ fileId, transcodingTracks: [video] }] },
        /an audio track: list one in transcodedSources\[0\]\.transcodingTracks/,
      ],
      [{ preset: 'mp4-h264-download', aiCaptioningLanguageCode: 'en-US' }, /preset mp4-h264-download makes no HLS or DASH output/],
    ];
    for (const [body, message] of cases) {
      const r = await create(body);
      expect(r.status, JSON.stringify(r.body)).toBe(400);
      expect(r.body.errors).toEqual([expect.objectContaining({ field: 'aiCaptioningLanguageCode', message: expect.stringMatching(message) })]);
    }
  });

  it('recognizes the speech once and adds it to the HLS output being encoded and to a DASH output added after', async () => {
    const created = await create({ preset: 'hls-h264-ladder', aiCaptioningLanguageCode: 'en-us' });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const id = created.body.id as string;
    const first = (await t.json('GET', `/vod/v1/assets/${id}`)).body;
    expect(first.aiCaptioning).toMatchObject({ isEnabled: true, language: { code: 'en-US', code3Lettered: 'eng' } });
    expect(['Pending', 'Processing']).toContain(first.aiCaptioning.status);
    expect((await t.json('PATCH', `/vod/v1/assets/${id}`, { aiCaptioningLanguageCode: 'en-GB' })).status).toBe(400);

    const done = async () =>
      (
        await until(
          () => t.json('GET', `/vod/v1/assets/${id}`),
          (r) => r.body.status !== 'Processing' && r.body.status !== 'Pending' && ['Available', 'Error'].includes(r.body.aiCaptioning.status),
          { timeoutMs: 240_000 },
        )
      ).body;
    const asset = await done();
    expect(asset.status, asset.errorMessage).toBe('Available');
    expect(asset.aiCaptioning.status, asset.aiCaptioning.errorMessage).toBe('Available');

    // HLS (MPEG-TS): a SUBTITLES rendition every variant names, a WebVTT with the clip's words on the output's clock.
    const hls = asset.endpoints.find((e: { format: string }) => e.format === 'HLS');
    const master = await until(
      async () => (await p.fetch(hls.url)).text(),
      (m) => m.includes('generated_en-US.m3u8'),
      { timeoutMs: 30_000 },
    );
    expect(master).toMatch(/#EXT-X-MEDIA:TYPE=SUBTITLES,GROUP-ID="subs",NAME="English \(United States\) \(generated\)",.*LANGUAGE="en-US"/);
    const variants = master.split('\n').filter((l) => l.startsWith('#EXT-X-STREAM-INF:'));
    expect(variants.length).toBeGreaterThan(0);
    expect(variants.every((l) => l.includes('SUBTITLES="subs"'))).toBe(true);
    const vtt = await (await p.fetch(new URL('subs/generated_en-US.vtt', hls.url).toString())).text();
    expect(vtt).toMatch(/^WEBVTT\nX-TIMESTAMP-MAP=MPEGTS:\d+,LOCAL:00:00:00.000\n/);
    expect(heard(vtt).size, vtt).toBeGreaterThanOrEqual(2);
    const playlist = await (await p.fetch(new URL('subs/generated_en-US.m3u8', hls.url).toString())).text();
    expect(playlist).toContain('generated_en-US.vtt');
    // hls.js lists the track and puts the recognized words on the video as cues.
    const played = await play(browser, page.url, hls.url, { seconds: 4 });
    expect(played.error).toBeUndefined();
    expect(played.textTracks).toEqual(['en-US']);
    expect(heard(played.cues.map((c) => c.text).join(' ')).size, JSON.stringify(played.cues)).toBeGreaterThanOrEqual(2);

    // An output added after the captions were made gets them when it finishes: DASH, a side-loaded text set.
    expect((await t.json('POST', `/vod/v1/assets/${id}/outputs`, { preset: 'dash-h264-ladder', id: 'dash' })).status).toBe(200);
    const withDash = (
      await until(
        () => t.json('GET', `/vod/v1/assets/${id}`),
        (r) => r.body.outputs.find((o: { id: string }) => o.id === 'dash')?.status === 'Available',
        { timeoutMs: 240_000 },
      )
    ).body;
    const dash = withDash.outputs.find((o: { id: string }) => o.id === 'dash').endpoints[0];
    const mpd = await (await p.fetch(dash.url)).text();
    expect(mpd).toMatch(/<AdaptationSet id="200" contentType="text" mimeType="text\/vtt" lang="en-US">[\s\S]*<BaseURL>subs\/generated_en-US.vtt<\/BaseURL>/);
    // Beside the storyboard's thumbnail set: each AdaptationSet id once in the Period.
    const ids = [...mpd.matchAll(/<AdaptationSet id="(\d+)"/g)].map((m) => m[1]);
    expect(mpd).toContain('thumbnail_tile');
    expect(new Set(ids).size, ids.join(',')).toBe(ids.length);
    const dashVtt = await (await p.fetch(new URL('subs/generated_en-US.vtt', dash.url).toString())).text();
    expect(dashVtt).not.toContain('X-TIMESTAMP-MAP');
    expect(heard(dashVtt).size).toBeGreaterThanOrEqual(2);
  }, 600_000);
});
