import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { copyFile, mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runFfprobe } from '../src/media/ffmpeg.ts';
import { mpdDurationMs } from '../src/media/finish.ts';
import { listFiles } from '../src/media/files.ts';
import { readMediaPlaylist } from '../src/media/hls.ts';
import { inspect } from '../src/media/inspect.ts';
import { transcode, type PublishSink, type SourceTrack, type TranscodeResult } from '../src/media/transcode.ts';
import { PRESETS } from '../src/modules/transcoder/presets.ts';
import { expectFastStart, makeClip, parseMaster, probeOutput, rung, tempDir, testPreset } from './helpers/media.ts';

const { dir, cleanup } = tempDir();
let src: string; // 640x360, 3 s, audio eng (1) + fra (2), captions eng (3)
let portrait: string; // 180x320, 2 s, audio eng (1)
let tiny: string; // 320x180, 2 s, audio eng (1) + fra (2), captions eng (3)

const ENG: SourceTrack = { type: 'Audio', index: 1 };
const FRA: SourceTrack = { type: 'Audio', index: 2, name: 'Français' };
const CAPTIONS: SourceTrack = { type: 'Caption', index: 3 };
let n = 0;
const out = () => join(dir, `out-${++n}`);
const near = (value: number, expected: number, tolerance: number) =>
  expect(Math.abs(value - expected), `${value} ≈ ${expected}`).toBeLessThanOrEqual(tolerance);

beforeAll(async () => {
  const captions = [{ language: 'eng', text: 'Hello' }];
  [src, portrait, tiny] = await Promise.all([
    makeClip(dir, 'src', { width: 640, height: 360, seconds: 3, subtitles: captions }),
    makeClip(dir, 'portrait', { width: 180, height: 320, seconds: 2, audio: [{ language: 'eng', frequency: 440 }] }),
    makeClip(dir, 'tiny', { width: 320, height: 180, seconds: 2, subtitles: captions }),
  ]);
});
afterAll(cleanup);

describe('HLS', () => {
  let result: TranscodeResult;
  let outDir: string;
  const progress: number[] = [];

  beforeAll(async () => {
    outDir = out();
    result = await transcode({ input: src, tracks: [ENG, FRA, CAPTIONS], preset: testPreset(), outDir, onProgress: (p) => progress.push(p) });
  });

  it('describes the ladder it encoded and one HLS endpoint with duration and size', async () => {
    expect(result.renditions).toEqual([
      { name: '360p', width: 640, height: 360, videoBitrateKbps: 600 },
      { name: '180p', width: 320, height: 180, videoBitrateKbps: 250 },
      { name: '144p', width: 256, height: 144, videoBitrateKbps: 150 },
    ]);
    expect(result.audioTracks).toBe(2);
    expect(result.captionTracks).toBe(1);
    expect(result.endpoints).toHaveLength(1);
    const [hls] = result.endpoints;
    expect(hls.format).toBe('HLS');
    expect(hls.manifest).toBe('hls/master.m3u8');
    expect(hls.hasVerticalOrientation).toBe(false);
    near(hls.durationMilliseconds, 3000, 100);
    expect(result.durationMilliseconds).toBe(hls.durationMilliseconds);
    const files = await listFiles(outDir);
    expect(hls.size).toBe(files.reduce((s, f) => s + f.size, 0));
  });

  it('writes a master playlist with measured BANDWIDTH, RESOLUTION, CODECS, audio languages and subtitles', () => {
    const master = parseMaster(readFileSync(join(outDir, 'hls/master.m3u8'), 'utf8'));
    expect(master.variants.map((v) => [v.uri, v.RESOLUTION, v.AUDIO, v.SUBTITLES])).toEqual([
      ['360p/index.m3u8', '640x360', 'audio', 'subs'],
      ['180p/index.m3u8', '320x180', 'audio', 'subs'],
      ['144p/index.m3u8', '256x144', 'audio', 'subs'],
    ]);
    for (const v of master.variants) {
      expect(v.CODECS).toMatch(/^avc1\.[0-9a-f]{6},mp4a\.40\.2$/);
      expect(Number(v.BANDWIDTH)).toBeGreaterThanOrEqual(Number(v['AVERAGE-BANDWIDTH']));
      expect(Number(v['AVERAGE-BANDWIDTH'])).toBeGreaterThan(64_000);
    }
    const bandwidths = master.variants.map((v) => Number(v.BANDWIDTH));
    expect(bandwidths).toEqual([...bandwidths].sort((a, b) => b - a));
    expect(master.media.map((m) => [m.TYPE, m.NAME, m.LANGUAGE, m.DEFAULT, m.URI])).toEqual([
      ['AUDIO', 'eng', 'eng', 'YES', 'audio_0/index.m3u8'],
      ['AUDIO', 'Français', 'fra', 'NO', 'audio_1/index.m3u8'],
      ['SUBTITLES', 'eng', 'eng', 'NO', 'subs/sub_0.m3u8'],
    ]);
  });

  it('plays as a player opens it: three video rungs, two audio languages, 3 s', async () => {
    const { info, video, audio } = await probeOutput(join(outDir, 'hls/master.m3u8'));
    expect(video.map((v) => `${v.codec} ${v.width}x${v.height}`)).toEqual(['h264 640x360', 'h264 320x180', 'h264 256x144']);
    expect(audio.map((a) => `${a.codec} ${a.language} ${a.channels}ch ${a.sampleRate}`)).toEqual(['aac eng 2ch 48000', 'aac fra 2ch 48000']);
    near(info.durationMs, 3000, 100);
  });

  it('cuts every rung at the same keyframe-aligned segment boundaries', async () => {
    const playlists = await Promise.all(['360p', '180p', '144p'].map((r) => readMediaPlaylist(join(outDir, 'hls', r, 'index.m3u8'))));
    for (const p of playlists) expect(p.segments.map((s) => s.durationS)).toEqual(playlists[0].segments.map((s) => s.durationS));
    expect(playlists[0].segments.slice(0, 2).map((s) => s.durationS)).toEqual([1, 1]);
    // Every segment of every rung starts with a keyframe, so a player can switch rungs at any boundary.
    for (const r of ['360p', '180p', '144p']) {
      for (const seg of playlists[0].segments) {
        const flags = await runFfprobe([
          '-select_streams',
          'v:0',
          '-show_entries',
          'packet=flags',
          '-read_intervals',
          '%+#1',
          '-of',
          'csv=p=0',
          join(outDir, 'hls', r, seg.uri),
        ]);
        expect(flags.trim(), `${r}/${seg.uri}`).toMatch(/^K/);
      }
    }
  });

  it('carries the selected captions as WebVTT with a timestamp map for MPEG-TS', async () => {
    const vtt = readFileSync(join(outDir, 'hls/subs/sub_0.vtt'), 'utf8');
    expect(vtt).toMatch(/^WEBVTT\nX-TIMESTAMP-MAP=MPEGTS:12\d{4},LOCAL:00:00:00.000\n/);
    expect(vtt).toContain('00:00.500 --> 00:01.500\nHello');
    const subs = await probeOutput(join(outDir, 'hls/subs/sub_0.m3u8'));
    expect(subs.subtitles.map((s) => s.codec)).toEqual(['webvtt']);
  });

  it('reported progress rising from 0 to 100, never down', () => {
    expect(progress[0]).toBeLessThan(100);
    expect(progress.at(-1)).toBe(100);
    expect(progress.filter((p) => p === 100)).toHaveLength(1);
    for (let i = 1; i < progress.length; i++) expect(progress[i]).toBeGreaterThan(progress[i - 1]);
  });
});

describe('track selection (audio is never assigned automatically)', () => {
  it('makes a muted output when no audio track is selected', async () => {
    const outDir = out();
    const r = await transcode({ input: src, tracks: [], preset: testPreset({ ladder: [rung('180p', 320, 180, 250)] }), outDir });
    expect(r.audioTracks).toBe(0);
    const master = parseMaster(readFileSync(join(outDir, 'hls/master.m3u8'), 'utf8'));
    expect(master.media).toEqual([]);
    expect(master.variants).toHaveLength(1);
    expect(master.variants[0].CODECS).toMatch(/^avc1\.[0-9a-f]{6}$/);
    expect(master.variants[0].AUDIO).toBeUndefined();
    const { video, audio, subtitles } = await probeOutput(join(outDir, 'hls/master.m3u8'));
    expect(video).toHaveLength(1);
    expect(audio).toEqual([]);
    expect(subtitles).toEqual([]);
    expect(existsSync(join(outDir, 'hls/subs'))).toBe(false);
  });

  it('takes only the selected track, by its index in the source', async () => {
    const outDir = out();
    await transcode({ input: src, tracks: [{ type: 'Audio', index: 2 }], preset: testPreset({ ladder: [rung('180p', 320, 180, 250)] }), outDir });
    const { audio } = await probeOutput(join(outDir, 'hls/master.m3u8'));
    expect(audio.map((a) => a.language)).toEqual(['fra']);
  });

  it('takes tracks from other files of the asset: a dubbed audio file and a caption file', async () => {
    const dub = await makeClip(dir, 'dub', { container: 'm4a', seconds: 3, audio: [{ language: 'deu', frequency: 660 }] });
    const srt = join(dir, 'captions.srt');
    writeFileSync(srt, '1\n00:00:01,000 --> 00:00:02,000\nHallo\n');
    const outDir = out();
    const r = await transcode({
      input: src,
      tracks: [ENG, { type: 'Audio', index: 0, input: dub, name: 'Deutsch' }, { type: 'Caption', index: 0, input: srt, language: 'deu' }],
      preset: testPreset({ ladder: [rung('180p', 320, 180, 250)] }),
      outDir,
    });
    expect([r.audioTracks, r.captionTracks]).toEqual([2, 1]);
    const master = parseMaster(readFileSync(join(outDir, 'hls/master.m3u8'), 'utf8'));
    expect(master.media.map((m) => [m.TYPE, m.NAME, m.LANGUAGE])).toEqual([
      ['AUDIO', 'eng', 'eng'],
      ['AUDIO', 'Deutsch', 'deu'],
      ['SUBTITLES', 'deu', 'deu'],
    ]);
    expect(readFileSync(join(outDir, 'hls/subs/sub_0.vtt'), 'utf8')).toContain('00:01.000 --> 00:02.000\nHallo');
    const { audio } = await probeOutput(join(outDir, 'hls/master.m3u8'));
    expect(audio.map((a) => a.language)).toEqual(['eng', 'deu']);
  });
});

describe('progress listener', () => {
  it('a listener that throws stops ffmpeg and fails the transcode with its error', async () => {
    const e = await transcode({
      input: src,
      tracks: [],
      preset: testPreset(),
      outDir: out(),
      onProgress: () => {
        throw new Error('progress row is gone');
      },
    }).then(
      () => undefined,
      (err: Error) => err,
    );
    expect(e?.message).toBe('progress row is gone');
  });
});

describe('DASH and CMAF', () => {
  it('keeps one display aspect ratio across rungs whose even sizes differ by a hair (1280x720 next to 854x480)', async () => {
    const hd = await makeClip(dir, 'hd', { width: 1280, height: 720, seconds: 1 });
    const dash = PRESETS.find((p) => p.id === 'dash-h264-ladder')!;
    const outDir = out();
    const r = await transcode({ input: hd, tracks: [], preset: { ...dash, x264Preset: 'ultrafast' }, outDir });
    const { video } = await probeOutput(join(outDir, r.endpoints[0].manifest));
    expect(video.map((v) => v.height)).toEqual([720, 480, 360]);
  });

  it('DASH: an MPD with every rung, each audio language and side-loaded WebVTT captions', async () => {
    const outDir = out();
    const r = await transcode({ input: src, tracks: [ENG, FRA, CAPTIONS], preset: testPreset({ packaging: ['dash'] }), outDir });
    expect(r.endpoints.map((e) => [e.format, e.manifest])).toEqual([['DASH', 'dash/manifest.mpd']]);
    near(r.endpoints[0].durationMilliseconds, 3000, 100);
    const mpd = readFileSync(join(outDir, 'dash/manifest.mpd'), 'utf8');
    expect(mpd).toContain('<AdaptationSet id="100" contentType="text" mimeType="text/vtt" lang="eng">');
    expect(mpd.match(/lang="(eng|fra)"/g)).toEqual(['lang="eng"', 'lang="fra"', 'lang="eng"']);
    const { video, audio, subtitles, info } = await probeOutput(join(outDir, 'dash/manifest.mpd'));
    expect(video.map((v) => v.height)).toEqual([360, 180, 144]);
    expect(audio.map((a) => a.language)).toEqual(['eng', 'fra']);
    expect(subtitles.map((s) => `${s.codec} ${s.language}`)).toEqual(['webvtt eng']);
    near(info.durationMs, 3000, 100);
    expect(r.endpoints[0].size).toBe((await listFiles(join(outDir, 'dash'))).reduce((s, f) => s + f.size, 0));
  });

  it('CMAF: one set of fMP4 segments that both the HLS master playlist and the MPD play', async () => {
    const outDir = out();
    const r = await transcode({ input: src, tracks: [ENG, CAPTIONS], preset: testPreset({ packaging: ['cmaf'] }), outDir });
    expect(r.endpoints.map((e) => [e.format, e.manifest])).toEqual([
      ['HLS', 'cmaf/master.m3u8'],
      ['DASH', 'cmaf/manifest.mpd'],
    ]);
    expect(r.endpoints[0].size).toBe(r.endpoints[1].size);
    const files = (await listFiles(join(outDir, 'cmaf'))).map((f) => f.path);
    expect(files.filter((f) => f.endsWith('.ts'))).toEqual([]);
    // The HLS rung playlist lists exactly the segment files the MPD's template names.
    const hlsSegments = (await readMediaPlaylist(join(outDir, 'cmaf/media_0.m3u8'))).segments.map((s) => s.uri);
    expect(hlsSegments).toEqual(files.filter((f) => /^chunk-0-\d+\.m4s$/.test(f)));
    expect(readFileSync(join(outDir, 'cmaf/manifest.mpd'), 'utf8')).toContain('media="chunk-$RepresentationID$-$Number%05d$.m4s"');
    expect(readFileSync(join(outDir, 'cmaf/media_0.m3u8'), 'utf8')).toContain('#EXT-X-MAP:URI="init-0.m4s"');

    const master = parseMaster(readFileSync(join(outDir, 'cmaf/master.m3u8'), 'utf8'));
    expect(master.variants.map((v) => [v.uri, v.RESOLUTION, v.AUDIO, v.SUBTITLES])).toEqual([
      ['media_0.m3u8', '640x360', 'audio', 'subs'],
      ['media_1.m3u8', '320x180', 'audio', 'subs'],
      ['media_2.m3u8', '256x144', 'audio', 'subs'],
    ]);
    const viaHls = await probeOutput(join(outDir, 'cmaf/master.m3u8'));
    const viaDash = await probeOutput(join(outDir, 'cmaf/manifest.mpd'));
    for (const p of [viaHls, viaDash]) {
      expect(p.video.map((v) => v.height)).toEqual([360, 180, 144]);
      expect(p.audio.map((a) => a.language)).toEqual(['eng']);
      near(p.info.durationMs, 3000, 100);
    }
    expect(readFileSync(join(outDir, 'cmaf/subs/sub_0.vtt'), 'utf8')).not.toContain('X-TIMESTAMP-MAP');
  });
});

/** Where a published output goes: a folder, as the fs store keeps it. */
const folderSink = (root: string): PublishSink => ({
  putFile: async (path, from) => {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await copyFile(from, join(root, path));
  },
  putText: async (path, text) => {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), text);
  },
  playable: async () => {},
  failed: (e) => {
    throw e;
  },
});

describe('MP4 downloads', () => {
  const isFastStart = (file: string) => {
    const bytes = readFileSync(file);
    return bytes.indexOf('moov') > 0 && bytes.indexOf('moov') < bytes.indexOf('mdat');
  };

  // Published while it encodes, the output starts fast: the video and the audio are muxed by two processes.
  it.each([false, true])('cuts one fast-start MP4 per rung from the HLS encode, with every audio track and the captions (published: %s)', async (published) => {
    const outDir = out();
    const store = out();
    const r = await transcode({
      input: src,
      tracks: [ENG, FRA, CAPTIONS],
      preset: testPreset({ packaging: ['hls', 'mp4'], segmentSeconds: 2, ladder: [rung('360p', 640, 360, 600), rung('180p', 320, 180, 250)] }),
      outDir,
      publish: published ? folderSink(store) : undefined,
    });
    const rung360 = readFileSync(join(outDir, 'hls/360p/index.m3u8'), 'utf8');
    const lengths = [...rung360.matchAll(/#EXTINF:([\d.]+)/g)].map((m) => Number(m[1]));
    // Published: the first 2 s segment in short ones (a fast start), then the clip's last second.
    if (published) expectFastStart(lengths, { segmentSeconds: 2 });
    else expect(lengths.map(Math.round)).toEqual([2, 1]);
    if (published) expect(existsSync(join(store, 'hls/master.m3u8'))).toBe(true);
    expect(r.endpoints.map((e) => [e.format, e.manifest, e.rendition])).toEqual([
      ['HLS', 'hls/master.m3u8', undefined],
      ['MP4', 'mp4/360p.mp4', '360p'],
      ['MP4', 'mp4/180p.mp4', '180p'],
    ]);
    for (const [i, height] of [
      [1, 360],
      [2, 180],
    ]) {
      const e = r.endpoints[i];
      const file = join(outDir, e.manifest);
      expect(e.size).toBe(readFileSync(file).length);
      expect(isFastStart(file)).toBe(true);
      const { video, audio, subtitles, info } = await probeOutput(file);
      expect(video.map((v) => v.height)).toEqual([height]);
      expect(audio.map((a) => a.language)).toEqual(['eng', 'fra']);
      expect(subtitles.map((s) => `${s.codec} ${s.language}`)).toEqual(['mov_text eng']);
      near(info.durationMs, 3000, 150);
      near(e.durationMilliseconds, 3000, 150);
      // Audio and video start together (the TS offset is gone).
      near(video[0].startTime! * 1000, audio[0].startTime! * 1000, 50);
    }
  });

  it('lasts as long as its source within a frame, every track from 0: an MP4 cut from HLS, an MPD', async () => {
    // 2.96 s at 25 fps: not a whole tenth of a second (ffmpeg writes an MPD's duration cut down to one), and the
    // presets' B-frames put the first decode time a few frames before the first picture.
    const clip = await makeClip(dir, 'odd', { width: 320, height: 180, fps: 25, seconds: 2.96, audio: [{ language: 'eng', frequency: 440 }] });
    const frameMs = 40;
    const source = (await probeOutput(clip)).info.durationMs;
    const preset = (id: string) => PRESETS.find((p) => p.id === id)!;
    const download = out();
    const mp4 = (await transcode({ input: clip, tracks: [ENG], preset: preset('hls-h264-ladder-download'), outDir: download })).endpoints.find(
      (e) => e.format === 'MP4',
    )!;
    const { video, audio, info } = await probeOutput(join(download, mp4.manifest));
    for (const s of [...video, ...audio]) near(s.startTime! * 1000, 0, frameMs);
    near(info.durationMs, source, frameMs);
    near(mp4.durationMilliseconds, source, frameMs);
    const dashDir = out();
    const dash = (await transcode({ input: clip, tracks: [ENG], preset: preset('dash-h264-ladder'), outDir: dashDir })).endpoints[0]!;
    near(mpdDurationMs(readFileSync(join(dashDir, dash.manifest), 'utf8')), source, frameMs);
    near(dash.durationMilliseconds, source, frameMs);
  });

  it('encodes MP4 files directly when the preset has no streaming packaging', async () => {
    const outDir = out();
    const r = await transcode({ input: src, tracks: [ENG], preset: testPreset({ packaging: ['mp4'], ladder: [rung('180p', 320, 180, 250)] }), outDir });
    expect(r.endpoints.map((e) => [e.format, e.manifest])).toEqual([['MP4', 'mp4/180p.mp4']]);
    expect((await listFiles(outDir)).map((f) => f.path)).toEqual(['mp4/180p.mp4']);
    const { video, audio } = await probeOutput(join(outDir, 'mp4/180p.mp4'));
    expect(video.map((v) => `${v.width}x${v.height}`)).toEqual(['320x180']);
    expect(audio).toHaveLength(1);
    expect(isFastStart(join(outDir, 'mp4/180p.mp4'))).toBe(true);
  });
});

describe('audio-only, vertical and remux presets', () => {
  it('audio only: AAC in HLS and an M4A, no video', async () => {
    const outDir = out();
    const r = await transcode({ input: src, tracks: [FRA], preset: testPreset({ mediaType: 'audio', ladder: [], packaging: ['hls', 'mp4'] }), outDir });
    expect(r.renditions).toEqual([]);
    expect(r.endpoints.map((e) => [e.format, e.manifest])).toEqual([
      ['HLS', 'hls/master.m3u8'],
      ['MP4', 'mp4/audio_0.m4a'],
    ]);
    const master = parseMaster(readFileSync(join(outDir, 'hls/master.m3u8'), 'utf8'));
    expect(master.variants.map((v) => [v.uri, v.CODECS, v.RESOLUTION])).toEqual([['audio_0/index.m3u8', 'mp4a.40.2', undefined]]);
    for (const file of ['hls/master.m3u8', 'mp4/audio_0.m4a']) {
      const { video, audio, info } = await probeOutput(join(outDir, file));
      expect(video).toEqual([]);
      expect(audio.map((a) => `${a.codec} ${a.language}`)).toEqual(['aac fra']);
      near(info.durationMs, 3000, 100);
    }
  });

  it('vertical: a portrait source keeps its shape; a landscape one is padded into portrait frames', async () => {
    const vertical = testPreset({ hasVerticalOrientation: true, ladder: [rung('320p', 180, 320, 300), rung('240p', 136, 240, 200)] });
    const a = out();
    const fromPortrait = await transcode({ input: portrait, tracks: [], preset: vertical, outDir: a });
    expect(fromPortrait.renditions.map((x) => `${x.width}x${x.height}`)).toEqual(['180x320', '136x240']);
    expect(fromPortrait.endpoints[0].hasVerticalOrientation).toBe(true);
    const { video } = await probeOutput(join(a, 'hls/master.m3u8'));
    expect(video.map((v) => `${v.width}x${v.height}`)).toEqual(['180x320', '136x240']);

    const b = out();
    const fromLandscape = await transcode({ input: tiny, tracks: [], preset: vertical, outDir: b });
    expect(fromLandscape.renditions.map((x) => `${x.width}x${x.height}`)).toEqual(['180x320', '136x240']);
  });

  it('remux: copies the source streams without re-encoding', async () => {
    const outDir = out();
    const preset = PRESETS.find((p) => p.noTranscoding)!;
    const r = await transcode({ input: src, tracks: [ENG], preset, outDir });
    expect(r.renditions).toEqual([{ name: '360p', width: 640, height: 360, videoBitrateKbps: expect.any(Number) }]);
    const source = await inspect(src);
    const copied = await probeOutput(join(outDir, 'mp4/360p.mp4'));
    const sv = source.streams[0];
    // Same H.264 stream (x264 ultrafast from the clip maker), not a re-encode with the ladder's settings.
    expect([copied.video[0].profile, copied.video[0].level, copied.video[0].bitRate]).toEqual([sv.profile, sv.level, expect.any(Number)]);
    near(copied.video[0].bitRate!, sv.bitRate!, sv.bitRate! * 0.05);
    const master = parseMaster(readFileSync(join(outDir, 'hls/master.m3u8'), 'utf8'));
    expect(master.variants[0].CODECS).toMatch(/^avc1\.42c0[0-9a-f]{2},mp4a\.40\.2$/);
  });
});

describe('every catalogue preset on a tiny clip (ladder capped by the source size)', () => {
  // Encrypted presets need a key and a license to read back: test/media.cenc.test.ts and test/drm.e2e.test.ts play them.
  for (const preset of PRESETS.filter((p) => !p.protection)) {
    it(preset.id, async () => {
      const outDir = out();
      const input = preset.hasVerticalOrientation ? portrait : tiny;
      const tracks: SourceTrack[] = preset.hasVerticalOrientation ? [ENG] : [ENG, CAPTIONS];
      const r = await transcode({ input, tracks, preset, outDir });
      const formats = preset.packaging.flatMap((p) => (p === 'cmaf' ? ['HLS', 'DASH'] : [p.toUpperCase()]));
      expect([...new Set(r.endpoints.map((e) => e.format))]).toEqual(formats);
      for (const e of r.endpoints) {
        expect(e.size).toBeGreaterThan(1000);
        near(e.durationMilliseconds, 2000, 150);
        expect(e.hasVerticalOrientation).toBe(preset.hasVerticalOrientation);
        const { video, audio } = await probeOutput(join(outDir, e.manifest));
        expect(audio.map((a) => a.codec)).toEqual(['aac']);
        if (preset.mediaType === 'audio') expect(video).toEqual([]);
        else expect(video.map((v) => `${v.width}x${v.height}`)).toEqual([preset.hasVerticalOrientation ? '180x320' : '320x180']);
      }
    });
  }
});
