import { spawnTool, toolNotStarted } from '../../spawnTool.ts';
import { setPriority } from 'node:os';
import { mediaTools } from '../../../config.ts';
import type { CaptionModel } from './captionModels.ts';

/** A recognized word: seconds from the start of the audio it was given. */
export interface Word {
  text: string;
  start: number;
  end: number;
}

export const PCM_RATE = 16_000;
/** A window the recognizer has not finished in this long is given up (a hung process must not stall the captions). */
const RECOGNIZE_TIMEOUT_MS = 60_000;
const STDERR_TAIL = 2000;
/**
 * Between the live encoders (0) and batch work (BACKGROUND_NICE, 10): live captions wait for live video, while VOD
 * encodes, which have no clock to keep, wait for live captions.
 */
const RECOGNIZER_NICENESS = 5;

/**
 * `pocketsphinx_continuous -time yes` prints each utterance's hypothesis, then one line per word and filler:
 * `<word> <start s> <end s> <confidence>`. Fillers (`<s>`, `</s>`, `<sil>`, `[NOISE]`, `++BREATH++`) are dropped, and
 * the dictionary's alternative pronunciations (`the(2)`) are the plain word.
 */
export function parseWordTimes(stdout: string): Word[] {
  const words: Word[] = [];
  for (const line of stdout.split('\n')) {
    const m = /^(\S+) (\d+\.\d+) (\d+\.\d+) [\d.eE+-]+$/.exec(line.trim());
    if (!m) continue;
    const text = m[1]!.replace(/\(\d+\)$/, '');
    if (/^(<.*>|\[.*\]|\+\+.*\+\+)$/.test(text)) continue;
    words.push({ text, start: Number(m[2]), end: Number(m[3]) });
  }
  return words;
}

export class RecognizerError extends Error {
  override name = 'RecognizerError';
}

/**
 * Recognizes one window of speech (a file of 16 kHz mono s16le: Node's child stdin is a socket, which the recognizer
 * cannot open as `/dev/stdin`) in a process of its own: the model is loaded per window (about 0.4 s of CPU), which is
 * what makes each window's end certain (the process exits), unlike a long-running recognizer, whose silence says
 * nothing. A crash or a hang fails the window only. A VOD asset's whole audio is one file (`timeoutMs` and `niceness`
 * then suit batch work).
 */
export function recognize(
  model: CaptionModel,
  pcmFile: string,
  signal?: AbortSignal,
  { timeoutMs = RECOGNIZE_TIMEOUT_MS, niceness = RECOGNIZER_NICENESS }: { timeoutMs?: number; niceness?: number } = {},
): Promise<Word[]> {
  return new Promise((resolve, reject) => {
    // The file's name must not end in .wav: the recognizer would skip a header it does not have.
    const args = ['-infile', pcmFile, '-time', 'yes', '-hmm', model.hmm, '-lm', model.lm, '-dict', model.dict, '-logfn', '/dev/null'];
    const child = spawnTool(mediaTools().recognizer, args);
    // Below the live encoders: on a busy machine the captions wait, never the video.
    if (child.pid !== undefined) {
      try {
        setPriority(child.pid, niceness);
      } catch {
        // Not allowed here (a container without the capability): it runs at the normal priority.
      }
    }
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    const onAbort = () => child.kill('SIGKILL');
    signal?.addEventListener('abort', onAbort, { once: true });
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr = (stderr + c).slice(-STDERR_TAIL)));
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    };
    child.on('error', (e) => {
      done();
      reject(new RecognizerError(`the speech recognizer could not be started: ${e.message}`));
    });
    child.on('close', (code, sig) => {
      done();
      if (code === 0) return resolve(parseWordTimes(stdout));
      if (toolNotStarted(code, stderr)) return reject(new RecognizerError(`the speech recognizer could not be started: ${stderr.trim().split('\n').at(-1)}`));
      const detail = stderr.trim().split('\n').at(-1) || (sig ? `killed by ${sig}` : `exit code ${code}`);
      reject(new RecognizerError(`the speech recognizer failed: ${detail}`));
    });
  });
}
