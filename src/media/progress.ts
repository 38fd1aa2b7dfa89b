/**
 * Turns ffmpeg's `-progress pipe:1` output (blocks of `key=value` lines, each closed by `progress=continue` or
 * `progress=end`) into a whole percent of the source duration. Reports only rises: 0–99 while ffmpeg writes, 100 once
 * it says `progress=end`, so a player never sees 100 for an output whose last segment is not written yet.
 */
export class ProgressParser {
  private buffer = '';
  private outTimeUs = 0;
  private reported = -1;

  /** `startMs`: where ffmpeg's output clock starts (a chunk keeps its source times), counted as 0%. */
  constructor(
    private readonly durationMs: number,
    private readonly onPercent: (percent: number) => void,
    private readonly startMs = 0,
  ) {}

  get percent(): number {
    return Math.max(this.reported, 0);
  }

  push(chunk: string): void {
    this.buffer += chunk;
    const lines = this.buffer.split('\n');
    this.buffer = lines.pop() ?? '';
    for (const line of lines) this.line(line.trim());
  }

  private line(line: string): void {
    const eq = line.indexOf('=');
    if (eq < 0) return;
    const key = line.slice(0, eq);
    const value = line.slice(eq + 1).trim();
    if (key === 'out_time_us') {
      // `N/A` and negative values (before the first packet) say nothing about how far ffmpeg is.
      const us = Number(value);
      if (Number.isFinite(us) && us > this.outTimeUs) this.outTimeUs = us;
    } else if (key === 'progress') {
      this.report(value === 'end' ? 100 : this.estimate());
    }
  }

  private estimate(): number {
    if (!(this.durationMs > 0)) return 0;
    return Math.max(0, Math.min(99, Math.floor(((this.outTimeUs - this.startMs * 1000) / (this.durationMs * 1000)) * 100)));
  }

  private report(percent: number): void {
    if (percent <= this.reported) return;
    this.reported = percent;
    this.onPercent(percent);
  }
}
