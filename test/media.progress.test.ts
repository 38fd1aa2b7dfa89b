import { describe, expect, it } from 'vitest';
import { runFfmpeg } from '../src/media/ffmpeg.ts';
import { ProgressParser } from '../src/media/progress.ts';

/** Captured from `ffmpeg … -f hls … -progress pipe:1 -stats_period 0.25` encoding 2 s of 1280x720 (Debian ffmpeg 5.1). */
const CAPTURED = `frame=1
fps=0.00
stream_0_0_q=0.0
bitrate=N/A
total_size=N/A
out_time_us=0
out_time_ms=0
out_time=00:00:00.000000
dup_frames=0
drop_frames=0
speed=   0x
progress=continue
frame=47
fps=0.00
stream_0_0_q=0.0
bitrate=N/A
total_size=N/A
out_time_us=0
out_time_ms=0
out_time=00:00:00.000000
dup_frames=0
drop_frames=0
speed=   0x
progress=continue
frame=60
fps=0.00
stream_0_0_q=29.0
bitrate=N/A
total_size=N/A
out_time_us=366667
out_time_ms=366667
out_time=00:00:00.366667
dup_frames=0
drop_frames=0
speed=0.572x
progress=continue
frame=60
fps=51.17
stream_0_0_q=-1.0
bitrate=N/A
total_size=N/A
out_time_us=2020133
out_time_ms=2020133
out_time=00:00:02.020133
dup_frames=0
drop_frames=0
speed=1.72x
progress=end
`;

function feed(text: string, durationMs: number, chunkSize: number): number[] {
  const seen: number[] = [];
  const parser = new ProgressParser(durationMs, (p) => seen.push(p));
  for (let i = 0; i < text.length; i += chunkSize) parser.push(text.slice(i, i + chunkSize));
  return seen;
}

describe('progress parser', () => {
  it('turns captured ffmpeg progress into rising percents of the source duration, 100 only at the end', () => {
    expect(feed(CAPTURED, 2000, 4096)).toEqual([0, 18, 100]);
  });

  it('gives the same percents however the output is split into chunks', () => {
    for (const size of [1, 7, 33, 100]) expect(feed(CAPTURED, 2000, size)).toEqual([0, 18, 100]);
  });

  it('never goes back, ignores N/A and negative times, and holds at 99 until ffmpeg says end', () => {
    const block = (us: string, progress = 'continue') => `out_time_us=${us}\nprogress=${progress}\n`;
    const text =
      block('N/A') + block('-9223372036854775807') + block('500000') + block('400000') + block('990000') + block('1500000') + block('1500000', 'end');
    expect(feed(text, 1000, 4096)).toEqual([0, 50, 99, 100]);
  });

  it('reports only the end when the duration is unknown', () => {
    expect(feed(CAPTURED, 0, 4096)).toEqual([0, 100]);
  });

  it('follows a real ffmpeg run to 100', async () => {
    const seen: number[] = [];
    const parser = new ProgressParser(3000, (p) => seen.push(p));
    await runFfmpeg(
      [
        '-f',
        'lavfi',
        '-i',
        'testsrc2=size=320x180:rate=30:duration=3',
        '-c:v',
        'libx264',
        '-preset',
        'ultrafast',
        '-f',
        'null',
        '-',
        '-progress',
        'pipe:1',
        '-stats_period',
        '0.05',
      ],
      { onStdout: (c) => parser.push(c) },
    );
    expect(seen.at(-1)).toBe(100);
    expect(seen).toEqual([...seen].sort((a, b) => a - b));
    expect(new Set(seen).size).toBe(seen.length);
    expect(parser.percent).toBe(100);
  });
});
