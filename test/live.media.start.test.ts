import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { localPipeline } from './helpers/live.ts';
import { tempDir } from './helpers/media.ts';

describe('live media: a pipeline whose encoder cannot run', () => {
  const tmp = tempDir('mediaplane-live-start-');
  afterAll(() => tmp.cleanup());

  it('fails its start with the reason (no endless restarts behind Starting), and leaves nothing behind', async () => {
    const { pipeline, events } = localPipeline(join(tmp.dir, 'p'));
    const before = process.env.FFMPEG_PATH;
    process.env.FFMPEG_PATH = join(tmp.dir, 'no-such-ffmpeg');
    try {
      await expect(pipeline.start()).rejects.toThrow(/could not be started.*FFMPEG_PATH/);
    } finally {
      if (before === undefined) delete process.env.FFMPEG_PATH;
      else process.env.FFMPEG_PATH = before;
    }
    // Not reported as a crash to restart: the caller has the error, and the pipeline is stopped.
    expect(events).toEqual([]);
    expect(existsSync(join(tmp.dir, 'p', 'work'))).toBe(false);
    pipeline.setInput({ url: 'rtmp://127.0.0.1:9/live/x' });
    expect(pipeline.stats().segmentsWritten).toBe(0);
    await pipeline.stop();
  });

  it('a working encoder: start resolves once the first segment is published', async () => {
    const { pipeline, events, outDir } = localPipeline(join(tmp.dir, 'q'));
    try {
      await pipeline.start();
      expect(events.some((e) => e.type === 'segment')).toBe(true);
      expect(existsSync(join(outDir, 'master.m3u8'))).toBe(true);
    } finally {
      await pipeline.stop();
    }
  });
});
