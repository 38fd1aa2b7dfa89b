import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runFfmpeg } from '../src/media/ffmpeg.ts';
import { makeClip, tempDir } from './helpers/media.ts';
import { describeOnDb, startPlatform, type TestPlatform, type TestTenant } from './helpers/platform.ts';
import { until } from './helpers/until.ts';
import { uploadFile } from './helpers/upload.ts';
import { detect, prepare } from './helpers/watermarking.ts';

const { dir } = tempDir('mediaplane-watermark-');

/**
 * A viewer's capture: the segments of the redirector's media playlist from `first` on, fetched like a player
 * (following each redirect to the viewer's variant), joined, then re-encoded smaller and at a low bitrate as a pirate
 * would before sharing it.
 */
async function capture(t: TestTenant, playbackUrl: string, name: string, opts: { first?: number; lost?: number; width: number; height: number; kbps: number }) {
  const media = new URL('media.m3u8', playbackUrl);
  const playlist = await (await t.fetch(media)).text();
  const uris = playlist.split('\n').filter((l) => l && !l.startsWith('#'));
  const paths: string[] = [];
  for (const [i, uri] of uris.entries()) {
    if (i < (opts.first ?? 0) || i === opts.lost) continue;
    const res = await t.fetch(new URL(uri, media));
    expect(res.status).toBe(200);
    const path = join(dir, `${name}-${i}.ts`);
    await writeFile(path, Buffer.from(await res.arrayBuffer()));
    paths.push(path);
  }
  const out = join(dir, `${name}.mp4`);
  const kbps = `${opts.kbps}k`;
  await runFfmpeg([
    '-y',
    '-i',
    `concat:${paths.join('|')}`,
    '-vf',
    `scale=${opts.width}:${opts.height}`,
    '-c:v',
    'libx264',
    '-preset',
    'veryfast',
    '-b:v',
    kbps,
    '-maxrate',
    kbps,
    '-bufsize',
    kbps,
    '-an',
    out,
  ]);
  return out;
}

describeOnDb('postgres', 'Watermarking end to end', (kind) => {
  let p: TestPlatform;
  let t: TestTenant;
  let other: TestTenant;
  let source: string;
  let asset: any;

  beforeAll(async () => {
    p = await startPlatform(kind);
    t = await p.createTenant();
    other = await p.createTenant();
    // Short clips: 1 s segments and 6-bit user numbers (a 14-bit code word with the CRC-8) fit a 20 s clip.
    expect((await t.json('PATCH', '/watermarking/v1/settings', { segmentDuration: 1, userNumberBits: 6 })).status).toBe(200);
    source = await makeClip(dir, 'source', { width: 320, height: 180, seconds: 20, fps: 15, audio: [{ language: 'eng', frequency: 440 }] });
    const fileId = await uploadFile(t, source);
    const vod = await t.json('POST', '/vod/v1/assets', { transcodedSources: [{ fileId }], preset: 'remux-hls-mp4', title: 'Clip' });
    expect(vod.status).toBe(200);
    asset = await prepare(t, vod.body.id);
  }, 300_000);
  afterAll(() => p?.stop());

  it('prepares an asset with aligned A and B segments and lists it', async () => {
    expect(asset).toMatchObject({
      status: 'Available',
      progress: 100,
      width: 320,
      height: 180,
      segmentDuration: 1,
      userNumberBits: 6,
      metadata: { title: 'Marked clip' },
    });
    expect(asset.segmentCount).toBeGreaterThanOrEqual(19);
    const list = await t.json('GET', '/watermarking/v1/assets?query=Marked');
    expect(list.body).toMatchObject({ totalCount: 1, pageNumber: 1, hasMore: false });
    expect(list.body.items[0]).toMatchObject({ id: asset.id, createDate: expect.any(String), metadata: { title: 'Marked clip' } });
    expect((await other.json('GET', `/watermarking/v1/assets/${asset.id}`)).status).toBe(404);
  });

  it('names the right user for two viewers whose captures were re-encoded to 360p and below at a low bitrate', async () => {
    const ada = await t.json('POST', '/watermarking/v1/redirector/token', { assetId: asset.id, userNumber: 37, userName: 'Ada' });
    const bob = await t.json('POST', '/watermarking/v1/redirector/token', { assetId: asset.id, userNumber: 50, userName: 'Bob' });
    expect(ada.status).toBe(200);
    expect(bob.status).toBe(200);
    // Ada's whole playback upscaled to 640x360 at 250 kb/s; Bob's from the fourth segment on (he joined late, the
    // first three are cut) and without segment 17 (lost on the way), at 256x144 and 100 kb/s.
    const adaCapture = await capture(t, ada.body.playbackUrl, 'ada', { width: 640, height: 360, kbps: 250 });
    const bobCapture = await capture(t, bob.body.playbackUrl, 'bob', { first: 3, lost: 17, width: 256, height: 144, kbps: 100 });
    const [a, b] = await Promise.all([detect(t, adaCapture), detect(t, bobCapture)]);
    expect(a.file.detection).toMatchObject({
      status: 'Detected',
      progress: 100,
      jobId: a.jobId,
      assetId: asset.id,
      userNumber: 37,
      userName: 'Ada',
      sessionId: ada.body.sessionId,
    });
    expect(b.file.detection).toMatchObject({ status: 'Detected', userNumber: 50, userName: 'Bob', sessionId: bob.body.sessionId });
    expect(a.file.orginalFileName).toBe('ada.mp4');
    expect(a.file.uploadStatus).toBe('Completed');
  }, 120_000);

  it('finds no mark in an unmarked copy of the same content, nor in another video, and never guesses', async () => {
    const plain = join(dir, 'plain.mp4');
    await runFfmpeg(['-y', '-i', source, '-vf', 'scale=640:360', '-c:v', 'libx264', '-preset', 'veryfast', '-b:v', '250k', '-an', plain]);
    const unrelated = await makeClip(dir, 'unrelated', { width: 320, height: 180, seconds: 6, fps: 15, color: 'navy', audio: [] });
    const [same, elsewhere] = await Promise.all([detect(t, plain), detect(t, unrelated)]);
    expect(same.file.detection).toMatchObject({ status: 'NoMarkFound', assetId: asset.id, userNumber: null, userName: null });
    expect(elsewhere.file.detection).toMatchObject({ status: 'NoMarkFound', userNumber: null, userName: null });
  }, 120_000);

  it('refuses a revoked session at once, with the error shape, and plays again once unrevoked', async () => {
    const token = await t.json('POST', '/watermarking/v1/redirector/token', { assetId: asset.id, userNumber: 5, userName: 'Eve' });
    const media = new URL('media.m3u8', token.body.playbackUrl);
    expect((await t.fetch(media)).status).toBe(200);
    const revoked = await t.json('POST', `/watermarking/v1/sessions/${token.body.sessionId}/revoke`);
    expect(revoked.body).toMatchObject({ revoked: true, userNumber: 5, userName: 'Eve' });
    for (const url of [token.body.playbackUrl, media.toString(), new URL('segments/0.ts', media).toString()]) {
      const res = await t.fetch(url, { redirect: 'manual' });
      expect(res.status).toBe(403);
      expect(await res.json()).toMatchObject({ status: { code: 'watermarking_session_revoked', status: 403 } });
    }
    const again = await t.json('POST', '/watermarking/v1/redirector/token', { assetId: asset.id, userNumber: 5, userName: 'Eve' });
    expect(again.status).toBe(403);
    await t.json('POST', `/watermarking/v1/sessions/${token.body.sessionId}/unrevoke`);
    const back = await until(
      () => t.fetch(media),
      (r) => r.status === 200,
    );
    expect(back.status).toBe(200);
  });
});
