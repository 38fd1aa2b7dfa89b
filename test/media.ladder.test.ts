import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { directorySize, listFiles } from '../src/media/files.ts';
import { contentTypeOf } from '../src/storage/contentTypes.ts';
import { mpdDurationMs } from '../src/media/finish.ts';
import { codecString } from '../src/media/hls.ts';
import type { StreamInfo } from '../src/media/inspect.ts';
import { planRenditions, scaleGraph, videoEncoderArgs } from '../src/media/ladder.ts';
import { overlayFilterGraph, overlayProblems, overlayWindows, parseStartTime } from '../src/media/overlays.ts';
import { packagingOf } from '../src/media/packaging.ts';
import { PRESETS, presetById } from '../src/modules/transcoder/presets.ts';
import { tempDir } from './helpers/media.ts';

const preset = (id: string) => presetById(id)!;
const sizes = (r: { width: number; height: number }[]) => r.map((x) => `${x.width}x${x.height}`);

describe('ladder planning', () => {
  it("keeps every rung for a 1080p source, with the rungs' own bitrates", () => {
    const r = planRenditions(preset('hls-h264-ladder'), 1920, 1080);
    expect(sizes(r)).toEqual(['1920x1080', '1280x720', '854x480', '640x360']);
    expect(r.map((x) => x.name)).toEqual(['1080p', '720p', '480p', '360p']);
    expect(r.map((x) => x.videoBitrateKbps)).toEqual([5000, 2800, 1200, 700]);
  });

  it('drops the rungs above the source height and never upscales', () => {
    expect(sizes(planRenditions(preset('hls-h264-ladder'), 1280, 720))).toEqual(['1280x720', '854x480', '640x360']);
    expect(sizes(planRenditions(preset('hls-h264-ladder'), 960, 540))).toEqual(['854x480', '640x360']);
  });

  it('keeps one rung, at the source size and named for it, when the source is smaller than every rung', () => {
    const r = planRenditions(preset('hls-h264-ladder'), 320, 180);
    expect(sizes(r)).toEqual(['320x180']);
    expect(r[0].name).toBe('180p');
    expect(r[0].videoBitrateKbps).toBe(175);
  });

  it('fits a 4:3 source into the 16:9 boxes without distortion', () => {
    expect(sizes(planRenditions(preset('hls-h264-ladder'), 1440, 1080))).toEqual(['1440x1080', '960x720', '640x480', '480x360']);
  });

  it('keeps a portrait source upright on a landscape preset', () => {
    expect(sizes(planRenditions(preset('hls-h264-ladder'), 1080, 1920))).toEqual(['1080x1920', '720x1280', '480x854', '360x640']);
  });

  it('gives portrait frames on the vertical preset, padding a landscape picture', () => {
    const portrait = planRenditions(preset('hls-h264-vertical'), 720, 1280);
    expect(sizes(portrait)).toEqual(['720x1280', '480x854']);
    const landscape = planRenditions(preset('hls-h264-vertical'), 1920, 1080);
    expect(sizes(landscape)).toEqual(['1080x1920', '720x1280', '480x854']);
    expect(landscape.map((x) => `${x.pictureWidth}x${x.pictureHeight}`)).toEqual(['1080x608', '720x406', '480x270']);
    const graph = scaleGraph('0:0', landscape).graph.join(';');
    expect(graph).toContain('[split2]scale=480:270,pad=480:854:(ow-iw)/2:(oh-ih)/2:black,setdar=1080/1920,format=yuv420p[v2]');
  });

  it('splits once and scales each rung; one rung needs no split', () => {
    const two = scaleGraph('ovb0', planRenditions(preset('hls-h264-ladder'), 854, 480));
    expect(two.graph[0]).toBe('[ovb0]split=2[split0][split1]');
    expect(two.outputs).toEqual(['v0', 'v1']);
    const one = scaleGraph('0:0', planRenditions(preset('hls-h264-ladder'), 640, 360));
    expect(one.graph).toEqual(['[0:0]scale=640:360,setdar=640/360,format=yuv420p[v0]']);
  });

  it('forces keyframes on segment boundaries with no scene-cut keyframes, bitrate per rung', () => {
    const p = preset('hls-h264-ladder');
    const args = videoEncoderArgs(p, planRenditions(p, 1280, 720)).join(' ');
    expect(args).toContain('-c:v libx264 -preset veryfast -sc_threshold 0 -force_key_frames expr:gte(t,n_forced*4)');
    expect(args).toContain('-b:v:0 2800k -maxrate:v:0 4200k -bufsize:v:0 8400k -profile:v:0 high');
    expect(args).toContain('-b:v:2 700k -maxrate:v:2 1050k -bufsize:v:2 2100k -profile:v:2 main');
  });
});

describe('preset catalogue', () => {
  it('keeps the ids and flags other modules rely on', () => {
    expect(PRESETS.map((p) => [p.id, p.mediaType, p.createsDownload, p.noTranscoding, p.hasVerticalOrientation])).toEqual([
      ['hls-h264-ladder', 'video', false, false, false],
      ['dash-h264-ladder', 'video', false, false, false],
      ['cmaf-h264-ladder', 'video', false, false, false],
      ['hls-h264-ladder-download', 'video', true, false, false],
      ['mp4-h264-download', 'video', true, false, false],
      ['hls-h264-vertical', 'video', false, false, true],
      ['audio-aac', 'audio', true, false, false],
      ['remux-hls-mp4', 'video', true, true, false],
      ['hls-h264-ladder-aes128', 'video', false, false, false],
      ['dash-h264-ladder-cenc', 'video', false, false, false],
      ['dash-h264-ladder-cbcs', 'video', false, false, false],
      ['cmaf-h264-ladder-cbcs', 'video', false, false, false],
    ]);
  });

  it('only combines packagings one encode can make, and downloads exactly when createsDownload says so', () => {
    for (const p of PRESETS) {
      const { mp4 } = packagingOf(p);
      expect(mp4, p.id).toBe(p.createsDownload);
      expect(p.ladder.length > 0, p.id).toBe(p.mediaType === 'video' && !p.noTranscoding);
    }
    expect(() => packagingOf({ ...preset('hls-h264-ladder'), packaging: ['hls', 'dash'] })).toThrow(/at most one/);
  });
});

describe('overlays', () => {
  const ok = { startTime: '1000', duration: 2000, width: 64, height: 32, input: { type: 'URL', url: 'https://example.com/logo.png' } };

  it("parses VOD milliseconds and the recorder's time codes", () => {
    expect(parseStartTime('1500')).toBe(1500);
    expect(parseStartTime('00:01:02.250')).toBe(62250);
    expect(parseStartTime('00:00:01:15', 30)).toBe(1500);
    expect(parseStartTime('00:00:01:45', 30)).toBeUndefined();
    expect(parseStartTime('1.5s')).toBeUndefined();
  });

  it('accepts a valid overlay and names each wrong field', () => {
    expect(overlayProblems([ok])).toEqual([]);
    const bad = overlayProblems([
      { ...ok, startTime: 'soon', duration: 0, width: 0, opacity: 101, fadeIn: -1, imageX: -5, input: { type: 'URL', url: 'file:///etc/passwd' } },
      { ...ok, fadeIn: 1500, fadeOut: 1000, input: { type: 'S3', s3BucketName: 'b' } },
      { ...ok, input: undefined },
    ]);
    expect(bad.map((p) => p.field)).toEqual([
      'overlays[0].startTime',
      'overlays[0].duration',
      'overlays[0].width',
      'overlays[0].imageX',
      'overlays[0].fadeIn',
      'overlays[0].opacity',
      'overlays[0].input.url',
      'overlays[1].fadeIn',
      'overlays[1].input.s3ObjectKey',
      'overlays[2].input',
    ]);
    expect(bad[6].message).toBe('must be an http or https URL');
  });

  it('draws by layer, lowest first, and builds the fade, opacity and time window', () => {
    const windows = overlayWindows([
      { ...ok, source: 'top.png', still: true, layer: 5, imageX: 10, imageY: 20, opacity: 50, fadeIn: 500, fadeOut: 250 },
      { ...ok, source: 'bottom.mp4', still: false, layer: 1 },
    ]);
    expect(windows.map((w) => w.source)).toEqual(['bottom.mp4', 'top.png']);
    const { graph, out } = overlayFilterGraph(windows, 1, '0:0');
    expect(out).toBe('ovb1');
    expect(graph).toEqual([
      '[1:v:0]setpts=PTS-STARTPTS+1/TB,scale=64:32,format=rgba[ov0]',
      "[0:0][ov0]overlay=x=0:y=0:eof_action=pass:enable='between(t,1,3)'[ovb0]",
      '[2:v:0]setpts=PTS-STARTPTS+1/TB,scale=64:32,format=rgba,colorchannelmixer=aa=0.5,fade=t=in:st=1:d=0.5:alpha=1,fade=t=out:st=2.75:d=0.25:alpha=1[ov1]',
      "[ovb0][ov1]overlay=x=10:y=20:eof_action=pass:enable='between(t,1,3)'[ovb1]",
    ]);
  });
});

describe('manifest helpers', () => {
  const s = (x: Partial<StreamInfo>) => ({ index: 0, type: 'video', codec: 'h264', attachedPicture: false, ...x }) as StreamInfo;

  it('names codecs the way players check them', () => {
    expect(codecString(s({ profile: 'High', level: 31 }))).toBe('avc1.64001f');
    expect(codecString(s({ profile: 'Main', level: 30 }))).toBe('avc1.4d401e');
    expect(codecString(s({ profile: 'Constrained Baseline', level: 13 }))).toBe('avc1.42c00d');
    expect(codecString(s({ type: 'audio', codec: 'aac', profile: 'LC' }))).toBe('mp4a.40.2');
    expect(codecString(s({ type: 'audio', codec: 'aac', profile: 'HE-AAC' }))).toBe('mp4a.40.5');
    expect(codecString(s({ codec: 'vp9' }))).toBeUndefined();
  });

  it('reads an MPD duration', () => {
    expect(mpdDurationMs('<MPD mediaPresentationDuration="PT4.0S">')).toBe(4000);
    expect(mpdDurationMs('<MPD mediaPresentationDuration="PT1H2M3.5S">')).toBe(3723500);
  });
});

describe('output files', () => {
  const { dir, cleanup } = tempDir();
  afterAll(cleanup);

  it('lists every file with its content type, manifests last', async () => {
    mkdirSync(join(dir, 'hls', '720p'), { recursive: true });
    mkdirSync(join(dir, 'hls', 'subs'), { recursive: true });
    writeFileSync(join(dir, 'hls', 'master.m3u8'), '#EXTM3U\n');
    writeFileSync(join(dir, 'hls', '720p', 'seg_00000.ts'), Buffer.alloc(1000));
    writeFileSync(join(dir, 'hls', 'subs', 'sub_0.vtt'), 'WEBVTT\n');
    const files = await listFiles(dir);
    expect(files.map((f) => [f.path, f.size, f.contentType])).toEqual([
      ['hls/720p/seg_00000.ts', 1000, 'video/mp2t'],
      ['hls/subs/sub_0.vtt', 7, 'text/vtt'],
      ['hls/master.m3u8', 8, 'application/vnd.apple.mpegurl'],
    ]);
    expect(await directorySize(dir)).toBe(1015);
    expect(['a.mpd', 'b.m4s', 'c.mp4', 'd.m4a', 'e.bin'].map(contentTypeOf)).toEqual([
      'application/dash+xml',
      'video/mp4',
      'video/mp4',
      'audio/mp4',
      'application/octet-stream',
    ]);
  });
});
