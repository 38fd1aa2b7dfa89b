import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runFfmpeg } from '../src/media/ffmpeg.ts';
import { tempDir } from './helpers/media.ts';
import { describeOnDb, startPlatform, type TestPlatform, type TestTenant } from './helpers/platform.ts';
import { uploadFile } from './helpers/upload.ts';
import { detect, prepare } from './helpers/watermarking.ts';
import { ATTACKS } from './helpers/watermarkAttacks.ts';

/**
 * Robustness of forensic detection against how pirates capture (issue 31): every attack is one ffmpeg process over a
 * viewer's segments, and each test asserts the viewer named (or none) and the confidence. PGlite only: what is tested is
 * the reading of the mark (src/media/watermark/locate.ts), not the database; the detection job's database work runs on
 * both databases in watermarking.e2e.test.ts and watermarking.routes.test.ts. Heavier variants (false positives over
 * 50 unmarked captures, the survival table) are in `npm run bench -- watermark`.
 */
const { dir } = tempDir('mediaplane-wm-robust-');

describeOnDb('pglite', 'Watermark detection survives real captures', () => {
  let p: TestPlatform;
  let t: TestTenant;
  let source: string;
  let assetId: string;
  const segments: Record<string, string[]> = {};
  const viewers = { Ada: 37, Bob: 50, Cy: 12 };

  /** The viewer's segments as a player downloads them through the redirector (each redirect to A or B followed). */
  async function download(name: string, playbackUrl: string) {
    const media = new URL('media.m3u8', playbackUrl);
    const uris = (await (await t.fetch(media)).text()).split('\n').filter((l) => l && !l.startsWith('#'));
    const paths: string[] = [];
    for (const [i, uri] of uris.entries()) {
      const res = await t.fetch(new URL(uri, media));
      expect(res.status).toBe(200);
      const path = join(dir, `${name}-${i}.ts`);
      await writeFile(path, Buffer.from(await res.arrayBuffer()));
      paths.push(path);
    }
    return paths;
  }

  const named = async (path: string) => (await detect(t, path)).file.detection;

  beforeAll(async () => {
    p = await startPlatform('pglite');
    t = await p.createTenant();
    // A 14-bit code word (6-bit numbers + CRC-8) of 1 s segments: one word and a half in a 20 s clip.
    expect((await t.json('PATCH', '/watermarking/v1/settings', { segmentDuration: 1, userNumberBits: 6 })).status).toBe(200);
    // Three kinds of content, not only a test pattern: a test card, a smooth fractal zoom, moving gradients. The gradients'
    // colours are seeded: unseeded, they came out nearly flat in some runs (a luma spread of 5 levels), which no capture
    // can be placed in time by; seed 5 spans at least 52-204 in every picture. The asset's A/B pattern stays random.
    source = join(dir, 'source.mp4');
    await runFfmpeg([
      '-y',
      '-filter_complex',
      [
        'testsrc2=size=320x180:rate=15:duration=7[a]',
        'mandelbrot=size=320x180:rate=15,trim=duration=7,setpts=PTS-STARTPTS,format=yuv420p[b]',
        'gradients=size=320x180:rate=15:speed=0.03:nb_colors=4:seed=5,trim=duration=6,setpts=PTS-STARTPTS,format=yuv420p[c]',
        'sine=frequency=440:sample_rate=48000:duration=20[s]',
        '[a][b][c]concat=n=3:v=1:a=0[v]',
      ].join(';'),
      '-map',
      '[v]',
      '-map',
      '[s]',
      ...['-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-g', '15', '-c:a', 'aac', '-b:a', '64k', source],
    ]);
    const vod = await t.json('POST', '/vod/v1/assets', { transcodedSources: [{ fileId: await uploadFile(t, source) }], preset: 'remux-hls-mp4' });
    expect(vod.status).toBe(200);
    assetId = (await prepare(t, vod.body.id)).id;
    for (const [userName, userNumber] of Object.entries(viewers)) {
      const token = await t.json('POST', '/watermarking/v1/redirector/token', { assetId, userNumber, userName });
      segments[userName] = await download(userName, token.body.playbackUrl);
    }
  }, 300_000);
  afterAll(() => p?.stop());

  const attacked = async (key: keyof typeof ATTACKS, viewer = 'Bob') => {
    const out = join(dir, `${viewer}-${key}.mp4`);
    await ATTACKS[key].make(segments[viewer], out, dir);
    return out;
  };
  const expectBob = (detection: any, min = 0.4) => {
    expect(detection).toMatchObject({ status: 'Detected', assetId, userNumber: 50, userName: 'Bob' });
    expect(detection.confidence).toBeGreaterThanOrEqual(min);
  };

  // What passed before: a plain low-bitrate re-encode, noise and blur, level changes.
  it('names the viewer of a capture re-encoded to 256x144 at 100 kb/s', async () => expectBob(await named(await attacked('plain'))), 60_000);
  it('names the viewer through noise and blur', async () => expectBob(await named(await attacked('blur'))), 60_000);
  it('names the viewer through brightness and contrast changes', async () => expectBob(await named(await attacked('brightness'))), 60_000);

  it('names the viewer of a capture that joined late and lost a segment mid-stream', async () => {
    // Segment 0 cut (a late join) and segment 16 lost (its bit, 2, is read again in segment 2).
    const kept = segments.Bob.filter((_, i) => i !== 0 && i !== 16);
    const out = join(dir, 'bob-lost.mp4');
    await runFfmpeg(['-y', '-i', `concat:${kept.join('|')}`, '-vf', 'scale=256:144', '-c:v', 'libx264', '-preset', 'veryfast', '-b:v', '100k', '-an', out]);
    // Over the gap the capture repeats the last picture of segment 15 (a B): read as segment 16 (an A) in the slow
    // gradients, it weakened or contradicted that bit, depending on the asset's pattern.
    expectBob(await named(out));
    // The same loss with the timestamps made continuous (a recorder that skips): the content jumps a second. Read at
    // the offset before the jump, the slow gradients after it still matched segment 16's place.
    const jumped = join(dir, 'bob-jumped.mp4');
    await runFfmpeg([
      '-y',
      '-i',
      `concat:${kept.join('|')}`,
      '-vf',
      'setpts=N/15/TB,scale=256:144',
      ...['-c:v', 'libx264', '-preset', 'veryfast', '-b:v', '100k', '-an', jumped],
    ]);
    expectBob(await named(jumped));
  }, 60_000);

  it('names the viewer of a capture 3% slow at 24 fps (dropped and repeated pictures)', async () => expectBob(await named(await attacked('drift'))), 60_000);
  it('names the viewer of a capture 5% fast at 12 fps', async () => expectBob(await named(await attacked('drift5'))), 60_000);
  it('names the viewer of segments joined by the concat demuxer (a gap at every join)', async () => expectBob(await named(await attacked('concat'))), 60_000);
  it('names the viewer of a capture cropped by 10% of each side and scaled back', async () => expectBob(await named(await attacked('crop'))), 60_000);
  it('names the viewer of a letterboxed capture', async () => expectBob(await named(await attacked('letterbox'))), 60_000);
  it(
    'names the viewer of a capture inside a larger black frame (a recorded player window)',
    async () => expectBob(await named(await attacked('pillarbox'))),
    60_000,
  );
  it('names the viewer of a mirrored capture', async () => expectBob(await named(await attacked('mirror'))), 60_000);
  it('names the viewer of a capture rotated by 3 degrees with a mild perspective', async () => expectBob(await named(await attacked('rotation'))), 60_000);

  it('names no viewer in the unmarked source nor in random content, and says why with a confidence', async () => {
    const plain = join(dir, 'plain.mp4');
    await runFfmpeg(['-y', '-i', source, '-vf', 'scale=256:144', '-c:v', 'libx264', '-preset', 'veryfast', '-b:v', '150k', '-an', plain]);
    const noise = join(dir, 'noise.mp4');
    await runFfmpeg([
      '-y',
      '-f',
      'lavfi',
      '-i',
      'nullsrc=size=320x180:rate=15:duration=20,geq=lum=random(1)*255:cb=128:cr=128',
      ...['-c:v', 'libx264', '-preset', 'ultrafast', '-b:v', '400k', noise],
    ]);
    const [same, random] = await Promise.all([named(plain), named(noise)]);
    expect(same).toMatchObject({ status: 'NoMarkFound', assetId, userNumber: null, userName: null });
    expect(same.message).toMatch(/matched \(\d+ of \d+ pictures lined up\), but (no bit pattern stands out|too few pictures lined up)/);
    expect(same.confidence).toBeLessThan(0.4);
    expect(random).toMatchObject({ status: 'NoMarkFound', assetId: null, userNumber: null, userName: null, confidence: 0 });
    expect(random.message).toMatch(/shows none of the prepared assets/);
  }, 60_000);

  it('says a capture is shorter than one code word when it is', async () => {
    const out = join(dir, 'short.mp4');
    await runFfmpeg(['-y', '-i', `concat:${segments.Bob.slice(0, 8).join('|')}`, '-c:v', 'libx264', '-preset', 'veryfast', '-b:v', '150k', '-an', out]);
    const d = await named(out);
    expect(d).toMatchObject({ status: 'NoMarkFound', assetId, userName: null, confidence: 0 });
    expect(d.message).toMatch(/shorter than one code word \(14 s\): 8 of the 14 bits/);
  }, 60_000);

  it('names one colluder or none, never another viewer, for averaged and interleaved captures', async () => {
    const join3 = (who: string[]) => segments.Ada.map((_, i) => segments[who[i % who.length]][i]);
    const averaged = join(dir, 'averaged.mp4');
    await runFfmpeg([
      '-y',
      ...['-i', `concat:${segments.Ada.join('|')}`, '-i', `concat:${segments.Bob.join('|')}`],
      ...['-filter_complex', '[0:v][1:v]blend=all_mode=average', '-c:v', 'libx264', '-preset', 'veryfast', '-b:v', '150k', '-an', averaged],
    ]);
    const interleaved2 = join(dir, 'interleaved2.mp4');
    const interleaved3 = join(dir, 'interleaved3.mp4');
    await ATTACKS.plain.make(join3(['Ada', 'Bob']), interleaved2, dir);
    await ATTACKS.plain.make(join3(['Ada', 'Bob', 'Cy']), interleaved3, dir);
    const results = await Promise.all([named(averaged), named(interleaved2), named(interleaved3)]);
    const colluders = [
      ['Ada', 'Bob'],
      ['Ada', 'Bob'],
      ['Ada', 'Bob', 'Cy'],
    ];
    results.forEach((d, k) => {
      if (d.status === 'Detected') expect(colluders[k]).toContain(d.userName);
      else expect(d).toMatchObject({ status: 'NoMarkFound', userNumber: null, userName: null, confidence: expect.any(Number) });
    });
  }, 90_000);
});
