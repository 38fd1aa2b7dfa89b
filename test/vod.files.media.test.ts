import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { FILE_TYPE_EXTENSIONS } from '../src/media/fileTypes.ts';
import { inspect, MEDIA_INFO_VERSION } from '../src/media/inspect.ts';
import { planTranscode } from '../src/media/plan.ts';
import { loadSourceFiles } from '../src/modules/vod/assets/sourceFiles.ts';
import { vodFiles } from '../src/modules/vod/files.tables.ts';
import { presetById } from '../src/modules/transcoder/presets.ts';
import { PART_SIZE, startUpload, uploadFile } from './helpers/files.ts';
import { startPlatform, type TestPlatform, type TestTenant } from './helpers/platform.ts';
import { describeEachDbAndStore, storeEnv } from './helpers/stores.ts';
import { sleep } from './helpers/until.ts';

const ffmpeg = (...args: string[]) => execFileSync(process.env.FFMPEG_PATH || 'ffmpeg', ['-v', 'error', '-y', ...args]);

/** Media made at test time: 2 s of 320x180 video, English and French audio, English subtitles; an audio file; captions. */
const dir = mkdtempSync(join(tmpdir(), 'mediaplane-media-'));
const SRT = '1\n00:00:00,000 --> 00:00:01,000\nHello\n\n2\n00:00:01,000 --> 00:00:02,000\nWorld\n';
writeFileSync(join(dir, 'subs.srt'), SRT);
ffmpeg(
  '-f',
  'lavfi',
  '-i',
  'testsrc2=size=320x180:rate=25:duration=2',
  '-f',
  'lavfi',
  '-i',
  'sine=frequency=440:duration=2',
  '-f',
  'lavfi',
  '-i',
  'sine=frequency=660:duration=2',
  '-i',
  join(dir, 'subs.srt'),
  '-map',
  '0',
  '-map',
  '1',
  '-map',
  '2',
  '-map',
  '3',
  '-c:v',
  'libx264',
  '-preset',
  'ultrafast',
  '-c:a',
  'aac',
  '-c:s',
  'srt',
  '-metadata:s:a:0',
  'language=eng',
  '-metadata:s:a:0',
  'title=English',
  '-metadata:s:a:1',
  'language=fre',
  '-metadata:s:a:1',
  'title=Français',
  '-metadata:s:s:0',
  'language=eng',
  '-metadata:s:s:0',
  'title=English subtitles',
  join(dir, 'movie.mkv'),
);
ffmpeg('-f', 'lavfi', '-i', 'sine=frequency=300:duration=1', '-c:a', 'aac', join(dir, 'tone.m4a'));
const MOVIE = readFileSync(join(dir, 'movie.mkv'));
const TONE = readFileSync(join(dir, 'tone.m4a'));
rmSync(dir, { recursive: true, force: true });

const MOVIE_TRACKS = [
  { trackSelector: { trackId: '0' }, type: 'Video', name: 'Video 1' },
  { trackSelector: { trackId: '1' }, type: 'Audio', language: 'eng', name: 'English' },
  { trackSelector: { trackId: '2' }, type: 'Audio', language: 'fre', name: 'Français' },
  { trackSelector: { trackId: '3' }, type: 'Caption', language: 'eng', name: 'English subtitles' },
];

describeEachDbAndStore('VOD file media facts', (db, store) => {
  let p: TestPlatform;
  let t: TestTenant;
  let movieId: string;

  beforeAll(async () => {
    p = await startPlatform(db, { ...(await storeEnv(store)), MEDIAPLANE_UPLOAD_PART_SIZE: String(PART_SIZE[store]) });
    t = await p.createTenant();
    movieId = (await uploadFile(t, 'movie.mkv', MOVIE)).fileId;
  });
  afterAll(() => p?.stop());

  it('detects video, two audio languages and subtitles, and knows them from completion on', async () => {
    const { body: file } = await t.json('GET', `/vod/v1/files/${movieId}`);
    expect(file).toMatchObject({ status: 'Completed', fileTypes: 'Video', fileSize: MOVIE.length });
    expect(file.tracks).toEqual(MOVIE_TRACKS);
    const detected = await t.json('POST', `/vod/v1/files/${movieId}/detect`);
    expect(detected.status).toBe(200);
    expect(detected.body.tracks).toEqual(MOVIE_TRACKS.map((track) => expect.objectContaining(track)));

    const { body: languages } = await t.json('GET', '/vod/v1/languages');
    for (const track of MOVIE_TRACKS) if (track.language) expect(languages.languages).toContain(track.language);
  });

  it('detect says what is in each track: codec, picture, frame rate, duration, bit rate, language, channels, sample rate', async () => {
    const { body } = await t.json('POST', `/vod/v1/files/${movieId}/detect`);
    const [video, english, french, subtitles] = body.tracks;
    expect(video).toMatchObject({ codec: 'h264', width: 320, height: 180, frameRate: 25 });
    expect(english).toMatchObject({ codec: 'aac', language: 'eng', channels: 1, sampleRate: 44100 });
    expect(french).toMatchObject({ codec: 'aac', language: 'fre', channels: 1, sampleRate: 44100 });
    expect(subtitles).toMatchObject({ codec: 'subrip', language: 'eng' });
    for (const track of body.tracks) {
      expect(track.durationMilliseconds).toBeGreaterThanOrEqual(1900);
      expect(track.durationMilliseconds).toBeLessThanOrEqual(2100);
    }
    expect(video.channels).toBeUndefined();
    expect(english.width).toBeUndefined();
    expect(body.format).toBe('matroska,webm');
    expect(body.durationMilliseconds).toBeGreaterThanOrEqual(1990);
    expect(body.bitRate).toBeGreaterThan(0);

    // MP4 keeps each stream's bit rate; a frame rate of 30000/1001 reads 29.97.
    const clip = mkdtempSync(join(tmpdir(), 'mediaplane-ntsc-'));
    ffmpeg(
      '-f',
      'lavfi',
      '-i',
      'testsrc2=size=160x90:rate=30000/1001:duration=1',
      '-f',
      'lavfi',
      '-i',
      'sine=duration=1:sample_rate=48000',
      '-ac',
      '2',
      '-c:v',
      'libx264',
      '-preset',
      'ultrafast',
      '-c:a',
      'aac',
      '-shortest',
      join(clip, 'ntsc.mp4'),
    );
    const ntsc = await uploadFile(t, 'ntsc.mp4', readFileSync(join(clip, 'ntsc.mp4')));
    rmSync(clip, { recursive: true, force: true });
    const mp4 = (await t.json('POST', `/vod/v1/files/${ntsc.fileId}/detect`)).body;
    expect(mp4.format).toContain('mp4');
    expect(mp4.tracks[0]).toMatchObject({ type: 'Video', codec: 'h264', width: 160, height: 90, frameRate: 29.97 });
    expect(mp4.tracks[0].bitRate).toBeGreaterThan(0);
    expect(mp4.tracks[1]).toMatchObject({ type: 'Audio', codec: 'aac', channels: 2, sampleRate: 48000 });
    expect(mp4.tracks[1].bitRate).toBeGreaterThan(0);

    // A detected track goes back into an asset as it is.
    const asset = await t.json('POST', '/vod/v1/assets', {
      transcodedSources: [{ fileId: ntsc.fileId, transcodingTracks: [mp4.tracks[1]] }],
      preset: 'hls-h264-ladder',
      title: 'detected',
    });
    expect(asset.status, JSON.stringify(asset.body)).toBe(200);
  });

  it("keeps the transcoder's view of the probe with the file, so that an encode plans without probing again", async () => {
    const [row] = await p.ctx.db.select().from(vodFiles).where(eq(vodFiles.id, movieId));
    const input = await p.ctx.store.readableLocation(row!.fileKey);
    // The same answer the transcoder's own probe gives, under the version of its shape.
    expect(row!.mediaInfo).toEqual({ version: MEDIA_INFO_VERSION, info: await inspect(input) });
    const source = (await loadSourceFiles(p.ctx.db, t.id, [movieId])).get(movieId)!;
    expect(source.mediaInfo).toEqual(row!.mediaInfo!.info);
    // A plan from it is the plan from probing, argument for argument (a probe of a missing file would throw).
    const out = mkdtempSync(join(tmpdir(), 'mediaplane-plan-'));
    try {
      const req = { tracks: [{ type: 'Audio' as const, index: 2 }], preset: presetById('hls-h264-ladder')!, outDir: out };
      const probed = await planTranscode({ ...req, input });
      const kept = await planTranscode({ ...req, input, sourceInfo: source.mediaInfo });
      expect(kept.args).toEqual(probed.args);
      await expect(planTranscode({ ...req, input: join(out, 'missing.mkv') })).rejects.toThrow(/could not be read/);
      const { args } = await planTranscode({ ...req, input: join(out, 'missing.mkv'), sourceInfo: source.mediaInfo });
      expect(args).toContain(join(out, 'missing.mkv'));
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
    // Kept under another shape's version, it is not used: the encode probes.
    await p.ctx.db
      .update(vodFiles)
      .set({ mediaInfo: { ...row!.mediaInfo!, version: MEDIA_INFO_VERSION - 1 } })
      .where(eq(vodFiles.id, movieId));
    expect((await loadSourceFiles(p.ctx.db, t.id, [movieId])).get(movieId)!.mediaInfo).toBeUndefined();
    await p.ctx.db.update(vodFiles).set({ mediaInfo: row!.mediaInfo }).where(eq(vodFiles.id, movieId));
  });

  it('answers the duration in milliseconds', async () => {
    const { status, body } = await t.json('GET', `/vod/v1/files/${movieId}/duration`);
    expect(status).toBe(200);
    expect(Object.keys(body)).toEqual(['duration']);
    expect(body.duration).toBeGreaterThanOrEqual(1990);
    expect(body.duration).toBeLessThanOrEqual(2100);
  });

  it('types an audio file Audio and a caption file Caption from their content', async () => {
    const tone = await uploadFile(t, 'tone.m4a', TONE);
    const { body: audio } = await t.json('GET', `/vod/v1/files/${tone.fileId}`);
    expect(audio.fileTypes).toBe('Audio');
    expect(audio.tracks).toEqual([{ trackSelector: { trackId: '0' }, type: 'Audio', name: 'Audio 1' }]);
    const d = (await t.json('GET', `/vod/v1/files/${tone.fileId}/duration`)).body.duration;
    expect(d).toBeGreaterThanOrEqual(990);
    expect(d).toBeLessThanOrEqual(1100);

    const subs = await uploadFile(t, 'subs.srt', Buffer.from(SRT));
    expect((await t.json('GET', `/vod/v1/files/${subs.fileId}`)).body).toMatchObject({ fileTypes: 'Caption' });
    expect((await t.json('POST', `/vod/v1/files/${subs.fileId}/detect`)).body).toEqual({
      tracks: [{ trackSelector: { trackId: '0' }, type: 'Caption', name: 'Caption 1', codec: 'subrip' }],
      format: 'srt',
    });
    const noDuration = await t.json('GET', `/vod/v1/files/${subs.fileId}/duration`);
    expect(noDuration.status).toBe(400);
    expect(noDuration.body.status.code).toBe('file_duration_unknown');
  });

  it('answers a clear 400 for a file that is not media, and 409 before the upload is complete', async () => {
    const junk = await uploadFile(t, 'notes.mp4', Buffer.from('These are meeting notes, not a video.\n'.repeat(100)));
    expect((await t.json('GET', `/vod/v1/files/${junk.fileId}`)).body).toMatchObject({ status: 'Completed', fileTypes: 'Video', tracks: [] });
    for (const [method, path] of [
      ['POST', 'detect'],
      ['GET', 'duration'],
    ] as const) {
      const r = await t.json(method, `/vod/v1/files/${junk.fileId}/${path}`);
      expect(r.status).toBe(400);
      expect(r.body.status).toMatchObject({ code: 'file_not_media', status: 400 });
    }
    const pending = await startUpload(t, { name: 'later.mp4', fileSize: 10 });
    for (const [method, path] of [
      ['POST', 'detect'],
      ['GET', 'duration'],
      ['GET', 'preview'],
    ] as const) {
      const r = await t.json(method, `/vod/v1/files/${pending.fileId}/${path}`);
      expect(r.status).toBe(409);
      expect(r.body.status.code).toBe('file_not_completed');
    }
  });

  it('gives an expiring preview link that downloads without a key and serves ranges', async () => {
    const before = Date.now();
    const { status, body } = await t.json('GET', `/vod/v1/files/${movieId}/preview`);
    expect(status).toBe(200);
    expect(Object.keys(body).sort()).toEqual(['expirationDate', 'link']);
    expect(Date.parse(body.expirationDate) - before).toBeGreaterThanOrEqual(3590_000);
    expect(Date.parse(body.expirationDate) - before).toBeLessThanOrEqual(3610_000);

    const whole = await fetch(body.link);
    expect(whole.status).toBe(200);
    expect(whole.headers.get('content-type')).toBe('video/x-matroska');
    expect(Buffer.from(await whole.arrayBuffer()).equals(MOVIE)).toBe(true);
    const part = await fetch(body.link, { headers: { range: 'bytes=100-199' } });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe(`bytes 100-199/${MOVIE.length}`);
    expect(Buffer.from(await part.arrayBuffer()).equals(MOVIE.subarray(100, 200))).toBe(true);
    const tail = await fetch(body.link, { headers: { range: 'bytes=-10' } });
    expect(Buffer.from(await tail.arrayBuffer()).equals(MOVIE.subarray(MOVIE.length - 10))).toBe(true);

    p.config.previewTtlSeconds = 1;
    const short = (await t.json('GET', `/vod/v1/files/${movieId}/preview`)).body.link;
    p.config.previewTtlSeconds = 3600;
    await sleep(2100); // on purpose: the 1 s link must expire, and expiry is signed to the second
    expect((await fetch(short)).status).toBe(403);
  });

  it('lists the accepted file types and accepts exactly those at upload', async () => {
    const { status, body } = await t.json('GET', '/vod/v1/filetypes');
    expect(status).toBe(200);
    expect(body).toEqual({ fileTypes: FILE_TYPE_EXTENSIONS });
    for (const [type, extensions] of Object.entries(body.fileTypes as Record<string, string[]>)) {
      for (const ext of extensions) expect(ext).toMatch(/^\.[a-z0-9]+$/);
      const started = await startUpload(t, { name: `sample${extensions[0].toUpperCase()}`, fileSize: 10 });
      expect((await t.json('GET', `/vod/v1/files/${started.fileId}`)).body.fileTypes).toBe(type);
    }
    const refused = await t.json('POST', '/vod/v1/files/start', { name: 'setup.exe', friendlyName: 'setup', fileSize: 10 });
    expect(refused.status).toBe(400);
    expect(refused.body.status.code).toBe('unsupported_file_type');
    expect(refused.body.errors).toEqual([{ field: 'name', message: 'has an extension that is not accepted' }]);
  });

  it('lists ISO 639-2 language codes', async () => {
    const { body } = await t.json('GET', '/vod/v1/languages');
    expect(body.languages.length).toBeGreaterThan(400);
    for (const code of ['eng', 'fre', 'fra', 'ger', 'deu', 'spa', 'jpn']) expect(body.languages).toContain(code);
    expect(body.languages).not.toContain('und');
    for (const code of body.languages) expect(code).toMatch(/^[a-z]{3}$/);
  });
});
