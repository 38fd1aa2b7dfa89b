import { describe, expect, it } from 'vitest';
import { splitSource } from '../../src/media/chunks.ts';
import { videoEncoderArgs } from '../../src/media/ladder.ts';
import { ProgressParser } from '../../src/media/progress.ts';
import { testPreset } from '../helpers/media.ts';

describe('the chunked path cuts a source on segment boundaries', () => {
  it('rounds the chunk up to whole segments and leaves the last chunk open to the source end', () => {
    expect(splitSource(14_000, 3, 4)).toEqual([
      { index: 0, startS: 0, endS: 4 },
      { index: 1, startS: 4, endS: 8 },
      { index: 2, startS: 8, endS: 12 },
      { index: 3, startS: 12 },
    ]);
    expect(splitSource(120_000, 60, 4)).toEqual([
      { index: 0, startS: 0, endS: 60 },
      { index: 1, startS: 60 },
    ]);
    // A source of exactly two chunks is two chunks, not two and an empty third.
    expect(splitSource(8_000, 4, 4)).toHaveLength(2);
  });

  it('forces keyframes on the one-pass segment boundaries from a chunk whose first frame lies past its start', () => {
    const args = videoEncoderArgs(testPreset({ segmentSeconds: 4 }), [], { shiftS: 0.008 });
    expect(args[args.indexOf('-force_key_frames') + 1]).toBe('expr:gte(t,n_forced*4-0.008000)');
  });

  it('counts a chunk progress from its own start', () => {
    const seen: number[] = [];
    const parser = new ProgressParser(4000, (p) => seen.push(p), 8000);
    parser.push('out_time_us=10000000\nprogress=continue\n');
    expect(seen).toEqual([50]);
  });
});
