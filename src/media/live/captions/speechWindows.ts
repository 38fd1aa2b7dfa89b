import { PCM_RATE } from './recognizer.ts';

/** A stretch of the channel's audio given to the recognizer at once; `start` is seconds on the channel's timeline. */
export interface SpeechWindow {
  start: number;
  pcm: Buffer;
  /** It has a loud frame: worth recognizing. A quiet window holds no words and is final as it is. */
  speech: boolean;
}

const FRAME_SAMPLES = PCM_RATE / 50; // 20 ms
const FRAME_BYTES = FRAME_SAMPLES * 2;
/** A pause: this many quiet frames in a row (300 ms). Windows are cut in pauses, so no word is cut in two. */
const PAUSE_FRAMES = 15;
/** Windows are at least this long (each costs a model load) and at most this long without a pause (the captions' lag). */
const MIN_SECONDS = 1;
export const MAX_WINDOW_SECONDS = 6;
/** Quiet: below this RMS (of 32767), or below this share of the loudest frame of the window. */
const QUIET_FLOOR = 200;
const QUIET_SHARE = 0.08;
/** Audio that starts further than this from where the last ended is another stretch (a new run of the encoder). */
const CONTIGUOUS_S = 0.05;

export const pcmSeconds = (pcm: Buffer) => pcm.length / 2 / PCM_RATE;

/** Cuts the channel's audio (16 kHz mono s16le, as it is decoded segment by segment) into windows at its pauses. */
export class SpeechWindows {
  private start = 0;
  private buffer = Buffer.alloc(0);

  /** Adds audio starting at `start` (seconds); returns the windows it completes, in order. */
  push(start: number, pcm: Buffer): SpeechWindow[] {
    const out: SpeechWindow[] = [];
    if (this.buffer.length > 0 && Math.abs(start - (this.start + pcmSeconds(this.buffer))) > CONTIGUOUS_S) out.push(...this.flush());
    if (this.buffer.length === 0) this.start = start;
    this.buffer = Buffer.concat([this.buffer, pcm]);
    for (;;) {
      const cut = this.cutPoint();
      if (cut === undefined) break;
      out.push(this.take(cut));
    }
    return out;
  }

  /** Everything held, as one last window (a new stretch begins, or the channel stops). */
  flush(): SpeechWindow[] {
    return this.buffer.length > 0 ? [this.take(this.buffer.length / FRAME_BYTES)] : [];
  }

  private take(frames: number): SpeechWindow {
    const bytes = Math.min(this.buffer.length, Math.round(frames) * FRAME_BYTES);
    const pcm = this.buffer.subarray(0, bytes);
    const window = { start: this.start, pcm: Buffer.from(pcm), speech: quietFrames(levels(pcm)).some((q) => !q) };
    this.buffer = Buffer.from(this.buffer.subarray(bytes));
    this.start += pcmSeconds(pcm);
    return window;
  }

  /** Where to end the next window, in frames; undefined to wait for more audio. */
  private cutPoint(): number | undefined {
    const lv = levels(this.buffer);
    const n = lv.length;
    if (n === 0) return undefined;
    const isQuiet = quietFrames(lv);
    // Nothing but quiet: final at once, nobody waits for the recognizer.
    if (isQuiet.every(Boolean)) return n;
    const min = MIN_SECONDS * 50;
    // A pause at the end: the window ends with it.
    let trailing = 0;
    while (trailing < n && isQuiet[n - 1 - trailing]) trailing++;
    if (trailing >= PAUSE_FRAMES && n >= min) return n;
    // Else the middle of the last pause inside it.
    for (let end = n - trailing - 1; end >= min; end--) {
      if (!isQuiet[end]) continue;
      let begin = end;
      while (begin > 0 && isQuiet[begin - 1]) begin--;
      if (end - begin + 1 >= PAUSE_FRAMES && (begin + end) / 2 >= min) return Math.floor((begin + end + 1) / 2);
      end = begin;
    }
    // No pause for too long: cut at the quietest frame of the last third.
    if (n >= MAX_WINDOW_SECONDS * 50) {
      let best = n - 1;
      for (let i = Math.floor((n * 2) / 3); i < n; i++) if (lv[i]! < lv[best]!) best = i;
      return best + 1;
    }
    return undefined;
  }
}

/** RMS of each 20 ms frame (a partial last frame is left for later). */
function levels(pcm: Buffer): number[] {
  const out: number[] = [];
  for (let at = 0; at + FRAME_BYTES <= pcm.length; at += FRAME_BYTES) {
    let sum = 0;
    for (let i = at; i < at + FRAME_BYTES; i += 2) {
      const v = pcm.readInt16LE(i);
      sum += v * v;
    }
    out.push(Math.sqrt(sum / FRAME_SAMPLES));
  }
  return out;
}

function quietFrames(lv: number[]): boolean[] {
  const threshold = Math.max(QUIET_FLOOR, QUIET_SHARE * lv.reduce((a, b) => Math.max(a, b), 0));
  return lv.map((l) => l < threshold);
}
