import { chmodSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { installedCaptionModels } from '../src/media/live/index.ts';
import { localPipeline, readPlaylist, waitFor } from './helpers/live.ts';
import { tempDir } from './helpers/media.ts';
import { spokenClip } from './helpers/speech.ts';

describe('live media: captions whose recognizer fails', () => {
  const tmp = tempDir('mediaplane-live-captions-');
  afterAll(() => tmp.cleanup());

  it('keeps the video going, tries each window again, and publishes the WebVTT segments without cues', async () => {
    const model = installedCaptionModels('/usr/share/pocketsphinx/model').find((m) => m.code === 'en-US');
    expect(model, 'pocketsphinx-en-us (scripts/ensure-system-deps.sh pocketsphinx)').toBeDefined();
    const clip = await spokenClip(tmp.dir);
    // A recognizer that counts its runs and fails every one.
    const runs = join(tmp.dir, 'runs');
    const broken = join(tmp.dir, 'broken-recognizer');
    writeFileSync(broken, `#!/bin/sh\necho run >> '${runs}'\nexit 3\n`);
    chmodSync(broken, 0o755);
    const before = process.env.POCKETSPHINX_PATH;
    process.env.POCKETSPHINX_PATH = broken;
    const { pipeline, outDir } = localPipeline(join(tmp.dir, 'p'), { captions: model });
    const count = (file: string) => readPlaylist(join(outDir, file))?.segments.length ?? 0;
    try {
      await pipeline.start();
      pipeline.setInput({ url: clip, loop: true });
      // The recognizer was asked (and retried: three runs a window) ...
      await waitFor('the recognizer to fail a window three times', () => existsSync(runs) && readFileSync(runs, 'utf8').split('\n').length > 3);
      // ... and the video goes on past it, with WebVTT segments published for the spoken audio all the same.
      const videoThen = readPlaylist(join(outDir, '180p.m3u8'))!.sequence + count('180p.m3u8');
      await waitFor('six more video segments', () => readPlaylist(join(outDir, '180p.m3u8'))!.sequence + count('180p.m3u8') >= videoThen + 6);
      await waitFor('WebVTT segments of the spoken audio', () => readdirSync(join(outDir, 'captions')).length >= 6);
      for (const f of readdirSync(join(outDir, 'captions'))) expect(readFileSync(join(outDir, 'captions', f), 'utf8')).not.toContain('-->');
      expect(pipeline.stats().segmentsWritten).toBeGreaterThan(0);
    } finally {
      if (before === undefined) delete process.env.POCKETSPHINX_PATH;
      else process.env.POCKETSPHINX_PATH = before;
      await pipeline.stop();
    }
  }, 120_000);
});
