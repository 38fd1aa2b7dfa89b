import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { launchBrowser, play, servePlayerPage } from './helpers/browser.ts';
import { makeClip, tempDir } from './helpers/media.ts';
import { describeOnDb, startPlatform, type TestPlatform, type TestTenant } from './helpers/platform.ts';
import { uploadFile } from './helpers/upload.ts';
import { until } from './helpers/until.ts';

const run = promisify(execFile);
const { dir } = tempDir('mediaplane-drm-');

async function waitAsset(t: TestTenant, id: string) {
  return (
    await until(
      () => t.json('GET', `/vod/v1/assets/${id}`),
      (r) => ['Available', 'Error'].includes(r.body?.status),
      { timeoutMs: 90_000 },
    )
  ).body;
}

const b64url = (hex: string) => Buffer.from(hex.replace(/-/g, ''), 'hex').toString('base64url');

/**
 * Encrypted VOD outputs end to end: an `HlsDrm` (AES-128) and a `DashDrm` (CENC cenc, drmKeyMode AudioVideoKeys)
 * asset transcoded from one clip, played in headless Chromium by hls.js and by dash.js with ClearKey (EME) with a DRM
 * token, refused without one; the segments decrypt with ffmpeg given their track's key only; the license statistics
 * count the requests.
 */
describeOnDb('pglite', 'DRM: encrypted VOD outputs that play', (kind) => {
  let p: TestPlatform;
  let t: TestTenant;
  let other: TestTenant;
  let browser: Browser;
  let page: { url: string; close(): Promise<void> };
  let hls: any;
  let dash: any;
  let cbcs: any;
  let cmaf: any;
  let create: (preset: string, more?: object) => Promise<{ status: number; body: any }>;
  const started = new Date(Date.now() - 1000).toISOString();

  beforeAll(async () => {
    [p, browser, page] = await Promise.all([startPlatform(kind, { MEDIAPLANE_SWEEP_INTERVAL_MS: '500' }), launchBrowser(), servePlayerPage()]);
    t = await p.createTenant();
    other = await p.createTenant();
    const clip = await makeClip(dir, `clip-${kind}`, { width: 320, height: 180, seconds: 3, audio: [{ language: 'eng', frequency: 440 }] });
    const fileId = await uploadFile(t, clip);
    const tracks = (await t.json('POST', `/vod/v1/files/${fileId}/detect`)).body.tracks;
    const audio = tracks.filter((x: any) => x.type === 'Audio');
    create = (preset, more = {}) =>
      t.json('POST', '/vod/v1/assets', { transcodedSources: [{ fileId, transcodingTracks: audio }], preset, title: preset, ...more });
    const id = async (preset: string, more?: object) => {
      const r = await create(preset, more);
      expect(r.status).toBe(200);
      return r.body.id as string;
    };
    const ids = [
      await id('hls-h264-ladder-aes128'),
      await id('dash-h264-ladder-cenc', { drmKeyMode: 'AudioVideoKeys' }),
      await id('dash-h264-ladder-cbcs'),
      // SAMPLE-AES with a key per track: hls.js licenses both from the one ClearKey request.
      await id('cmaf-h264-ladder-cbcs', { drmKeyMode: 'AudioVideoKeys' }),
    ];
    [hls, dash, cbcs, cmaf] = await Promise.all(ids.map((x) => waitAsset(t, x)));
    // Two transcodes on a machine that other test files share: the bound is the assets' own wait, not the hook's.
  }, 240_000);
  afterAll(async () => {
    await Promise.all([browser?.close(), page?.close()]);
    await p?.stop();
  });

  const token = async (assetId: string, tenant = t) => (await tenant.json('POST', '/drm/v1/tokens', { assetId })).body.token as string;

  it('describes encrypted endpoints: protection, key ids, content id, SingleKey', () => {
    expect(hls.status).toBe('Available');
    expect(dash.status).toBe('Available');
    expect(hls.endpoints[0]).toMatchObject({
      format: 'HLS',
      protection: 'Aes128',
      type: 'HlsDrm',
      isDrmProtected: true,
      drmKeyMode: 'SingleKey',
      protectionDetails: { contentId: hls.id, keyIds: [expect.stringMatching(/^[0-9a-f-]{36}$/)] },
    });
    expect(hls.drmKeyMode).toBe('SingleKey');
    // AudioVideoKeys: the video key id first (the content's first key, as SingleKey's), then the audio one.
    const [keyId, audioKeyId] = dash.endpoints[0].protectionDetails.keyIds;
    expect(audioKeyId).toMatch(/^[0-9a-f-]{36}$/);
    expect(audioKeyId).not.toBe(keyId);
    expect(dash).toMatchObject({ drmKeyMode: 'AudioVideoKeys' });
    expect(dash.endpoints[0]).toMatchObject({
      format: 'DASH',
      protection: 'ClearKey',
      type: 'DashDrm',
      isDrmProtected: true,
      drmKeyMode: 'AudioVideoKeys',
      protectionDetails: { contentId: dash.id, keyIds: [keyId, audioKeyId] },
    });
  });

  it('refuses a drmKeyMode it does not know with 400 validation_failed', async () => {
    const r = await create('dash-h264-ladder-cenc', { drmKeyMode: 'PerTrack' });
    expect(r.status).toBe(400);
    expect(r.body.status.code).toBe('validation_failed');
    expect(r.body.errors.map((e: any) => e.field)).toEqual(['drmKeyMode']);
  });

  it('lists the encrypted assets as isDrm in the streaming catalogue', async () => {
    const drm = await t.json('GET', '/streaming/v1/assets?isDrm=true&types=Vod');
    expect(drm.body.items.map((a: any) => a.id).sort()).toEqual([hls.id, dash.id, cbcs.id, cmaf.id].sort());
    expect((await t.json('GET', `/streaming/v1/assets/${dash.id}`)).body.isDrm).toBe(true);
  });

  it('writes what players need: EXT-X-KEY in HLS, ContentProtection in the MPD, encrypted segments', async () => {
    const master = await (await fetch(hls.endpoints[0].url)).text();
    const media = master.split('\n').find((l) => l.endsWith('.m3u8') && !l.startsWith('#'))!;
    const playlist = await (await fetch(new URL(media, hls.endpoints[0].url))).text();
    const keyId = hls.endpoints[0].protectionDetails.keyIds[0];
    expect(playlist).toContain(`#EXT-X-KEY:METHOD=AES-128,URI="${p.baseUrl}/drm/v1/licenses/aes128/${keyId}"`);
    const mpd = await (await fetch(dash.endpoints[0].url)).text();
    // AudioVideoKeys: each adaptation set names its own key.
    const [videoKeyId, audioKeyId] = dash.endpoints[0].protectionDetails.keyIds;
    expect(/contentType="video"[^]*?cenc:default_KID="([^"]+)"/.exec(mpd)?.[1]).toBe(videoKeyId);
    expect(/contentType="audio"[^]*?cenc:default_KID="([^"]+)"/.exec(mpd)?.[1]).toBe(audioKeyId);
    expect(mpd).toContain(`urn:uuid:e2719d58-a985-b3c9-781a-b030af78d30e`);
  });

  it('answers both keys in one ClearKey license; ffmpeg decrypts video with the video key only, audio with the audio key only', async () => {
    const [keyId, audioKeyId] = dash.endpoints[0].protectionDetails.keyIds;
    const res = await fetch(`${p.baseUrl}/drm/v1/licenses/clearkey`, {
      method: 'POST',
      headers: { authorization: `Bearer ${await token(dash.id)}`, 'content-type': 'application/json' },
      body: JSON.stringify({ kids: [b64url(keyId), b64url(audioKeyId)], type: 'temporary' }),
    });
    expect(res.status).toBe(200);
    const license = await res.json();
    expect(license.keys).toEqual([
      { kty: 'oct', kid: b64url(keyId), k: expect.any(String) },
      { kty: 'oct', kid: b64url(audioKeyId), k: expect.any(String) },
    ]);
    const [videoKey, audioKey] = license.keys.map((k: any) => Buffer.from(k.k, 'base64url').toString('hex'));
    expect(audioKey).not.toBe(videoKey);
    const base = dash.endpoints[0].url.replace(/manifest\.mpd$/, '');
    const bytes = async (name: string) => Buffer.from(await (await fetch(base + name)).arrayBuffer());
    const mpd = await (await fetch(dash.endpoints[0].url)).text();
    const audioRep = /contentType="audio"[^]*?<Representation id="([^"]+)"/.exec(mpd)![1]!;
    /** Decodes one stream of the first segment of a representation: its errors and the md5 of what it decoded. */
    const decode = async (rep: string, stream: 'v' | 'a', key?: string) => {
      const file = join(dir, `dash-${rep}-${kind}.mp4`);
      writeFileSync(file, Buffer.concat([await bytes(`init-${rep}.m4s`), await bytes(`chunk-${rep}-00001.m4s`)]));
      const args = [...(key ? ['-decryption_key', key] : []), '-i', file, '-map', `0:${stream}`, '-f', 'md5', '-'];
      const out = await run('ffmpeg', ['-v', 'error', ...args]).catch((e) => e);
      return { errors: String(out.stderr), md5: String(out.stdout).trim() };
    };
    const video = await decode('0', 'v', videoKey);
    expect(video.errors).toBe('');
    expect(video.md5).toMatch(/^MD5=/);
    expect((await decode('0', 'v', audioKey)).md5).not.toBe(video.md5);
    expect((await decode('0', 'v')).md5).not.toBe(video.md5);
    const audio = await decode(audioRep, 'a', audioKey);
    expect(audio.errors).toBe('');
    expect(audio.md5).toMatch(/^MD5=/);
    expect((await decode(audioRep, 'a', videoKey)).md5).not.toBe(audio.md5);
  });

  it('plays HlsDrm with hls.js (AES-128) with a token, and not without', async () => {
    const played = await play(browser, page.url, hls.endpoints[0].url, { seconds: 3, drmToken: await token(hls.id) });
    expect(played.error).toBeUndefined();
    expect(Math.max(...played.times)).toBeGreaterThan(1);
    const refused = await play(browser, page.url, hls.endpoints[0].url, { seconds: 3, drmToken: '' });
    expect(refused.error).toMatch(/key/i);
    expect(Math.max(0, ...refused.times)).toBeLessThan(0.5);
  });

  it('plays DashDrm (AudioVideoKeys) with dash.js and ClearKey (EME) with a token, and not without', async () => {
    const played = await play(browser, page.url, dash.endpoints[0].url, { player: 'dash', seconds: 3, drmToken: await token(dash.id) });
    expect(played.error).toBeUndefined();
    expect(Math.max(...played.times)).toBeGreaterThan(1);
    expect(played.videoHeight).toBeGreaterThan(0);
    const refused = await play(browser, page.url, dash.endpoints[0].url, { player: 'dash', seconds: 3, drmToken: '' });
    expect(Math.max(0, ...refused.times)).toBe(0);
  });

  it('plays DashDrm cbcs with dash.js and ClearKey (EME)', async () => {
    expect(cbcs.endpoints[0]).toMatchObject({ protection: 'ClearKey', type: 'DashDrm' });
    const played = await play(browser, page.url, cbcs.endpoints[0].url, { player: 'dash', seconds: 3, drmToken: await token(cbcs.id) });
    expect(played.error).toBeUndefined();
    expect(Math.max(...played.times)).toBeGreaterThan(1);
  });

  /** The SAMPLE-AES media playlist of the CMAF output's first rung, and the URL it is relative to. */
  const cmafPlaylist = async () => {
    const master = await (await fetch(cmaf.endpoints[0].url)).text();
    const url = new URL(
      master.split('\n').find((l) => l.endsWith('.m3u8') && !l.startsWith('#'))!,
      cmaf.endpoints[0].url,
    );
    return { url, text: await (await fetch(url)).text() };
  };

  it('describes the CMAF cbcs output: an HlsDrm (SAMPLE-AES) and a DashDrm endpoint over one set of segments', async () => {
    expect(cmaf.status).toBe('Available');
    const uuid = expect.stringMatching(/^[0-9a-f-]{36}$/);
    const details = { contentId: cmaf.id, keyIds: [uuid, uuid] };
    expect(cmaf.endpoints.map((e: any) => [e.format, e.type, e.protection])).toEqual([
      ['HLS', 'HlsDrm', 'ClearKey'],
      ['DASH', 'DashDrm', 'ClearKey'],
    ]);
    for (const e of cmaf.endpoints) expect(e).toMatchObject({ isDrmProtected: true, drmKeyMode: 'AudioVideoKeys', protectionDetails: details });
    const [keyId, audioKeyId] = cmaf.endpoints[0].protectionDetails.keyIds;
    expect(audioKeyId).not.toBe(keyId);
    const keyLine = (id: string) => {
      const kid = Buffer.from(id.replace(/-/g, ''), 'hex');
      return `#EXT-X-KEY:METHOD=SAMPLE-AES,URI="data:text/plain;base64,${kid.toString('base64')}",KEYID=0x${kid.toString('hex')},KEYFORMAT="org.w3.clearkey",KEYFORMATVERSIONS="1"`;
    };
    const { text } = await cmafPlaylist();
    // The initialisation segment is clear: the key covers the media segments only.
    expect(text.indexOf(keyLine(keyId))).toBeGreaterThan(text.indexOf('#EXT-X-MAP:'));
    expect(text.indexOf(keyLine(keyId))).toBeLessThan(text.indexOf('#EXTINF:'));
    // The audio playlist names the audio key.
    const master = await (await fetch(cmaf.endpoints[0].url)).text();
    const audioUri = /#EXT-X-MEDIA:TYPE=AUDIO[^\n]*URI="([^"]+)"/.exec(master)![1];
    expect(await (await fetch(new URL(audioUri, cmaf.endpoints[0].url))).text()).toContain(keyLine(audioKeyId));
    expect(await (await fetch(cmaf.endpoints[1].url)).text()).toContain('value="cbcs"');
  });

  it('plays HlsDrm SAMPLE-AES (cbcs fMP4) with hls.js through EME ClearKey with a token, and not without', async () => {
    const clearKeyLicenseUrl = `${p.baseUrl}/drm/v1/licenses/clearkey`;
    const url = cmaf.endpoints[0].url;
    const played = await play(browser, page.url, url, { seconds: 4, untilAdvanced: 1.5, drmToken: await token(cmaf.id), clearKeyLicenseUrl });
    console.log(`hls.js SAMPLE-AES: playhead ${JSON.stringify(played.times)}, ${played.videoWidth}x${played.videoHeight}`);
    expect(played.error).toBeUndefined();
    expect(Math.max(...played.times)).toBeGreaterThan(1);
    expect(played.videoHeight).toBeGreaterThan(0);
    const refused = await play(browser, page.url, url, { seconds: 2, drmToken: '', clearKeyLicenseUrl });
    console.log(`hls.js SAMPLE-AES without a token: ${refused.error}, playhead ${JSON.stringify(refused.times)}`);
    expect(refused.error).toMatch(/keySystemError: keySystemLicenseRequestFailed/);
    expect(Math.max(0, ...refused.times)).toBe(0);
  });

  it('plays the CMAF cbcs output as DashDrm with dash.js', async () => {
    const played = await play(browser, page.url, cmaf.endpoints[1].url, { player: 'dash', seconds: 4, untilAdvanced: 1.5, drmToken: await token(cmaf.id) });
    expect(played.error).toBeUndefined();
    expect(Math.max(...played.times)).toBeGreaterThan(1);
  });

  it('serves SAMPLE-AES segments that ffmpeg decodes with the licensed key only', async () => {
    const keyId = cmaf.endpoints[0].protectionDetails.keyIds[0];
    const res = await fetch(`${p.baseUrl}/drm/v1/licenses/clearkey`, {
      method: 'POST',
      // As hls.js sends it: the CDM's message, no Content-Type.
      headers: { authorization: `Bearer ${await token(cmaf.id)}` },
      body: new Uint8Array(Buffer.from(JSON.stringify({ kids: [b64url(keyId)], type: 'temporary' }))),
    });
    expect(res.status).toBe(200);
    const keyHex = Buffer.from((await res.json()).keys[0].k, 'base64url').toString('hex');
    const { url, text } = await cmafPlaylist();
    const init = /#EXT-X-MAP:URI="([^"]+)"/.exec(text)![1];
    const first = text.split('\n').find((l) => l.endsWith('.m4s') && !l.startsWith('#'))!;
    const bytes = async (name: string) => Buffer.from(await (await fetch(new URL(name, url))).arrayBuffer());
    const file = join(dir, `cmaf-${kind}.mp4`);
    writeFileSync(file, Buffer.concat([await bytes(init), await bytes(first)]));
    const md5 = (key?: string) => run('ffmpeg', ['-v', 'error', ...(key ? ['-decryption_key', key] : []), '-i', file, '-map', '0:v', '-f', 'md5', '-']);
    const decoded = await md5(keyHex);
    expect(decoded.stderr).toBe('');
    const garbled = await md5().catch((e) => e);
    expect(String(garbled.stderr)).not.toBe('');
    expect(garbled.stdout).not.toBe(decoded.stdout);
  });

  it("refuses another tenant's token for these keys", async () => {
    const keyId = hls.endpoints[0].protectionDetails.keyIds[0];
    // The other tenant has no such content: it cannot even get a token for it.
    expect((await other.json('POST', '/drm/v1/tokens', { assetId: hls.id })).status).toBe(404);
    const res = await fetch(`${p.baseUrl}/drm/v1/licenses/aes128/${keyId}?token=${await token(dash.id)}`);
    expect(res.status).toBe(403);
    expect((await res.json()).status.code).toBe('drm_key_not_allowed');
  });

  it('counts the license requests in the statistics', async () => {
    const q = `from=${started}&to=${new Date(Date.now() + 60_000).toISOString()}`;
    const count = (await t.json('GET', `/drm/v1/statistics/license-count?${q}`)).body;
    expect(count.byType.Aes128).toBeGreaterThanOrEqual(1);
    expect(count.byType.ClearKey).toBeGreaterThanOrEqual(2);
    const metrics = (await t.json('GET', `/drm/v1/statistics/license-metrics?${q}`)).body;
    expect(metrics.licenses).toBe(count.count);
    expect(metrics.errors).toBeGreaterThanOrEqual(1);
    const codes = (await t.json('GET', `/drm/v1/statistics/license-error-codes?${q}`)).body;
    expect(codes.items.map((x: any) => x.errorCode)).toContain('drm_key_not_allowed');
    const requests = (await t.json('GET', `/drm/v1/statistics/license-requests?${q}&limit=100`)).body;
    expect(requests.totalCount).toBe(metrics.licenseRequests);
    const histogram = (await t.json('GET', `/drm/v1/statistics/requests-histogram?${q}&interval=Minute`)).body;
    expect(histogram.items.reduce((n: number, x: any) => n + x.requests, 0)).toBe(metrics.licenseRequests);
    // The other tenant's statistics are its own.
    expect((await other.json('GET', `/drm/v1/statistics/license-metrics?${q}`)).body.licenseRequests).toBe(0);
  });
});
