import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { play } from './helpers/browser.ts';
import { newestSegment, pushEncoder, startLivePlayback, type Encoder } from './helpers/live.ts';
import { liveChannels } from './helpers/commands.ts';
import { tempDir } from './helpers/media.ts';
import { b64url, decode, expectAes128Decrypts, sessionKeysOf, asSessionKeys } from './helpers/drm.ts';
import { describeOnDb, type TestPlatform, type TestTenant } from './helpers/platform.ts';
import { until } from './helpers/until.ts';
import { drmRecordingCases } from './live.drm.recordings.ts';

const { dir } = tempDir('mediaplane-live-drm-');

/**
 * A live channel with `HlsDrm` and `DashDrm` endpoints, end to end: ffmpeg pushes RTMP, the endpoints name the
 * channel's key, the segments served are encrypted (and decrypt with the key a license gives), the clear files are not
 * served, hls.js plays the AES-128 endpoint with a DRM token and not without, dash.js plays the CENC ones (`cenc`,
 * `cbcs`) with ClearKey. drmKeyMode AudioVideoKeys: the players license two keys, the video one and the audio one. An
 * event's catch-up (a range of the channel's timeline) and the channel's recordings, finished and still running, play
 * encrypted the same way, in both players.
 */
describeOnDb('postgres', 'Live channel with DRM endpoints', (kind) => {
  let p: TestPlatform;
  let t: TestTenant;
  let browser: Browser;
  let page: { url: string; close(): Promise<void> };
  let encoder: Encoder | undefined;
  let channel: any;
  let hls: any;
  let dash: any;
  let cbcs: any;
  let sampleAes: any;
  let token: string;

  beforeAll(async () => {
    ({ p, browser, page } = await startLivePlayback(kind));
    t = await p.createTenant();
    const live = liveChannels(t);
    const { id } = await live.create({
      name: 'drm',
      input: { inputLoss: { type: 'COLOR', color: '#1060C0' } },
      qualities: [{ resolution: '180p', frameRate: 25 }],
      endpoints: [{ type: 'HlsDrm' }, { type: 'Dash', isDrmProtected: true }, { type: 'DashDrm', scheme: 'cbcs' }, { type: 'HlsDrm', scheme: 'cbcs' }],
      drmKeyMode: 'AudioVideoKeys',
    });
    await live.start(id);
    await live.waitStatus(id, 'On');
    encoder = pushEncoder(await live.ingestUrl(id));
    channel = await live.get(id);
    hls = channel.endpoints.find((e: any) => e.format === 'HLS');
    dash = channel.endpoints.find((e: any) => e.id === 'dash-cenc');
    cbcs = channel.endpoints.find((e: any) => e.id === 'dash-cbcs');
    sampleAes = channel.endpoints.find((e: any) => e.id === 'hls-sample-aes');
    token = (await t.json('POST', '/drm/v1/tokens', { assetId: id })).body.token;
    // The encoder's picture, not the slate's, is in the playlist: two segments after the first one encoded from it.
    await live.waitInputConnected(id);
    const newest = async () => newestSegment(await (await p.fetch(hls.url.replace(/master\.m3u8$/, '180p.m3u8'))).text());
    const connectedAt = await newest();
    await until(newest, (n) => n >= connectedAt + 2, { timeoutMs: 45_000, what: 'segments of the pushed stream' });
  }, 120_000);
  afterAll(async () => {
    await encoder?.stop();
    await Promise.all([browser?.close(), page?.close()]);
    await p?.stop();
  });

  it('describes the endpoints: protection, the video and audio key ids and the channel as content id, AudioVideoKeys', async () => {
    const [keyId, audioKeyId] = hls.protectionDetails.keyIds;
    expect(keyId).toMatch(/^[0-9a-f-]{36}$/);
    expect(audioKeyId).toMatch(/^[0-9a-f-]{36}$/);
    expect(audioKeyId).not.toBe(keyId);
    expect(hls).toMatchObject({ protection: 'Aes128', type: 'HlsDrm', isDrmProtected: true, drmKeyMode: 'AudioVideoKeys' });
    expect(hls.protectionDetails).toEqual({ keyIds: [keyId, audioKeyId], contentId: channel.id });
    expect(dash).toMatchObject({ protection: 'ClearKey', type: 'DashDrm', protectionDetails: { keyIds: [keyId, audioKeyId], contentId: channel.id } });
    const conf = (await t.json('GET', `/live/v1/channels/${channel.id}/configuration`)).body;
    expect(conf.endpoints.map((e: any) => [e.type, e.isDrmProtected])).toEqual([
      ['HlsDrm', true],
      ['DashDrm', true],
      ['DashDrm', true],
      ['HlsDrm', true],
    ]);
    expect(conf.endpoints.map((e: any) => e.scheme)).toEqual(['aes-128', 'cenc', 'cbcs', 'cbcs']);
    // SAMPLE-AES: HLS playlists beside the cbcs MPD, over the same cbcs segments; licensed by ClearKey.
    expect(sampleAes).toMatchObject({
      format: 'HLS',
      protection: 'ClearKey',
      type: 'HlsDrm',
      url: cbcs.url.replace('manifest.mpd', 'master.m3u8'),
      protectionDetails: dash.protectionDetails,
    });
    expect(cbcs).toMatchObject({
      protection: 'ClearKey',
      type: 'DashDrm',
      url: dash.url.replace('/cenc/', '/cbcs/'),
      protectionDetails: dash.protectionDetails,
    });
    expect(conf.drmKeyMode).toBe('AudioVideoKeys');
    expect((await t.json('GET', `/streaming/v1/assets/${channel.id}`)).body.isDrm).toBe(true);
  });

  it('serves encrypted segments only: they decrypt with the licensed key, and the clear files are not served', async () => {
    const [keyId, audioKeyId] = hls.protectionDetails.keyIds;
    const base = hls.url.replace(/aes128\/master\.m3u8$/, '');
    const playlist = await (await p.fetch(`${base}aes128/180p.m3u8`)).text();
    expect(playlist).toContain(`#EXT-X-KEY:METHOD=AES-128,URI="${p.baseUrl}/drm/v1/licenses/aes128/${keyId}"`);
    const [init, segment] = [
      /#EXT-X-MAP:URI="([^"]+)"/.exec(playlist)![1]!,
      playlist
        .split('\n')
        .filter((l) => l.endsWith('.m4s'))
        .at(-1)!,
    ];
    const sequence = Number(/(\d+)\.m4s$/.exec(segment)![1]);
    for (const clear of ['master.m3u8', '180p.m3u8', 'manifest.mpd', segment, init]) expect((await p.fetch(base + clear)).status, clear).toBe(404);
    const bytes = async (u: string) => Buffer.from(await (await p.fetch(base + u)).arrayBuffer());

    // AES-128: the key URL answers the key with a token only; the segment decrypted with it decodes, as it is it does not.
    expect((await p.fetch(`${p.baseUrl}/drm/v1/licenses/aes128/${keyId}`)).status).toBe(401);
    const key = Buffer.from(await (await p.fetch(`${p.baseUrl}/drm/v1/licenses/aes128/${keyId}?token=${token}`)).arrayBuffer());
    expect(key.length).toBe(16);
    // No IV in the playlist: the segment's media sequence number is its IV (RFC 8216, 5.2).
    const iv = Buffer.alloc(16);
    iv.writeBigUInt64BE(BigInt(sequence), 8);
    const frames = await expectAes128Decrypts(dir, `hls-${kind}`, await bytes(`aes128/${init}`), await bytes(`aes128/${segment}`), key, iv);

    // CENC: one ClearKey license gives both keys; ffmpeg decodes the segment with the video key and not without.
    const license = await p.fetch(`${p.baseUrl}/drm/v1/licenses/clearkey`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ kids: [b64url(keyId), b64url(audioKeyId)], type: 'temporary' }),
    });
    expect(license.status).toBe(200);
    const licensed = ((await license.json()) as any).keys as { kid: string; k: string }[];
    const keyOf = (id: string) => Buffer.from(licensed.find((l) => l.kid === b64url(id))!.k, 'base64url');
    expect(keyOf(keyId).equals(key)).toBe(true);
    const audioKey = keyOf(audioKeyId);
    expect(audioKey.equals(key)).toBe(false);
    const mpd = await (await p.fetch(dash.url)).text();
    expect(mpd).toContain(`cenc:default_KID="${keyId}"`);
    expect(mpd).toContain(`cenc:default_KID="${audioKeyId}"`);
    // The audio track: its playlist names the audio key's URL, its CENC segment decodes with the audio key only.
    const audioPlaylist = await (await p.fetch(`${base}aes128/audio.m3u8`)).text();
    expect(audioPlaylist).toContain(`URI="${p.baseUrl}/drm/v1/licenses/aes128/${audioKeyId}"`);
    const audioSegment = audioPlaylist
      .split('\n')
      .filter((l) => l.endsWith('.m4s'))
      .at(-1)!;
    const audioInit = /#EXT-X-MAP:URI="([^"]+)"/.exec(audioPlaylist)![1]!;
    const audioFile = join(dir, `cenc-audio-${kind}.mp4`);
    writeFileSync(audioFile, Buffer.concat([await bytes(`cenc/${audioInit}`), await bytes(`cenc/${audioSegment}`)]));
    const audio = await decode(audioFile, audioKey.toString('hex'), 'a');
    expect(audio.errors).toBe('');
    expect((await decode(audioFile, key.toString('hex'), 'a')).md5).not.toBe(audio.md5);
    const cenc = join(dir, `cenc-${kind}.mp4`);
    writeFileSync(cenc, Buffer.concat([await bytes(`cenc/${init}`), await bytes(`cenc/${segment}`)]));
    // The same frames as the AES-128 segment of the same number (both are the one clear segment); without the key not.
    expect(await decode(cenc, key.toString('hex'))).toEqual(frames);
    expect((await decode(cenc)).md5).not.toBe(frames.md5);
    // cbcs, the same segment again: its MPD says so, ffmpeg decodes it with the same key and not without.
    expect(await (await p.fetch(cbcs.url)).text()).toContain(`value="cbcs" cenc:default_KID="${keyId}"`);
    const cbcsFile = join(dir, `cbcs-${kind}.mp4`);
    writeFileSync(cbcsFile, Buffer.concat([await bytes(`cbcs/${init}`), await bytes(`cbcs/${segment}`)]));
    expect(await decode(cbcsFile, key.toString('hex'))).toEqual(frames);
    expect((await decode(cbcsFile)).md5).not.toBe(frames.md5);
    // SAMPLE-AES: the playlists of those cbcs segments, each track's naming its own key for EME ClearKey.
    const sampleAesKeys: string[] = [];
    for (const [track, id] of [
      ['180p', keyId],
      ['audio', audioKeyId],
    ]) {
      const kid = Buffer.from(id.replace(/-/g, ''), 'hex');
      const text = await (await p.fetch(`${base}cbcs/${track}.m3u8`)).text();
      expect(text).toContain(
        `#EXT-X-KEY:METHOD=SAMPLE-AES,URI="data:text/plain;base64,${kid.toString('base64')}",KEYID=0x${kid.toString('hex')},KEYFORMAT="org.w3.clearkey"`,
      );
      expect(text).not.toContain('METHOD=AES-128');
      sampleAesKeys.push(...asSessionKeys(text));
    }
    // Each protected master playlist names the keys of its media playlists (#EXT-X-SESSION-KEY, RFC 8216bis 4.4.6.5).
    expect(sessionKeysOf(await (await p.fetch(`${base}aes128/master.m3u8`)).text())).toEqual([
      `#EXT-X-SESSION-KEY:METHOD=AES-128,URI="${p.baseUrl}/drm/v1/licenses/aes128/${keyId}"`,
      `#EXT-X-SESSION-KEY:METHOD=AES-128,URI="${p.baseUrl}/drm/v1/licenses/aes128/${audioKeyId}"`,
    ]);
    expect([...asSessionKeys(playlist), ...asSessionKeys(audioPlaylist)]).toEqual(sessionKeysOf(await (await p.fetch(`${base}aes128/master.m3u8`)).text()));
    expect(sessionKeysOf(await (await p.fetch(`${base}cbcs/master.m3u8`)).text())).toEqual(sampleAesKeys);
    expect(sampleAesKeys).toHaveLength(2);
  });

  it('plays the AES-128 endpoint in hls.js with a DRM token, and not without', async () => {
    const played = await play(browser, page.url, hls.url, { seconds: 3, drmToken: token });
    expect(played.error).toBeUndefined();
    expect(played.videoHeight).toBe(180);
    expect(played.times.at(-1)!).toBeGreaterThan(played.times[0]!);
    // Without a token the key request answers 401 (checked above): no picture, the playhead never moves. hls.js
    // reports the key error as fatal only after its level-switch attempts, which may take longer than the sampling.
    const refused = await play(browser, page.url, hls.url, { seconds: 3, drmToken: '' });
    expect(refused.error ?? 'key').toMatch(/key/i);
    expect(refused.videoHeight).toBe(0);
    expect(new Set(refused.times).size, JSON.stringify(refused.times)).toBeLessThanOrEqual(1);
  });

  it('plays the CENC endpoint in dash.js with ClearKey (EME) and a DRM token', async () => {
    const played = await play(browser, page.url, dash.url, { player: 'dash', seconds: 3, drmToken: token });
    expect(played.error).toBeUndefined();
    expect(played.videoHeight).toBe(180);
    expect(played.times.at(-1)!).toBeGreaterThan(played.times[0]!);
  });

  it("plays its ranges (an event's catch-up) encrypted with the channel's key, in hls.js and dash.js", async () => {
    const keyId = hls.protectionDetails.keyIds[0];
    const now = Date.now();
    const event = await t.json('POST', '/live/v1/events', {
      channelId: channel.id,
      start: new Date(now - 6000).toISOString(),
      end: new Date(now - 1000).toISOString(),
    });
    expect(event.status, JSON.stringify(event.body)).toBe(200);
    const endpoints = (await t.json('GET', `/live/v1/events/${event.body.id}`)).body.catchup.endpoints as any[];
    // Both keys (video, audio: AudioVideoKeys), per protected endpoint.
    const details = { keyIds: hls.protectionDetails.keyIds, contentId: channel.id };
    expect(details.keyIds).toHaveLength(2);
    expect(endpoints.map((e) => [e.id, e.format, e.protection, e.protectionDetails])).toEqual([
      ['hls-aes128', 'HLS', 'Aes128', details],
      ['dash-cenc', 'DASH', 'ClearKey', details],
      ['dash-cbcs', 'DASH', 'ClearKey', details],
      ['hls-sample-aes', 'HLS', 'ClearKey', details],
    ]);
    const [rangeHls, rangeDash, , rangeSampleAes] = endpoints.map((e) => e.url as string);
    expect(rangeSampleAes).toMatch(/\/cbcs\/range\/\d+-\d+\/master\.m3u8$/);
    // A range's playlist lists its segments (and their key) once the channel has published the first of the range.
    const sampleAesVariant = await until(
      async () => (await p.fetch(rangeSampleAes.replace('master.m3u8', '180p.m3u8'))).text(),
      (text) => text.includes('.m4s'),
      { timeoutMs: 60_000, what: 'a segment in the SAMPLE-AES range playlist' },
    );
    expect(sampleAesVariant).toContain('#EXT-X-KEY:METHOD=SAMPLE-AES,');
    expect(rangeHls).toMatch(/\/aes128\/range\/\d+-\d+\/master\.m3u8$/);
    // The clear range (the same path without the endpoint's prefix) is not served.
    expect((await p.fetch(rangeHls.replace('/aes128/', '/'))).status).toBe(404);
    expect((await p.fetch(rangeDash.replace('/cenc/', '/'))).status).toBe(404);
    // Each segment's IV is written (a range counts its media sequence from 0).
    const variant = await until(
      async () => (await p.fetch(rangeHls.replace('master.m3u8', '180p.m3u8'))).text(),
      (s) => s.includes('#EXT-X-ENDLIST'),
      { timeoutMs: 30_000, what: 'the range is over' },
    );
    expect(variant).toMatch(new RegExp(`#EXT-X-KEY:METHOD=AES-128,URI="[^"]+/aes128/${keyId}",IV=0x[0-9a-f]{32}`));
    expect(sessionKeysOf(await (await p.fetch(rangeHls)).text())).toEqual([
      ...asSessionKeys(variant),
      ...asSessionKeys(await (await p.fetch(rangeHls.replace('master.m3u8', 'audio.m3u8'))).text()),
    ]);
    expect(sessionKeysOf(await (await p.fetch(rangeSampleAes)).text())).toHaveLength(2);
    expect(await (await p.fetch(rangeDash)).text()).toContain(`cenc:default_KID="${keyId}"`);
    for (const [url, player, clearKeyLicenseUrl] of [
      [rangeHls, 'hls'],
      [rangeDash, 'dash'],
      [rangeSampleAes, 'hls', `${p.baseUrl}/drm/v1/licenses/clearkey`],
    ] as const) {
      const played = await play(browser, page.url, url, { player, seconds: 30, untilAdvanced: 1, drmToken: token, clearKeyLicenseUrl });
      expect(played.error, player).toBeUndefined();
      expect(played.videoHeight, player).toBe(180);
      expect(played.times.at(-1)! - played.times[0]!, player).toBeGreaterThan(0);
    }
  });

  drmRecordingCases(() => ({ p, t, browser, page, channel, hls, dir, kind }));

  it('plays the cbcs endpoint in dash.js with ClearKey (EME: Chromium decrypts cbcs) and not without a token', async () => {
    const played = await play(browser, page.url, cbcs.url, { player: 'dash', seconds: 3, drmToken: token });
    expect(played.error).toBeUndefined();
    expect(played.videoHeight).toBe(180);
    expect(played.times.at(-1)!).toBeGreaterThan(played.times[0]!);
    // Without a token the license is refused: the init segment gives the picture's size, but the playhead never moves
    // (dash.js may place it once, at the live edge, before it stalls).
    const refused = await play(browser, page.url, cbcs.url, { player: 'dash', seconds: 3, drmToken: '' });
    expect(new Set(refused.times.filter((x) => x > 0)).size, JSON.stringify(refused.times)).toBeLessThanOrEqual(1);
  });

  it('plays the SAMPLE-AES endpoint in hls.js through EME ClearKey (both keys) with a DRM token, and not without', async () => {
    const clearKeyLicenseUrl = `${p.baseUrl}/drm/v1/licenses/clearkey`;
    const played = await play(browser, page.url, sampleAes.url, { seconds: 3, drmToken: token, clearKeyLicenseUrl });
    expect(played.error).toBeUndefined();
    expect(played.videoHeight).toBe(180);
    expect(played.times.at(-1)!).toBeGreaterThan(played.times[0]!);
    const refused = await play(browser, page.url, sampleAes.url, { seconds: 2, drmToken: '', clearKeyLicenseUrl });
    expect(refused.error).toMatch(/keySystemLicenseRequestFailed/);
    expect(new Set(refused.times).size, JSON.stringify(refused.times)).toBeLessThanOrEqual(1);
  });

  it("counts the players' key and license requests for the channel in the DRM statistics", async () => {
    const q = `from=${new Date(Date.now() - 600_000).toISOString()}&to=${new Date(Date.now() + 60_000).toISOString()}`;
    const count = (await t.json('GET', `/drm/v1/statistics/license-count?${q}`)).body;
    // The test's own requests (one of each) and the players' (hls.js: the key; dash.js: a ClearKey license).
    expect(count.byType.Aes128).toBeGreaterThanOrEqual(2);
    expect(count.byType.ClearKey).toBeGreaterThanOrEqual(2);
    const requests = (await t.json('GET', `/drm/v1/statistics/license-requests?${q}&limit=100`)).body;
    expect(new Set(requests.items.map((r: any) => r.contentId))).toEqual(new Set([channel.id]));
  });
});
