/** How far back the input's bitrate and frame rate are averaged. */
const WINDOW_MS = 5000;

interface Sample {
  at: number;
  frames: number;
  bytes: number;
}

/**
 * A live run's `-progress pipe:1` blocks, turned into the channel's input figures. ffmpeg counts output frames after
 * the `fps` filter, and its drop/dup counters do not see what that filter repeats or drops: a 15 fps input into a
 * 25 fps rung reads as 25. So the input's frames come from the ingest's count when there is one (a pushed input); a
 * pulled input has only ffmpeg's figure.
 */
export class RunProgress {
  private buffer = '';
  private block: Record<string, string> = {};
  private samples: Sample[] = [];
  dropped = 0;
  duplicated = 0;
  /** When ffmpeg last reported a frame count higher than before (a stalled input stops this). */
  lastAdvanceAt = Date.now();
  private frames = 0;

  constructor(
    private readonly bytesReceived?: () => number,
    private readonly framesReceived?: () => number,
  ) {}

  push(chunk: string): void {
    this.buffer += chunk;
    const lines = this.buffer.split('\n');
    this.buffer = lines.pop() ?? '';
    for (const line of lines) {
      const eq = line.indexOf('=');
      if (eq < 0) continue;
      const key = line.slice(0, eq).trim();
      const value = line.slice(eq + 1).trim();
      if (key === 'progress') this.endBlock();
      else this.block[key] = value;
    }
  }

  private endBlock(): void {
    const num = (k: string) => {
      const n = Number(this.block[k]);
      return Number.isFinite(n) ? n : 0;
    };
    const frames = num('frame');
    this.dropped = num('drop_frames');
    this.duplicated = num('dup_frames');
    const now = Date.now();
    if (frames > this.frames) this.lastAdvanceAt = now;
    this.frames = frames;
    const received = this.framesReceived ? this.framesReceived() : frames + this.dropped - this.duplicated;
    this.samples.push({ at: now, frames: received, bytes: this.bytesReceived?.() ?? 0 });
    while (this.samples.length > 2 && now - this.samples[0]!.at > WINDOW_MS) this.samples.shift();
    this.block = {};
  }

  private span(): [Sample, Sample] | undefined {
    const first = this.samples[0];
    const last = this.samples.at(-1);
    return first && last && last.at - first.at >= 400 ? [first, last] : undefined;
  }

  get inputFrameRate(): number {
    const s = this.span();
    return s ? Math.round(((s[1].frames - s[0].frames) / ((s[1].at - s[0].at) / 1000)) * 100) / 100 : 0;
  }

  inputBitrateKbps(): number {
    const s = this.span();
    return s ? Math.round(((s[1].bytes - s[0].bytes) * 8) / (s[1].at - s[0].at)) : 0;
  }
}
