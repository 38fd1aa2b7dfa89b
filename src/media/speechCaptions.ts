import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { BACKGROUND_NICE, runFfmpeg } from './ffmpeg.ts';
import type { CaptionModel } from './live/captions/captionModels.ts';
import { PCM_RATE, recognize } from './live/captions/recognizer.ts';
import { cuesOf, webvttFile } from './live/captions/subtitles.ts';

export interface SpeechCaptionsRequest {
  /** The source (a local path or a URL ffmpeg reads) and the index of its audio stream to caption. */
  input: string;
  stream: number;
  model: CaptionModel;
  /** The source's length: the recognizer is given up after three times it (two minutes at least). */
  durationMs: number;
  workDir: string;
  signal?: AbortSignal;
}

/**
 * Captions of a VOD asset made from its speech (docs/decisions/vod-assets.md, "Generated captions"): its audio track
 * as 16 kHz mono PCM, one recognizer run over the whole of it (the live captions' recognizer and model), the words
 * grouped into cues as the live captions group them. Cue times are the source's. Answers the WebVTT text and its cues.
 */
export async function captionsFromSpeech(req: SpeechCaptionsRequest): Promise<{ vtt: string; cues: number }> {
  await mkdir(req.workDir, { recursive: true });
  // Not `.wav`: the recognizer would skip a header this raw file does not have.
  const pcm = join(req.workDir, 'speech.pcm');
  await runFfmpeg(['-y', '-i', req.input, '-map', `0:${req.stream}`, '-vn', '-ac', '1', '-ar', String(PCM_RATE), '-f', 's16le', pcm], {
    signal: req.signal,
    redact: { [req.input]: 'source', [req.workDir]: 'work' },
    background: true,
  });
  const words = await recognize(req.model, pcm, req.signal, { timeoutMs: Math.max(120_000, req.durationMs * 3), niceness: BACKGROUND_NICE });
  const cues = cuesOf(words);
  return { vtt: webvttFile(cues), cues: cues.length };
}
