import type { Browser } from 'playwright-core';
import { expect, it } from 'vitest';
import { signPlaybackToken } from '../src/modules/streaming/tokens.ts';
import { withToken } from '../src/platform/playback.ts';
import { play } from './helpers/browser.ts';
import { asSessionKeys, expectAes128Decrypts, sessionKeysOf } from './helpers/drm.ts';
import type { DbKind, TestPlatform, TestTenant } from './helpers/platform.ts';
import { until } from './helpers/until.ts';

/** The running DRM channel of test/live.drm.e2e.test.ts, as its cases see it. */
export interface DrmChannel {
  p: TestPlatform;
  t: TestTenant;
  browser: Browser;
  page: { url: string };
  channel: any;
  /** Its `hls-aes128` endpoint (the key ids are in its protectionDetails). */
  hls: any;
  dir: string;
  kind: DbKind;
}

/**
 * The cases of test/live.drm.e2e.test.ts on the channel's recordings (docs/decisions/recorder.md, "DRM channels"): a
 * finished one and one still running, played encrypted in hls.js and dash.js. Kept in a file of their own for size;
 * they run inside that file's describe, on its channel (one platform, one encoder, one browser: a second media e2e
 * file would start all three again).
 */
export function drmRecordingCases(get: () => DrmChannel): void {
  it("records a past range: its catch-up plays encrypted with the channel's keys and a token for the recording, never clear", async () => {
    const { p, t, browser, page, channel, hls, dir, kind } = get();
    const [keyId, audioKeyId] = hls.protectionDetails.keyIds;
    const now = Date.now();
    const created = await t.json('POST', '/cvr/v1/recordings', {
      source: {
        type: 'LiveChannel',
        liveChannelDetails: { channelId: channel.id, start: new Date(now - 6000).toISOString(), end: new Date(now - 1000).toISOString() },
      },
      catchup: { enabled: true },
      archive: { enabled: true, delaySeconds: 0, public: true },
      output: { preset: 'hls-h264-ladder-aes128' },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const rec = await until(
      async () => (await t.json('GET', `/cvr/v1/recordings/${created.body.id}`)).body,
      (r) => r.status === 'Error' || (r.status === 'Available' && ['Available', 'Error'].includes(r.archive.status)),
      { timeoutMs: 30_000, what: 'the recording and its archive are made' },
    );
    console.log(`recording of a DRM channel: Available (and archived) ${Date.now() - now} ms after it was asked for`);
    expect(rec.status, rec.errorMessage).toBe('Available');
    const details = { keyIds: [keyId, audioKeyId], contentId: channel.id };
    const drm = { isDrmProtected: true, drmKeyMode: 'AudioVideoKeys' };
    expect(
      rec.catchup.endpoints.map((e: any) => ({
        id: e.id,
        format: e.format,
        protection: e.protection,
        protectionDetails: e.protectionDetails,
        type: e.type,
        ...drm,
      })),
    ).toEqual([
      { id: 'hls-aes128', format: 'HLS', protection: 'Aes128', protectionDetails: details, type: 'HlsDrm', ...drm },
      { id: 'dash-cenc', format: 'DASH', protection: 'ClearKey', protectionDetails: details, type: 'DashDrm', ...drm },
      { id: 'dash-cbcs', format: 'DASH', protection: 'ClearKey', protectionDetails: details, type: 'DashDrm', ...drm },
      { id: 'hls-sample-aes', format: 'HLS', protection: 'ClearKey', protectionDetails: details, type: 'HlsDrm', ...drm },
    ]);
    const [recHls, recDash] = rec.catchup.endpoints.map((e: any) => e.url as string);
    expect(recHls).toMatch(/\/media\/aes128\/master\.m3u8$/);
    const base = recHls.replace(/aes128\/master\.m3u8$/, '');
    const variant = await (await p.fetch(`${base}aes128/180p.m3u8`)).text();
    expect(variant).toContain('#EXT-X-ENDLIST');
    const audioVariant = await (await p.fetch(`${base}aes128/audio.m3u8`)).text();
    expect(sessionKeysOf(await (await p.fetch(recHls)).text())).toEqual([...asSessionKeys(variant), ...asSessionKeys(audioVariant)]);
    expect(sessionKeysOf(await (await p.fetch(recHls)).text())).toHaveLength(2);
    const segment = variant.split('\n').find((l) => l.endsWith('.m4s'))!;
    const init = /#EXT-X-MAP:URI="([^"]+)"/.exec(variant)![1]!;
    // The clear copy is there (outputs are made from it) but not served: neither its playlists nor its files.
    for (const clear of ['master.m3u8', '180p.m3u8', 'manifest.mpd', segment, init]) expect((await p.fetch(base + clear)).status, clear).toBe(404);
    expect(await (await p.fetch(recDash)).text()).toContain(`cenc:default_KID="${audioKeyId}"`);
    const sampleAesUrl = rec.catchup.endpoints[3].url as string;
    expect(await (await p.fetch(sampleAesUrl.replace('master.m3u8', '180p.m3u8'))).text()).toMatch(/#EXT-X-KEY:METHOD=SAMPLE-AES[\s\S]*#EXT-X-ENDLIST/);
    // The archive: the same, encrypted only; the outputs (clear files) want a playback token.
    expect(rec.archive.status).toBe('Available');
    expect(rec.archive.endpoints.map((e: any) => [e.id, e.protection, e.isDrmProtected])).toEqual([
      ['archive-hls-aes128', 'Aes128', true],
      ['archive-dash-cenc', 'ClearKey', true],
      ['archive-dash-cbcs', 'ClearKey', true],
      ['archive-hls-sample-aes', 'ClearKey', true],
    ]);
    const archived = rec.archive.endpoints[0].url as string;
    expect(await (await p.fetch(archived.replace('master.m3u8', '180p.m3u8'))).text()).toMatch(/METHOD=AES-128[\s\S]*#EXT-X-ENDLIST/);
    expect((await p.fetch(archived.replace('/aes128/', '/'))).status).toBe(404);
    expect((await p.fetch(base.replace(/media\/$/, 'outputs/none/video.mp4'))).status).toBe(401);
    // A DRM token asked for the recording is one for the channel's content; its licensed key decrypts the segment
    // with the IV the playlist writes, and the result decodes (as it is served, it does not decode to the same).
    const recToken = await t.json('POST', '/drm/v1/tokens', { assetId: rec.id });
    expect([recToken.status, recToken.body.contentId]).toEqual([200, channel.id]);
    const keyUrl = new RegExp(`#EXT-X-KEY:METHOD=AES-128,URI="([^"]+/aes128/${keyId})",IV=0x([0-9a-f]{32})\n(?:#[^\n]*\n)*${segment}`).exec(variant)!;
    const key = Buffer.from(await (await p.fetch(`${keyUrl[1]}?token=${recToken.body.token}`)).arrayBuffer());
    expect(key.length).toBe(16);
    const bytes = async (u: string) => Buffer.from(await (await p.fetch(base + u)).arrayBuffer());
    await expectAes128Decrypts(dir, `rec-${kind}`, await bytes(`aes128/${init}`), await bytes(`aes128/${segment}`), key, Buffer.from(keyUrl[2]!, 'hex'));
    // An output of a DRM preset is encrypted with the channel's keys too, and plays with the recording's token.
    const made = await until(
      async () => (await t.json('GET', `/cvr/v1/recordings/${rec.id}`)).body.outputs[0],
      (o) => ['Available', 'Error'].includes(o.status),
      { timeoutMs: 60_000, what: 'the AES-128 output' },
    );
    console.log(`recording output hls-h264-ladder-aes128: Available ${Date.now() - now} ms after the recording was asked for`);
    expect(made.status, made.errorMessage).toBe('Available');
    expect(made.endpoints[0]).toMatchObject({ protection: 'Aes128', protectionDetails: details, type: 'HlsDrm', ...drm });
    // The VOD pipeline's AES-128 master names both keys too.
    expect(sessionKeysOf(await (await p.fetch(made.endpoints[0].url)).text())).toEqual([
      `#EXT-X-SESSION-KEY:METHOD=AES-128,URI="${p.baseUrl}/drm/v1/licenses/aes128/${keyId}"`,
      `#EXT-X-SESSION-KEY:METHOD=AES-128,URI="${p.baseUrl}/drm/v1/licenses/aes128/${audioKeyId}"`,
    ]);
    const output = await play(browser, page.url, made.endpoints[0].url, { seconds: 30, untilAdvanced: 1, drmToken: recToken.body.token });
    expect(output.error).toBeUndefined();
    expect(output.times.at(-1)! - output.times[0]!).toBeGreaterThan(0);
    const startedPlaying = Date.now();
    const played = await play(browser, page.url, recHls, { seconds: 30, untilAdvanced: 1, drmToken: recToken.body.token });
    console.log(`hls.js on the recording's AES-128 catch-up: ${Date.now() - startedPlaying} ms, playhead ${JSON.stringify(played.times)}`);
    expect(played.error).toBeUndefined();
    expect(played.videoHeight).toBe(180);
    expect(played.times.at(-1)! - played.times[0]!).toBeGreaterThan(0);
    // dash.js through EME ClearKey, the static MPDs of the finished recording: the catch-up's cenc, the archive's cbcs.
    const recMpd = await (await p.fetch(recDash)).text();
    expect(recMpd).toContain('type="static"');
    expect(recMpd).not.toContain('UTCTiming');
    for (const [what, u] of [
      ['catch-up DASH cenc', recDash],
      ['archive DASH cbcs', rec.archive.endpoints[2].url as string],
    ] as const) {
      const dashed = await play(browser, page.url, u, { player: 'dash', seconds: 30, untilAdvanced: 1, drmToken: recToken.body.token });
      console.log(`dash.js on the recording's ${what}: playhead ${JSON.stringify(dashed.times)}`);
      expect(dashed.error, what).toBeUndefined();
      expect(dashed.videoHeight, what).toBe(180);
      expect(dashed.times.at(-1)! - dashed.times[0]!, what).toBeGreaterThan(0);
    }
  });

  it('plays a recording while it is still Live: hls.js the growing AES-128 and SAMPLE-AES playlists, dash.js the dynamic CENC MPD', async () => {
    const { p, t, browser, page, channel, hls } = get();
    const [keyId, audioKeyId] = hls.protectionDetails.keyIds;
    // Without an end: Live until deleted, long enough to play while it grows.
    const created = await t.json('POST', '/cvr/v1/recordings', {
      source: { type: 'LiveChannel', liveChannelDetails: { channelId: channel.id, start: new Date(Date.now() - 2000).toISOString() } },
      catchup: { enabled: true },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const live = await until(
      async () => (await t.json('GET', `/cvr/v1/recordings/${created.body.id}`)).body,
      (r) => r.status !== 'Pending',
      { timeoutMs: 30_000, what: 'the recording goes Live' },
    );
    expect(live.status).toBe('Live');
    const recToken = (await t.json('POST', '/drm/v1/tokens', { assetId: live.id })).body.token as string;
    // Playback tokens required too (the recording's own setting): every file, the dynamic MPD's clock included, wants one.
    expect((await t.json('PATCH', `/streaming/v1/assets/${live.id}/settings`, { tokenRequired: 'Enabled' })).status).toBe(200);
    const signingKey = (await t.json('GET', '/streaming/v1/settings')).body.contentAcquisitionInfo.authorization.signingKey as string;
    const playbackToken = await signPlaybackToken(signingKey, live.id, 300);
    const url = (id: string) => live.catchup.endpoints.find((e: any) => e.id === id).url as string;
    expect((await p.fetch(url('dash-cenc'))).status).toBe(401);
    const [recHls, recDash, recSampleAes] = [url('hls-aes128'), url('dash-cenc'), url('hls-sample-aes')].map((u) => withToken(u, playbackToken)) as [
      string,
      string,
      string,
    ];
    const first = await until(
      async () => (await p.fetch(recDash)).text(),
      // Both tracks: on a loaded machine the recorder's first pass may have copied a video segment and no audio yet.
      (mpd) => mpd.includes('type="dynamic"') && mpd.includes('<S ') && mpd.includes('contentType="audio"'),
      { timeoutMs: 30_000, what: 'the running recording has a dynamic MPD with both tracks' },
    );
    // Every Period's audio and video adaptation sets name their key.
    for (const period of first.split('<Period').slice(1))
      for (const [kind, kid] of [
        ['video', keyId],
        ['audio', audioKeyId],
      ])
        expect(period, kind).toMatch(new RegExp(`contentType="${kind}"[^>]*>\\s*<ContentProtection [^>]*value="cenc" cenc:default_KID="${kid}"`));
    // The clock is one that needs no token (the MPD itself wants one, which a stored MPD cannot write into its URLs).
    const clock = `${p.baseUrl}/media/time`;
    expect(first).toContain(`<UTCTiming schemeIdUri="urn:mpeg:dash:utc:http-iso:2014" value="${clock}"/>`);
    const time = await p.fetch(clock);
    expect([time.status, time.headers.get('access-control-allow-origin')]).toEqual([200, '*']);
    console.log(`the players' clock: ${Date.parse(await time.text()) - Date.now()} ms from the test's`);
    const variant = await (await p.fetch(recHls.replace('master.m3u8', '180p.m3u8'))).text();
    expect(variant).not.toContain('#EXT-X-ENDLIST');
    // The video and the audio key (AudioVideoKeys), each from its media playlist once that lists a segment: on a loaded
    // machine the recorder's pass may have written the audio playlist before its first segment was copied.
    const mediaKeys = await until(
      async () => [
        ...asSessionKeys(await (await p.fetch(recSampleAes.replace('master.m3u8', '180p.m3u8'))).text()),
        ...asSessionKeys(await (await p.fetch(recSampleAes.replace('master.m3u8', 'audio.m3u8'))).text()),
      ],
      (keys) => keys.length === 2,
      { timeoutMs: 30_000, what: "the running recording's SAMPLE-AES media playlists name their keys" },
    );
    expect(sessionKeysOf(await (await p.fetch(recSampleAes)).text())).toEqual(mediaKeys);
    expect(variant).toMatch(new RegExp(`#EXT-X-KEY:METHOD=AES-128,URI="[^"]+/aes128/${keyId}",IV=0x`));
    const clearKeyLicenseUrl = `${p.baseUrl}/drm/v1/licenses/clearkey`;
    // dash.js plays past what the MPD first listed: it refreshed it, with its keys, as it grew.
    for (const [what, u, player, advance, licenseUrl] of [
      ['running DASH cenc', recDash, 'dash', 4],
      ['running HLS AES-128', recHls, 'hls', 1],
      ['running HLS SAMPLE-AES', recSampleAes, 'hls', 1, clearKeyLicenseUrl],
    ] as const) {
      // dash.js takes the time from the MPD's UTCTiming only (no fallback to the MPD's Date): the clock works through the guards.
      const played = await play(browser, page.url, u, {
        player,
        seconds: 30,
        untilAdvanced: advance,
        drmToken: recToken,
        clearKeyLicenseUrl: licenseUrl,
        mpdClockOnly: player === 'dash',
      });
      const from = played.times.find((x) => x > 0) ?? 0;
      console.log(`${what}: ${first.split('<S ').length - 1} segments listed first; playhead ${played.times.map((x) => x.toFixed(2)).join(' ')}`);
      expect(played.error, what).toBeUndefined();
      expect(played.videoHeight, what).toBe(180);
      expect(played.times.at(-1)! - from, what).toBeGreaterThanOrEqual(advance);
    }
    expect((await t.json('GET', `/cvr/v1/recordings/${live.id}`)).body.status).toBe('Live');
    expect(await (await p.fetch(recDash)).text()).toContain('type="dynamic"');
    // Deleted while its copy runs (a pass may be writing into it): answered, and its files are gone.
    const deleted = await t.call('DELETE', `/cvr/v1/recordings/${live.id}`);
    expect(deleted.status, await deleted.text()).toBe(200);
    const files = `tenants/${t.id}/recordings/${live.id}/media/`;
    await until(
      async () => (await Promise.all(['cenc/manifest.mpd', 'aes128/180p.m3u8', 'master.m3u8'].map((f) => p.ctx.store.head(files + f)))).every((h) => !h),
      Boolean,
      { timeoutMs: 10_000, what: 'the deleted recording has no files' },
    );
  });
}
