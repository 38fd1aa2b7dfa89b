import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { launchBrowser } from './helpers/browser.ts';
import { readQrCode } from './helpers/qr.ts';
import { makeClip, tempDir } from './helpers/media.ts';
import { describeOnDb, startPlatform, type TestPlatform, type TestTenant } from './helpers/platform.ts';
import { uploadFile } from './helpers/upload.ts';
import { until } from './helpers/until.ts';

const { dir, cleanup } = tempDir('mediaplane-player-');
afterAll(cleanup);

/** What a phone's camera reads of the PNG (readQrCode). */
async function scan(png: Buffer, name: string): Promise<string> {
  const file = join(dir, `${name}.png`);
  writeFileSync(file, png);
  return readQrCode(file);
}

/**
 * The embed page in headless Chromium: it plays a tiny VOD asset, its beacons feed the analytics operations, and the
 * platform refuses pages from domains the tenant did not allow. The QR code of the asset opens that page.
 */
describeOnDb('postgres', 'Embed player', (kind) => {
  let p: TestPlatform;
  let t: TestTenant;
  let browser: Browser;
  let assetId: string;
  let embed: string;

  const figure = async (path: string, body: unknown) => {
    const r = await t.json('POST', `/streaming/v1/analytics/${path}`, body);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return r.body.rows[0]?.at(-1) as number;
  };
  const onAsset = () => [{ name: 'ASSET_ID', operator: 'EQ', value: assetId }];

  /** Opens the embed page and waits for the video to play to its end. */
  async function watch(screenshot?: string): Promise<Page> {
    const page = await browser.newPage();
    await page.goto(embed);
    if (screenshot) {
      await page.waitForFunction(() => (document.getElementById('video') as HTMLVideoElement).currentTime > 1, null, { timeout: 60_000 });
      await page.screenshot({ path: screenshot });
    }
    await page.waitForFunction(() => (document.getElementById('video') as HTMLVideoElement).ended, null, { timeout: 60_000 });
    return page;
  }

  beforeAll(async () => {
    p = await startPlatform(kind);
    t = await p.createTenant();
    const fileId = await uploadFile(t, await makeClip(dir, 'clip', { seconds: 3, audio: [] }));
    assetId = (await t.json('POST', '/vod/v1/assets', { transcodedSources: [{ fileId }], preset: 'remux-hls-mp4', title: 'Three seconds' })).body.id;
    await until(
      () => t.json('GET', `/vod/v1/assets/${assetId}`),
      (r) => r.body?.status === 'Available',
      { timeoutMs: 90_000, what: 'the asset to be Available' },
    );
    const chapters = await t.call('POST', `/streaming/v1/assets/${assetId}/chapters`, { chapters: [{ title: 'Middle', startSecond: 1, endSecond: 2 }] });
    expect(chapters.status).toBe(200);
    embed = `${p.baseUrl}/player/v1/${t.id}/${assetId}?Muted=true&Autoplay=true&Analytics=true`;
    browser = await launchBrowser();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await p?.stop();
  });

  it('plays the asset with its chapter marker; its beacons give one impression and the seconds it played', async () => {
    const page = await watch(process.env.PLAYER_SCREENSHOT);
    expect(await page.title()).toBe('Three seconds');
    expect(await page.locator('#chapters button').getAttribute('title')).toBe('Middle');
    expect(await page.locator('#message').isVisible()).toBe(false);
    await page.close();
    await until(
      () => figure('queries/count', { dimension: 'IMPRESSION_ID', filters: onAsset() }),
      (n) => n === 1,
      { what: 'one impression' },
    );
    // The end beacon is the last one a page sends: once it is counted, the seconds are all in.
    await until(
      () => figure('queries/count', { dimension: 'EXITED_BEFORE_START', filters: onAsset() }),
      (n) => n === 1,
      { what: 'the end beacon' },
    );
    const played = await figure('queries/sum', { dimension: 'PLAYED_SECONDS', filters: onAsset() });
    expect(played).toBeGreaterThan(2.5);
    expect(played).toBeLessThan(3.5);
    expect(await figure('queries/avg', { dimension: 'STARTUP_TIME_MS', filters: onAsset() })).toBeGreaterThan(0);
    expect(await figure('queries/avg', { dimension: 'PLAYBACK_FAILURE_PERCENTAGE', filters: onAsset() })).toBe(0);
    const [row] = (
      await t.json('POST', '/streaming/v1/analytics/queries/count', { dimension: 'IMPRESSION_ID', groupBy: ['PLAYER_TECH', 'BROWSER', 'ASSET_TYPE'] })
    ).body.rows;
    expect(row).toEqual(['hls.js', 'Headless Chrome', 'Vod', 1]);
  });

  it('counts two pages playing at once as two concurrent viewers', async () => {
    const since = new Date().toISOString();
    // Both loaded first, then started together: neither can finish before the other begins.
    const pages = await Promise.all(
      [1, 2].map(async () => {
        const page = await browser.newPage();
        await page.goto(embed.replace('Autoplay=true', 'Autoplay=false'));
        await page.waitForFunction(() => (document.getElementById('video') as HTMLVideoElement).readyState >= 3, null, { timeout: 60_000 });
        return page;
      }),
    );
    await Promise.all(pages.map((page) => page.evaluate(() => (document.getElementById('video') as HTMLVideoElement).play())));
    await Promise.all(pages.map((page) => page.waitForFunction(() => (document.getElementById('video') as HTMLVideoElement).ended, null, { timeout: 60_000 })));
    await Promise.all(pages.map((page) => page.close()));
    const window = { start: since, filters: onAsset() };
    await until(
      () => figure('queries/count', { dimension: 'EXITED_BEFORE_START', ...window }),
      (n) => n === 2,
      { what: 'two end beacons' },
    );
    expect(await figure('queries/count', { dimension: 'IMPRESSION_ID', ...window })).toBe(2);
    expect(await figure('metrics/max_concurrentviewers', window)).toBe(2);
    expect(await figure('queries/count', { dimension: 'IMPRESSION_ID', filters: onAsset() })).toBe(3);
    const played = await figure('queries/sum', { dimension: 'PLAYED_SECONDS', ...window });
    expect(played).toBeGreaterThan(5);
    expect(played).toBeLessThan(7);
  });

  /** A 12 s asset (heartbeats come every 10 s), played in a new page until 4 s are played. */
  async function playFourSeconds(): Promise<{ page: Page; filters: unknown[] }> {
    const fileId = await uploadFile(t, await makeClip(dir, `twelve-${randomUUID()}`, { seconds: 12, audio: [] }));
    const id = (await t.json('POST', '/vod/v1/assets', { transcodedSources: [{ fileId }], preset: 'remux-hls-mp4', title: 'Twelve seconds' })).body.id;
    await until(
      () => t.json('GET', `/vod/v1/assets/${id}`),
      (r) => r.body?.status === 'Available',
      { timeoutMs: 90_000, what: 'the asset to be Available' },
    );
    const page = await browser.newPage();
    await page.goto(`${p.baseUrl}/player/v1/${t.id}/${id}?Muted=true&Autoplay=true&Analytics=true`);
    await page.waitForFunction(() => (document.getElementById('video') as HTMLVideoElement).currentTime >= 4, null, { timeout: 60_000 });
    return { page, filters: [{ name: 'ASSET_ID', operator: 'EQ', value: id }] };
  }

  it('counts the seconds of a page closed before its first heartbeat', async () => {
    const { page, filters } = await playFourSeconds();
    // The viewer closes the tab: the page is hidden, then unloaded; the last beacons go by navigator.sendBeacon.
    await page.close({ runBeforeUnload: true });
    await until(
      () => figure('queries/count', { dimension: 'EXITED_BEFORE_START', filters }),
      (n) => n === 1,
      { what: 'the end beacon of the closed page' },
    );
    const played = await figure('queries/sum', { dimension: 'PLAYED_SECONDS', filters });
    expect(played).toBeGreaterThan(3.5);
    expect(played).toBeLessThan(6);
  });

  it('counts the seconds of a page hidden and then discarded without a pagehide, as a phone does', async () => {
    const { page, filters } = await playFourSeconds();
    // The phone switches apps (the page turns hidden), then the system kills the tab: no pagehide, no unload.
    await page.evaluate(() => {
      Object.defineProperty(document, 'visibilityState', { value: 'hidden', configurable: true });
      document.dispatchEvent(new Event('visibilitychange'));
    });
    const cdp = await page.context().newCDPSession(page);
    // Not awaited: a crashed page never answers.
    void cdp.send('Page.crash').catch(() => {});
    const played = await until(
      () => figure('queries/sum', { dimension: 'PLAYED_SECONDS', filters }),
      (n) => n > 0,
      { what: 'the seconds the hidden page played' },
    );
    expect(played).toBeGreaterThan(3.5);
    expect(played).toBeLessThan(6);
    await page.close().catch(() => {});
  });

  it("stores the CMCD data of another player's segment requests as its own impression", async () => {
    const source = await (await fetch(`${p.baseUrl}/player/v1/${t.id}/${assetId}/source`)).json();
    const master = await (await fetch(source.hlsUrl)).text();
    const variant = new URL(
      master.split('\n').find((l) => l && !l.startsWith('#'))!,
      source.hlsUrl,
    );
    const media = await (await fetch(variant)).text();
    const segment = new URL(
      media.split('\n').find((l) => l && !l.startsWith('#'))!,
      variant,
    );
    const sid = randomUUID();
    segment.searchParams.set('CMCD', `br=800,d=2000,ot=v,sf=h,sid="${sid}",st=v`);
    expect((await fetch(segment)).status).toBe(200);
    const cmcd = [{ name: 'IMPRESSION_ID', operator: 'EQ', value: sid }];
    await until(
      () => figure('queries/sum', { dimension: 'PLAYED_SECONDS', filters: cmcd }),
      (n) => n === 2,
      { what: 'the CMCD row' },
    );
    expect(await figure('queries/avg', { dimension: 'VIDEO_BITRATE', filters: cmcd })).toBe(800_000);
    const [row] = (
      await t.json('POST', '/streaming/v1/analytics/queries/count', { dimension: 'IMPRESSION_ID', groupBy: ['PLAYER_TECH', 'ASSET_ID'], filters: cmcd })
    ).body.rows;
    expect(row).toEqual(['cmcd-hls', assetId, 1]);
  });

  it('passes a token on to the manifest URLs, and refuses pages from a domain the tenant did not allow', async () => {
    const tokened = await (await fetch(`${p.baseUrl}/player/v1/${t.id}/${assetId}/source?token=abc.def.ghi`)).json();
    expect(tokened.hlsUrl).toContain('/token=abc.def.ghi/');
    expect((await t.call('POST', '/streaming/v1/domains', { url: 'https://allowed.example.com' })).status).toBe(200);
    const refused = await fetch(embed, { headers: { referer: 'https://elsewhere.example.org/article' } });
    expect(refused.status).toBe(403);
    expect(refused.headers.get('content-type')).toContain('text/html');
    expect(await refused.text()).toMatch(/Pages from elsewhere\.example\.org may not play/);
    expect((await fetch(embed, { headers: { referer: 'https://allowed.example.com/article' } })).status).toBe(200);
    const beacon = await fetch(`${p.baseUrl}/player/v1/${t.id}/beacons`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: 'https://elsewhere.example.org' },
      body: JSON.stringify({ beacons: [{ impressionId: randomUUID(), kind: 'start', assetId }] }),
    });
    expect(beacon.status).toBe(403);
    expect((await beacon.json()).status.code).toBe('origin_not_allowed');
    // Opened directly (a QR code on a phone), the page names no embedding page: it plays.
    expect((await fetch(embed)).status).toBe(200);
  });

  it('answers a QR code PNG that scans back to the embed URL with the boolean options given', async () => {
    const res = await t.call('GET', `/streaming/v1/qrcode/${assetId}?Muted=true&Autoplay=false&Analytics=true`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/png');
    const png = Buffer.from(await res.arrayBuffer());
    expect(png.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
    const page = `${p.config.publicUrl.origin}/player/v1/${t.id}/${assetId}`;
    expect(await scan(png, 'options')).toBe(`${page}?Muted=true&Autoplay=false&Analytics=true`);
    expect(await scan(Buffer.from(await (await t.call('GET', `/streaming/v1/qrcode/${assetId}`)).arrayBuffer()), 'plain')).toBe(page);
    expect((await t.call('GET', '/streaming/v1/qrcode/a%20b')).status).toBe(400);
    expect((await t.call('GET', `/streaming/v1/qrcode/${'a'.repeat(129)}`)).status).toBe(400);
    const notBoolean = await t.json('GET', `/streaming/v1/qrcode/${assetId}?TimeShift=maybe`);
    expect(notBoolean.status).toBe(400);
    expect(notBoolean.body.errors[0].field).toBe('TimeShift');
    expect((await fetch(`${p.baseUrl}/streaming/v1/qrcode/${assetId}`)).status).toBe(401);
    // With a playback token (an asset that needs one): the URL carries it; one that would be refused is a 400.
    const token = (await t.json('POST', '/streaming/v1/tokens', { assetId })).body.token as string;
    const tokened = await t.call('GET', `/streaming/v1/qrcode/${assetId}?Muted=true&token=${encodeURIComponent(token)}`);
    expect(tokened.status).toBe(200);
    expect(await scan(Buffer.from(await tokened.arrayBuffer()), 'token')).toBe(`${page}?Muted=true&token=${token}`);
    const forged = await t.json('GET', `/streaming/v1/qrcode/${assetId}?token=${encodeURIComponent(`${token.slice(0, -4)}AAAA`)}`);
    expect(forged.status).toBe(400);
    expect(forged.body.errors[0].field).toBe('token');
  });

  it("answers another tenant's asset like a missing one: no QR code, no page, no source", async () => {
    const other = await p.createTenant();
    const qr = await other.json('GET', `/streaming/v1/qrcode/${assetId}`);
    expect([qr.status, qr.body.status.code]).toEqual([404, 'streaming_asset_not_found']);
    for (const path of [`/player/v1/${other.id}/${assetId}`, `/player/v1/${other.id}/${assetId}/source`]) {
      const res = await fetch(`${p.baseUrl}${path}`);
      expect(res.status, path).toBe(404);
      expect((await res.json()).status.code, path).toBe('streaming_asset_not_found');
    }
  });
});
