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
 * Encrypted VOD outputs end to end: an `HlsDrm` (AES-128) and a `DashDrm` (CENC cenc) asset transcoded from one
 * clip, played in headless Chromium by hls.js and by dash.js with ClearKey (EME) with a DRM token, refused without
 * one; the segments decrypt with ffmpeg given the key; the license statistics count the requests.
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
  const started = new Date(Date.now() - 1000).toISOString();

  beforeAll(async () => {
    [p, browser, page] = await Promise.all([startPlatform(kind, { MEDIAPLANE_SWEEP_INTERVAL_MS: '500' }), launchBrowser(), servePlayerPage()]);
    t = await p.createTenant();
    other = await p.createTenant();
    const clip = await makeClip(dir, `clip-${kind}`, { width: 320, height: 180, seconds: 3, audio: [{ language: 'eng', frequency: 440 }] });
    const fileId = await uploadFile(t, clip);
    const tracks = (await t.json('POST', `/vod/v1/files/${fileId}/detect`)).body.tracks;
    const audio = tracks.filter((x: any) => x.type === 'Audio');
    const create = async (preset: string) => {
      const r = await t.json('POST', '/vod/v1/assets', { transcodedSources: [{ fileId, transcodingTracks: audio }], preset, title: preset });
      expect(r.status).toBe(200);
      return r.body.id as string;
    };
    const ids = [
      await create('hls-h264-ladder-aes128'),
      await create('dash-h264-ladder-cenc'),
      await create('dash-h264-ladder-cbcs'),
      await create('cmaf-h264-ladder-cbcs'),
    ];
    [hls, dash, cbcs, cmaf] = await Promise.all(ids.map((id) => waitAsset(t, id)));
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
    expect(dash.endpoints[0]).toMatchObject({ format: 'DASH', protection: 'ClearKey', type: 'DashDrm', protectionDetails: { contentId: dash.id } });
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
    expect(mpd).toContain(`cenc:default_KID="${dash.endpoints[0].protectionDetails.keyIds[0]}"`);
    expect(mpd).toContain(`urn:uuid:e2719d58-a985-b3c9-781a-b030af78d30e`);
  });

  it('decrypts with ffmpeg given the key from a ClearKey license, and not without it', async () => {
    const keyId = dash.endpoints[0].protectionDetails.keyIds[0];
    const res = await fetch(`${p.baseUrl}/drm/v1/licenses/clearkey`, {
      method: 'POST',
      headers: { authorization: `Bearer ${await token(dash.id)}`, 'content-type': 'application/json' },
      body: JSON.stringify({ kids: [b64url(keyId)], type: 'temporary' }),
    });
    expect(res.status).toBe(200);
    const license = await res.json();
    expect(license.keys).toEqual([{ kty: 'oct', kid: b64url(keyId), k: expect.any(String) }]);
    const keyHex = Buffer.from(license.keys[0].k, 'base64url').toString('hex');
    const base = dash.endpoints[0].url.replace(/manifest\.mpd$/, '');
    const file = join(dir, `dash-${kind}.mp4`);
    const bytes = async (name: string) => Buffer.from(await (await fetch(base + name)).arrayBuffer());
    writeFileSync(file, Buffer.concat([await bytes('init-0.m4s'), await bytes('chunk-0-00001.m4s')]));
    const decoded = await run('ffmpeg', ['-v', 'error', '-decryption_key', keyHex, '-i', file, '-f', 'null', '-']);
    expect(decoded.stderr).toBe('');
    const garbled = await run('ffmpeg', ['-v', 'error', '-i', file, '-f', 'null', '-']).catch((e) => e);
    expect(String(garbled.stderr)).not.toBe('');
  });

  it('plays HlsDrm with hls.js (AES-128) with a token, and not without', async () => {
    const played = await play(browser, page.url, hls.endpoints[0].url, { seconds: 3, drmToken: await token(hls.id) });
    expect(played.error).toBeUndefined();
    expect(Math.max(...played.times)).toBeGreaterThan(1);
    const refused = await play(browser, page.url, hls.endpoints[0].url, { seconds: 3, drmToken: '' });
    expect(refused.error).toMatch(/key/i);
    expect(Math.max(0, ...refused.times)).toBeLessThan(0.5);
  });

  it('plays DashDrm with dash.js and ClearKey (EME) with a token, and not without', async () => {
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
    const details = { contentId: cmaf.id, keyIds: [expect.stringMatching(/^[0-9a-f-]{36}$/)] };
    expect(cmaf.endpoints.map((e: any) => [e.format, e.type, e.protection])).toEqual([
      ['HLS', 'HlsDrm', 'ClearKey'],
      ['DASH', 'DashDrm', 'ClearKey'],
    ]);
    for (const e of cmaf.endpoints) expect(e).toMatchObject({ isDrmProtected: true, drmKeyMode: 'SingleKey', protectionDetails: details });
    const kid = Buffer.from(cmaf.endpoints[0].protectionDetails.keyIds[0].replace(/-/g, ''), 'hex');
    const { text } = await cmafPlaylist();
    const keyLine = `#EXT-X-KEY:METHOD=SAMPLE-AES,URI="data:text/plain;base64,${kid.toString('base64')}",KEYID=0x${kid.toString('hex')},KEYFORMAT="org.w3.clearkey",KEYFORMATVERSIONS="1"`;
    // The initialisation segment is clear: the key covers the media segments only.
    expect(text.indexOf(keyLine)).toBeGreaterThan(text.indexOf('#EXT-X-MAP:'));
    expect(text.indexOf(keyLine)).toBeLessThan(text.indexOf('#EXTINF:'));
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
