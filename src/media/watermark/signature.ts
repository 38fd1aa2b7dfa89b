import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runFfmpeg } from '../ffmpeg.ts';
import { GRID_FILTER } from './prepare.ts';

/**
 * A media file reduced to what the detector compares: its first video track sampled at SAMPLE_FPS, every picture
 * averaged down to the GRID_W x GRID_H luma grid, one byte per cell (the same reduction as the reference).
 */
export async function readGrid(input: string, signal?: AbortSignal): Promise<Buffer> {
  const dir = await mkdtemp(join(tmpdir(), 'mediaplane-grid-'));
  try {
    const out = join(dir, 'grid.gray');
    await runFfmpeg(['-y', '-i', input, '-map', '0:v:0', '-vf', GRID_FILTER, '-f', 'rawvideo', out], {
      signal,
      redact: { [input]: 'the file', [dir]: 'the work directory' },
    });
    return await readFile(out);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
