import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runFfmpeg } from '../src/media/ffmpeg.ts';
import { inspect } from '../src/media/inspect.ts';
import { vodAssets } from './helpers/commands.ts';
import { frameAt, makeClip, tempDir } from './helpers/media.ts';
import { describeOnDb, startPlatform, type TestPlatform, type TestTenant } from './helpers/platform.ts';
import { uploadFile } from './helpers/upload.ts';

/** Mean absolute difference of two RGB pictures of one size, 0-255. */
function difference(a: { rgb: Buffer }, b: { rgb: Buffer }): number {
  expect(a.rgb.length).toBe(b.rgb.length);
  let sum = 0;
  for (let i = 0; i < a.rgb.length; i++) sum += Math.abs(a.rgb[i] - b.rgb[i]);
  return sum / a.rgb.length;
}

/** A picture file's pixels (frameAt seeks, which a single JPEG does not take). */
async function pixels(path: string): Promise<{ width: number; height: number; rgb: Buffer }> {
  const v = (await inspect(path)).streams[0];
  await runFfmpeg(['-y', '-i', path, '-frames:v', '1', '-f', 'rawvideo', '-pix_fmt', 'rgb24', `${path}.rgb`]);
  return { width: v.width!, height: v.height!, rgb: readFileSync(`${path}.rgb`) };
}

/**
 * Issue 27 item 3: thumbnails and animated previews made on request (docs/decisions/streaming.md, "Thumbnails on the
 * fly"), as a page or a player asks for them, through the media delivery and its rules. What it asks of the database
 * is a lookup the catalogue's tests cover on both.
 */
describeOnDb('pglite', 'Thumbnails on the fly', (kind) => {
  const { dir, cleanup } = tempDir('mediaplane-thumbs-');
  let p: TestPlatform;
  let t: TestTenant;
  let source = '';
  let assetId = '';
  let base = '';
  let n = 0;
  /** Fetches a picture of the asset; its body kept in a file for ffmpeg. */
  const picture = async (file: string, query = '', headers: Record<string, string> = {}) => {
    const res = await fetch(`${base}/${file}${query}`, { headers });
    const path = join(dir, `got-${n++}-${file}`);
    const body = Buffer.from(await res.arrayBuffer());
    writeFileSync(path, body);
    return { res, path, body, json: () => JSON.parse(body.toString()) };
  };

  beforeAll(async () => {
    p = await startPlatform(kind);
    t = await p.createTenant();
    // testsrc2 moves every frame: a still of another time differs from it.
    source = await makeClip(dir, 'clip', { seconds: 6, width: 320, height: 180, fps: 25, audio: [] });
    const fileId = await uploadFile(t, source);
    assetId = (await vodAssets(t).create({ transcodedSources: [{ fileId }], preset: 'hls-h264-ladder', title: 'Thumbs' })).id;
    base = `${p.baseUrl}/media/thumbnails/${t.id}/${assetId}`;
  }, 120_000);
  afterAll(async () => {
    await p?.stop();
    cleanup();
  });

  it('answers the frame at the asked time, at the asked size, as soon as the asset exists', async () => {
    const shot = await picture('thumbnail.jpg', '?time=3.2');
    expect(shot.res.status).toBe(200);
    expect(shot.res.headers.get('content-type')).toBe('image/jpeg');
    expect(shot.res.headers.get('access-control-allow-origin')).toBe('*');
    const got = await pixels(shot.path);
    expect([got.width, got.height]).toEqual([320, 180]);
    // The source's own frame at that time, and one of another time: the thumbnail is the first, not the second.
    expect(difference(got, await frameAt(source, 3.2))).toBeLessThan(6);
    expect(difference(got, await frameAt(source, 1.0))).toBeGreaterThan(15);

    const small = await picture('thumbnail.webp', '?time=1&width=160');
    expect(small.res.headers.get('content-type')).toBe('image/webp');
    const info = await inspect(small.path);
    expect(info.streams[0]).toMatchObject({ codec: 'webp', width: 160, height: 90 });
    for (const [fit, w, h] of [
      ['crop', 100, 100],
      ['pad', 200, 200],
      ['stretch', 90, 160],
    ] as const) {
      const s = await picture('thumbnail.jpg', `?time=2&width=${w}&height=${h}&fit_mode=${fit}`);
      expect(s.res.status, fit).toBe(200);
      const f = await pixels(s.path);
      expect([f.width, f.height], fit).toEqual([w, h]);
    }
    // preserve (the default): within the box, the picture's own shape.
    const within = await pixels((await picture('thumbnail.jpg', '?time=2&width=200&height=200')).path);
    expect([within.width, within.height]).toEqual([200, 112]);
  });

  it('asked again, answers the same picture; an animated preview is a GIF or WebP of the range', async () => {
    const [a, b] = [await picture('thumbnail.jpg', '?time=4'), await picture('thumbnail.jpg', '?time=4')];
    expect(b.body.equals(a.body)).toBe(true);
    expect(a.res.headers.get('cache-control')).toBe('public, max-age=3600');

    const gif = await picture('animated.gif', '?start=1&end=3&fps=5&width=160');
    expect(gif.res.status).toBe(200);
    expect(gif.res.headers.get('content-type')).toBe('image/gif');
    const frames = await inspect(gif.path);
    expect(frames.streams[0]).toMatchObject({ codec: 'gif', width: 160, height: 90 });
    expect(gif.body.subarray(0, 6).toString()).toBe('GIF89a');
    const webp = await picture('animated.webp', '?start=0&end=2');
    expect(webp.res.headers.get('content-type')).toBe('image/webp');
    // RIFF....WEBPVP8X with an ANIM chunk: an animated WebP.
    expect(webp.body.subarray(0, 4).toString()).toBe('RIFF');
    expect(webp.body.includes(Buffer.from('ANIM'))).toBe(true);
  });

  it('refuses what is wrong with the one error shape, naming the parameter; another tenant or a file it does not make is a 404', async () => {
    for (const [file, query, field] of [
      ['thumbnail.jpg', '?time=60', 'time'],
      ['thumbnail.jpg', '?time=abc', 'time'],
      ['thumbnail.jpg', '?width=5', 'width'],
      ['thumbnail.jpg', '?width=100&fit_mode=crop', 'fit_mode'],
      ['thumbnail.jpg', '?fit_mode=smartcrop', 'fit_mode'],
      ['animated.gif', '?start=3&end=2', 'end'],
      ['animated.gif', '?start=0&end=20', 'end'],
      ['animated.gif', '?width=2000', 'width'],
    ] as const) {
      const r = await picture(file, query);
      expect(r.res.status, `${file}${query}`).toBe(400);
      expect(r.json().status.code).toBe('validation_failed');
      expect(r.json().errors[0].field, `${file}${query}`).toBe(field);
    }
    expect((await picture('thumbnail.png')).res.status).toBe(404);
    const other = await p.createTenant();
    expect((await fetch(`${p.baseUrl}/media/thumbnails/${other.id}/${assetId}/thumbnail.jpg`)).status).toBe(404);
  });

  it('makes a few pictures at once and refuses the rest with 429 and Retry-After, never failing one', async () => {
    // 40 times never asked before, all at once: one ffmpeg run each, more than the slots and their queue hold.
    const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => fetch(`${base}/thumbnail.jpg?time=${(0.05 + i * 0.1).toFixed(2)}&width=64`)));
    const statuses = answers.map((r) => r.status);
    expect(
      statuses.every((s) => s === 200 || s === 429),
      statuses.join(','),
    ).toBe(true);
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThanOrEqual(2);
    const refused = answers.find((r) => r.status === 429);
    expect(refused, statuses.join(',')).toBeDefined();
    expect(refused!.headers.get('retry-after')).toBe('1');
    expect((await refused!.json()).status.code).toBe('rate_limited');
    await Promise.all(answers.map((r) => r.arrayBuffer().catch(() => undefined)));
  });

  it('follows the asset’s playback rules: a token when it needs one, the allowed domains', async () => {
    expect((await t.json('PATCH', `/streaming/v1/assets/${assetId}/settings`, { tokenRequired: 'Enabled' })).status).toBe(200);
    const refused = await picture('thumbnail.jpg', '?time=1');
    expect(refused.res.status).toBe(401);
    const token = (await t.json('POST', '/streaming/v1/tokens', { assetId })).body.token as string;
    const allowed = await picture('thumbnail.jpg', `?time=1&token=${encodeURIComponent(token)}`);
    expect(allowed.res.status).toBe(200);
    expect(allowed.res.headers.get('content-type')).toBe('image/jpeg');
    expect((await t.json('PATCH', `/streaming/v1/assets/${assetId}/settings`, { tokenRequired: 'Disabled' })).status).toBe(200);

    expect((await t.json('POST', '/streaming/v1/domains', { url: 'allowed.example' })).status).toBe(200);
    const elsewhere = await picture('thumbnail.jpg', '?time=1', { origin: 'https://elsewhere.example' });
    expect(elsewhere.res.status).toBe(403);
    const here = await picture('thumbnail.jpg', '?time=1', { origin: 'https://allowed.example' });
    expect(here.res.status).toBe(200);
  });
});
