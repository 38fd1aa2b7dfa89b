// Progress on a terminal (standard error, never with --json): a bar per file with bytes, speed and time left, and a
// status line for long waits. Nothing is drawn when standard error is not a terminal.
import { bytes, duration } from './output.ts';

const REDRAW_MS = 100;

/** The terminal's width (a terminal that reports none, as under `script`, gets 100). */
const columns = () => process.stderr.columns || 100;

export interface Line {
  update(text: string): void;
  /** Draws the final text and moves to the next line. */
  done(text: string): void;
}

/** One line that redraws in place (at most every 100 ms), or nothing when `enabled` is false. */
export function statusLine(enabled: boolean): Line {
  if (!enabled) return { update: () => {}, done: () => {} };
  let last = 0;
  const draw = (text: string) => process.stderr.write(`\r\x1b[2K${text.slice(0, columns() - 1)}`);
  return {
    update(text) {
      const now = Date.now();
      if (now - last < REDRAW_MS) return;
      last = now;
      draw(text);
    },
    done(text) {
      draw(text);
      process.stderr.write('\n');
    },
  };
}

/** `name  [#####-----]  45%  12.0/26.7 MiB  3.1 MiB/s  0:05 left`, from the bytes sent so far. */
export function uploadBar(name: string, line: Line): { progress(loaded: number, total: number): void; finish(total: number): void } {
  const started = Date.now();
  const render = (loaded: number, total: number, final: boolean) => {
    const seconds = Math.max(0.001, (Date.now() - started) / 1000);
    const rate = loaded / seconds;
    const fraction = total ? loaded / total : 1;
    const width = 24;
    const filled = Math.round(fraction * width);
    const left = rate > 0 ? ((total - loaded) / rate) * 1000 : NaN;
    const tail = final ? `in ${duration(seconds * 1000)}` : `${Number.isFinite(left) ? duration(left) : '-:--'} left`;
    const bar = `  [${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${String(Math.floor(fraction * 100)).padStart(3)}%  ${bytes(loaded)}/${bytes(total)}  ${bytes(rate)}/s  ${tail}`;
    // A long name gives way to the figures on a narrow terminal.
    const room = Math.max(8, columns() - 1 - bar.length);
    return `${name.length > room ? `${name.slice(0, room - 1)}…` : name}${bar}`;
  };
  return {
    progress: (loaded, total) => line.update(render(loaded, total, false)),
    finish: (total) => line.done(render(total, total, true)),
  };
}
