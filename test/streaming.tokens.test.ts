import { decodeJwt, decodeProtectedHeader, SignJWT } from 'jose';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { launchBrowser } from './helpers/browser.ts';
import { makeClip, tempDir } from './helpers/media.ts';
import { describeEachDb, startPlatform, type TestPlatform, type TestTenant } from './helpers/platform.ts';
import { uploadFile } from './helpers/upload.ts';
import { endpointOf, vodAssets } from './helpers/commands.ts';

const inSeconds = (s: number) => Math.floor(Date.now() / 1000) + s;
/** A token as a tenant's own server signs it from the README's description. */
const selfSigned = (key: string, sub: string, header: { kid?: string } = {}) =>
  new SignJWT({})
    .setProtectedHeader({ alg: 'HS256', ...header })
    .setSubject(sub)
    .setExpirationTime(inSeconds(600))
    .sign(new TextEncoder().encode(key));

/** The first segment a player would fetch: the HLS master, its first variant, its first segment. */
async function firstSegment(master: string): Promise<Response> {
  let url = master;
  for (;;) {
    const res = await fetch(url);
    if (!url.endsWith('.m3u8')) return res;
    if (res.status !== 200) return res;
    const line = (await res.text()).split('\n').find((l) => l && !l.startsWith('#'))!;
    url = new URL(line.trim(), url).toString();
  }
}

/**
 * Playback tokens without hand-built JWTs: `POST /streaming/v1/tokens` (token and ready-to-play URLs), the JWT as
 * documented for those who sign their own, signing-key rotation with an overlap (`kid`), and the embed page saying in
 * words that a token is needed.
 */
describeEachDb('Streaming playback tokens', (kind) => {
  const { dir, cleanup } = tempDir('mediaplane-tokens-');
  let p: TestPlatform;
  let t: TestTenant;
  let other: TestTenant;
  let assetId: string;
  let browser: Browser | undefined;

  beforeAll(async () => {
    p = await startPlatform(kind);
    t = await p.createTenant();
    other = await p.createTenant();
    const fileId = await uploadFile(t, await makeClip(dir, 'clip', { seconds: 4, fps: 15, audio: [] }));
    assetId = (await vodAssets(t).create({ transcodedSources: [{ fileId }], preset: 'remux-hls-mp4', title: 'Private' })).id;
    await vodAssets(t).settled(assetId, 90_000);
    expect((await t.json('PATCH', `/streaming/v1/assets/${assetId}/settings`, { tokenRequired: 'Enabled' })).status).toBe(200);
  }, 180_000);
  afterAll(async () => {
    await browser?.close();
    await p?.stop();
    cleanup();
  });

  it('POST /streaming/v1/tokens answers a token and URLs that play; the JWT is the documented one', async () => {
    const hls = endpointOf(await vodAssets(t).get(assetId), 'HLS').url;
    expect((await fetch(hls)).status).toBe(401);

    const before = Date.now();
    const r = await t.json('POST', '/streaming/v1/tokens', { assetId, expiresInSeconds: 600, sessionId: 'tab-1', viewerId: 'ada' });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const { token, keyId, hlsUrl, embedUrl, sourceConfigUrl, expirationDate } = r.body;
    expect(r.body.assetId).toBe(assetId);
    expect(Math.abs(Date.parse(expirationDate) - (before + 600_000))).toBeLessThan(60_000);
    // The URLs play: the manifest and, through its relative URLs, a segment.
    expect(hlsUrl).toContain(`/token=${token}/`);
    expect((await firstSegment(hlsUrl)).status).toBe(200);
    expect((await fetch(embedUrl)).status).toBe(200);
    expect(await (await fetch(sourceConfigUrl)).json()).toMatchObject({ tokenRequired: true, playbackRefusal: null });
    // The JWT: HS256 with the key's kid; sub, exp, iat, and sid, vid as asked.
    const settings = (await t.json('GET', '/streaming/v1/settings')).body.contentAcquisitionInfo.authorization;
    expect(decodeProtectedHeader(token)).toEqual({ alg: 'HS256', typ: 'JWT', kid: settings.signingKeyId });
    expect(keyId).toBe(settings.signingKeyId);
    expect(decodeJwt(token)).toEqual({ sub: assetId, exp: expect.any(Number), iat: expect.any(Number), sid: 'tab-1', vid: 'ada' });

    // A token signed by the tenant itself, as documented, with or without the kid.
    for (const header of [{}, { kid: settings.signingKeyId }]) {
      const own = await selfSigned(settings.signingKey, assetId, header);
      const played = await firstSegment(hls.replace(/\/([^/]+)$/, `/token=${own}/$1`));
      expect(played.status, JSON.stringify(header)).toBe(200);
    }
  });

  it('refuses what it cannot sign: another tenant asset (404), a bad lifetime or asset id (400)', async () => {
    expect((await other.json('POST', '/streaming/v1/tokens', { assetId })).body.status).toMatchObject({ code: 'streaming_asset_not_found', status: 404 });
    for (const body of [{ assetId, expiresInSeconds: 5 }, { assetId, expiresInSeconds: 86_401 }, { assetId: 'a/b' }, {}, { assetId, sessionId: '' }]) {
      const r = await t.json('POST', '/streaming/v1/tokens', body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.status.code).toBe('validation_failed');
    }
  });

  it('rotates the signing key: tokens of the old key play during the overlap, then are refused', async () => {
    const old = (await t.json('POST', '/streaming/v1/tokens', { assetId })).body;
    const oldKey = (await t.json('GET', '/streaming/v1/settings')).body.contentAcquisitionInfo.authorization.signingKey;
    const rotated = await t.json('POST', '/streaming/v1/settings/signing-key/rotate', { overlapSeconds: 3600 });
    expect(rotated.status).toBe(200);
    expect(rotated.body).toMatchObject({
      signingKey: expect.any(String),
      previousSigningKeyId: old.keyId,
      previousSigningKeyExpirationDate: expect.any(String),
    });
    expect(rotated.body.signingKey).not.toBe(oldKey);
    const fresh = (await t.json('POST', '/streaming/v1/tokens', { assetId })).body;
    expect(fresh.keyId).toBe(rotated.body.signingKeyId);
    expect(fresh.keyId).not.toBe(old.keyId);
    // Both keys verify during the overlap, with a kid and without one.
    expect((await firstSegment(old.hlsUrl)).status).toBe(200);
    expect((await firstSegment(fresh.hlsUrl)).status).toBe(200);
    const oldNoKid = await selfSigned(oldKey, assetId);
    expect((await fetch(`${old.sourceConfigUrl.split('?')[0]}?token=${oldNoKid}`).then((r) => r.json())).playbackRefusal).toBeNull();

    // Another rotation without overlap: only the newest key verifies.
    const again = await t.json('POST', '/streaming/v1/settings/signing-key/rotate', { overlapSeconds: 0 });
    expect(again.body).toMatchObject({ previousSigningKeyId: null, previousSigningKeyExpirationDate: null });
    for (const url of [old.hlsUrl, fresh.hlsUrl]) {
      const refused = await fetch(url);
      expect(refused.status).toBe(403);
      expect((await refused.json()).status.code).toBe('playback_token_invalid');
    }
    expect((await firstSegment((await t.json('POST', '/streaming/v1/tokens', { assetId })).body.hlsUrl)).status).toBe(200);
    // Without a body, the default overlap applies.
    expect((await t.call('POST', '/streaming/v1/settings/signing-key/rotate')).status).toBe(200);
  });

  it('the embed page says in words that a token is needed, or expired, and plays with the one the API gives', async () => {
    const source = (query = '') => fetch(`${p.baseUrl}/player/v1/${t.id}/${assetId}/source${query}`).then((r) => r.json());
    expect((await source()).playbackRefusal).toContain('needs a playback token');
    const key = (await t.json('GET', '/streaming/v1/settings')).body.contentAcquisitionInfo.authorization.signingKey;
    const expired = await new SignJWT({})
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(assetId)
      .setExpirationTime(inSeconds(-60))
      .sign(new TextEncoder().encode(key));
    expect((await source(`?token=${expired}`)).playbackRefusal).toContain('has expired');

    browser = await launchBrowser();
    const view = async (url: string) => {
      const page = await browser!.newPage();
      try {
        await page.goto(url);
        await page.waitForFunction(
          () => (document.getElementById('video') as HTMLVideoElement).currentTime > 1 || document.getElementById('message')!.className === 'shown',
          null,
          { timeout: 60_000 },
        );
        return await page.evaluate(() => ({
          currentTime: (document.getElementById('video') as HTMLVideoElement).currentTime,
          message: document.getElementById('message')!.className === 'shown' ? document.getElementById('message')!.textContent : null,
        }));
      } finally {
        await page.close();
      }
    };
    const without = await view(`${p.baseUrl}/player/v1/${t.id}/${assetId}?Muted=true&Autoplay=true`);
    expect(without.message).toContain('This video needs a playback token');
    expect(without.message).not.toContain('manifestLoadError');
    const { embedUrl } = (await t.json('POST', '/streaming/v1/tokens', { assetId })).body;
    const played = await view(`${embedUrl}&Muted=true&Autoplay=true`);
    expect(played).toMatchObject({ message: null });
    expect(played.currentTime).toBeGreaterThan(1);
  }, 180_000);
});
