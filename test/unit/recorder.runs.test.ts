import { describe, expect, it } from 'vitest';
import { runDurations } from '../../src/modules/recorder/record.ts';

/**
 * A recording's length is its encoder runs' end to end, each as long as its longest track (src/modules/recorder/
 * record.ts): the length its outputs have, which lay the runs so. With two run changes the tracks' own sums are
 * shorter (each track is the longer one in a different run).
 */
describe("a recording's runs", () => {
  const seg = (run: number, track: string, durationMs: number) => ({ run, track, durationMs });
  const rows = [
    // Run 1: the video a frame longer than the audio; run 2: the audio 12 ms longer; run 3: equal.
    ...[seg(1, '720p', 4000), seg(1, '720p', 2067), seg(1, 'audio', 6000)],
    ...[seg(2, '720p', 4000), seg(2, 'audio', 4012)],
    ...[seg(3, '720p', 2000), seg(3, 'audio', 2000)],
    seg(3, 'subs', 9000),
  ];

  it('last as long as their longest track each, of the tracks asked for', () => {
    expect(runDurations(rows, ['720p', 'audio'])).toEqual(
      new Map([
        [1, 6067],
        [2, 4012],
        [3, 2000],
      ]),
    );
    const total = [...runDurations(rows, ['720p', 'audio']).values()].reduce((a, b) => a + b, 0);
    expect(total).toBe(12_079);
    // Longer than either track's own sum (12 067 and 12 012 ms).
    expect(total).toBeGreaterThan(Math.max(12_067, 12_012));
  });
});
