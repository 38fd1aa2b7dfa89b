import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runFfmpeg } from '../ffmpeg.ts';

// A suspect (a capture to look for marks in) is read finer than the reference: SUSPECT_W x SUSPECT_H luma,
// SUSPECT_FPS pictures a second, so that its geometry and its time can be fitted against the reference (locate.ts).
export const SUSPECT_W = 64;
export const SUSPECT_H = 36;
export const SUSPECT_FPS = 10;
export const SUSPECT_CELLS = SUSPECT_W * SUSPECT_H;
export const SUSPECT_FILTER = `fps=${SUSPECT_FPS},scale=${SUSPECT_W}:${SUSPECT_H}:flags=area,format=gray`;

/** The suspect's first video track, SUSPECT_FPS pictures a second reduced to SUSPECT_W x SUSPECT_H luma bytes. */
export async function readSuspect(input: string, signal?: AbortSignal): Promise<Buffer> {
  const dir = await mkdtemp(join(tmpdir(), 'mediaplane-suspect-'));
  try {
    const out = join(dir, 'suspect.gray');
    await runFfmpeg(['-y', '-i', input, '-map', '0:v:0', '-vf', SUSPECT_FILTER, '-f', 'rawvideo', out], {
      signal,
      redact: { [input]: 'the file', [dir]: 'the work directory' },
    });
    return await readFile(out);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export const suspectCount = (suspect: Buffer) => Math.floor(suspect.length / SUSPECT_CELLS);
