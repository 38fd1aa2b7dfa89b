import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKGROUND_NICE, MediaError, runFfmpeg } from '../src/media/ffmpeg.ts';
import { transcode } from '../src/media/transcode.ts';
import { presetById } from '../src/modules/transcoder/presets.ts';
import { makeClip, makeImage, rung, tempDir, testPreset } from './helpers/media.ts';

const { dir, cleanup } = tempDir();
let src: string;
let server: Server;
let baseUrl: string;
let n = 0;
const out = () => join(dir, `out-${++n}`);
const small = testPreset({ ladder: [rung('180p', 320, 180, 250)] });

async function failure(p: Promise<unknown>): Promise<MediaError> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(MediaError);
  return e as MediaError;
}

/** Command lines of the running ffmpeg processes that write under `path`. */
function ffmpegProcessesUsing(path: string): string[] {
  const found: string[] = [];
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
      if (cmd.includes('ffmpeg') && cmd.includes(path)) found.push(`${pid}: ${cmd}`);
    } catch {
      // The process ended while we looked.
    }
  }
  return found;
}

beforeAll(async () => {
  src = await makeClip(dir, 'src', { width: 320, height: 180, seconds: 2 });
  server = createServer((_req, res) => {
    res.statusCode = 404;
    res.end('no such object');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((r) => server.close(r));
  cleanup();
});

describe('a source that is not media', () => {
  it("rejects random bytes with ffprobe's reason and no server path", async () => {
    const corrupt = join(dir, 'garbage.mp4');
    writeFileSync(corrupt, Buffer.from(Array.from({ length: 50_000 }, (_, i) => (i * 7919) % 251)));
    const e = await failure(transcode({ input: corrupt, tracks: [], preset: small, outDir: out() }));
    expect(e.message).toMatch(/^The source could not be read as media: .*source: Invalid data found when processing input$/);
    expect(e.message).not.toContain(dir);
  });

  it('rejects a truncated MP4 (upload cut short) with the missing index named', async () => {
    const truncated = join(dir, 'truncated.mp4');
    const whole = readFileSync(src);
    // Clips are written with the index (moov) at the end; half a file has none.
    writeFileSync(truncated, whole.subarray(0, Math.floor(whole.length / 2)));
    const e = await failure(transcode({ input: truncated, tracks: [], preset: small, outDir: out() }));
    expect(e.message).toMatch(/^The source could not be read as media: .*moov atom not found/);
    expect(e.message).not.toContain(dir);
  });

  it('reports an HTTP error for a source URL without showing the (signed) URL', async () => {
    const url = `${baseUrl}/tenants/t1/files/f1/clip.mp4?X-Amz-Signature=secret123`;
    const e = await failure(transcode({ input: url, tracks: [], preset: small, outDir: out() }));
    expect(e.message).toMatch(/^The source could not be read as media: .*404 Not Found/);
    expect(e.message).not.toContain('secret123');
    expect(e.message).not.toContain('127.0.0.1');
  });

  it('refuses a source without video on a video preset', async () => {
    const audioOnly = await makeClip(dir, 'audio-only', { container: 'm4a', seconds: 1 });
    const e = await failure(transcode({ input: audioOnly, tracks: [{ type: 'Audio', index: 0 }], preset: small, outDir: out() }));
    expect(e.message).toBe('The source has no video track; preset test-preset makes video (use an audio preset for audio files)');
  });
});

describe('requests the source cannot satisfy', () => {
  it('refuses a track index that is not a stream of the asked type', async () => {
    const e = await failure(transcode({ input: src, tracks: [{ type: 'Audio', index: 0 }], preset: small, outDir: out() }));
    expect(e.message).toBe('Audio track 0 is not an audio stream of its file');
    const missing = await failure(transcode({ input: src, tracks: [{ type: 'Caption', index: 9 }], preset: small, outDir: out() }));
    expect(missing.message).toBe('Caption track 9 is not a subtitle stream of its file');
  });

  it('refuses the audio preset with no audio track selected (audio is never assigned automatically)', async () => {
    const e = await failure(transcode({ input: src, tracks: [], preset: presetById('audio-aac')!, outDir: out() }));
    expect(e.message).toBe('Preset audio-aac makes audio only, but no audio track was selected (audio tracks are never assigned automatically)');
  });

  it('refuses to copy a video codec HLS players cannot take, and overlays on the remux preset', async () => {
    const mpeg4 = await makeClip(dir, 'mpeg4', { seconds: 1, videoCodec: 'mpeg4' });
    const remux = presetById('remux-hls-mp4')!;
    const e = await failure(transcode({ input: mpeg4, tracks: [], preset: remux, outDir: out() }));
    expect(e.message).toBe('Preset remux-hls-mp4 copies video without re-encoding, but the source video is mpeg4; it needs H.264 or HEVC');
    const logo = await makeImage(dir, 'logo');
    const overlay = { startTime: '0', duration: 500, width: 10, height: 10, source: logo };
    const o = await failure(transcode({ input: src, tracks: [], preset: remux, overlays: [overlay], outDir: out() }));
    expect(o.message).toBe('Preset remux-hls-mp4 does not encode video, so overlays cannot be burned in');
  });

  it('reports an overlay whose picture cannot be fetched, by its number', async () => {
    const overlay = { startTime: '0', duration: 500, width: 10, height: 10, source: `${baseUrl}/logo.png?sig=secret456` };
    const e = await failure(transcode({ input: src, tracks: [], preset: small, overlays: [overlay], outDir: out() }));
    expect(e.message).toMatch(/^The picture of overlay 1 could not be read as media: .*404 Not Found/);
    expect(e.message).not.toContain('secret456');
  });

  it('refuses an overlay with an impossible placement', async () => {
    const logo = await makeImage(dir, 'logo2');
    const overlay = { startTime: 'later', duration: 500, width: 10, height: 10, opacity: 150, source: logo };
    const e = await failure(transcode({ input: src, tracks: [], preset: small, overlays: [overlay], outDir: out() }));
    expect(e.message).toBe(
      'Invalid overlay: overlays[0].startTime must be a start in milliseconds such as "1500" (or HH:MM:SS.mmm / HH:MM:SS:FF); overlays[0].opacity must be a whole number from 0 to 100',
    );
  });
});

describe('ffmpeg itself', () => {
  it('says which program is missing when FFMPEG_PATH points nowhere', async () => {
    const saved = process.env.FFMPEG_PATH;
    process.env.FFMPEG_PATH = '/nonexistent/ffmpeg';
    try {
      const e = await failure(runFfmpeg(['-version']));
      expect(e.message).toMatch(/^\/nonexistent\/ffmpeg could not be started: .*(ENOENT|No such file).*set FFMPEG_PATH/);
    } finally {
      if (saved === undefined) delete process.env.FFMPEG_PATH;
      else process.env.FFMPEG_PATH = saved;
    }
  });

  it('abort kills ffmpeg mid-encode and rejects with the abort reason', async () => {
    const long = await makeClip(dir, 'long', { width: 640, height: 360, seconds: 20, audio: [] });
    const outDir = out();
    const controller = new AbortController();
    const seen: number[] = [];
    let runningAtAbort: string[] = [];
    const slow = testPreset({ x264Preset: 'slow', ladder: [rung('360p', 640, 360, 800)] });
    const running = transcode({
      input: long,
      tracks: [],
      preset: slow,
      outDir,
      signal: controller.signal,
      onProgress: (p) => {
        seen.push(p);
        if (p > 0 && !controller.signal.aborted) {
          runningAtAbort = ffmpegProcessesUsing(outDir);
          controller.abort(new Error('asset deleted'));
        }
      },
    });
    const e = await running.then(
      () => undefined,
      (err: Error) => err,
    );
    expect(e?.message).toBe('asset deleted');
    expect(Math.max(...seen)).toBeLessThan(100);
    expect(runningAtAbort).toHaveLength(1);
    expect(ffmpegProcessesUsing(outDir)).toEqual([]);
  });

  it('encodes below the priority of the process that runs it, every encoding thread included', async () => {
    const long = await makeClip(dir, 'long', { width: 640, height: 360, seconds: 20, audio: [] });
    const outDir = out();
    const controller = new AbortController();
    let nices: number[] = [];
    /** The nice value of every thread of a process (/proc/<pid>/task/<tid>/stat, the 19th field). */
    const threadNices = (pid: string) =>
      readdirSync(`/proc/${pid}/task`).map((tid) => Number(readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8').split(') ')[1]!.split(' ')[16]));
    await transcode({
      input: long,
      tracks: [],
      preset: testPreset({ x264Preset: 'slow', ladder: [rung('360p', 640, 360, 800)] }),
      outDir,
      signal: controller.signal,
      onProgress: (p) => {
        if (p <= 0 || controller.signal.aborted) return;
        nices = ffmpegProcessesUsing(outDir).flatMap((line) => threadNices(line.split(':')[0]!));
        controller.abort(new Error('seen'));
      },
    }).catch(() => {});
    expect(nices.length).toBeGreaterThan(1);
    expect(new Set(nices)).toEqual(new Set([BACKGROUND_NICE]));
  });
});
