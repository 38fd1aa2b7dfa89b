import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { runFfmpeg } from '../../ffmpeg.ts';
import type { CaptionModel } from './captionModels.ts';
import { PCM_RATE, recognize, type Word } from './recognizer.ts';
import { SpeechWindows, pcmSeconds, type SpeechWindow } from './speechWindows.ts';
import { cuesOf, SUBTITLE_PLAYLIST, subtitleKey, subtitlePlaylist, webvttSegment, type Cue, type SubtitleSegment, type SubtitleTrack } from './subtitles.ts';
import { WVTT_INIT, wvttInit, wvttKey, wvttSegment } from './wvtt.ts';

export interface CaptionerOptions {
  model: CaptionModel;
  /** Scratch space for decoding (the captioner owns it). */
  workDir: string;
  segmentSeconds: number;
  windowSegments: number;
  retentionSeconds: number;
  availabilityStart: number;
  publish(key: string, body: Buffer, contentType: string): Promise<void>;
  remove(keys: string[]): Promise<void>;
  /** A caption segment is out (both its files): the channel's timeline keeps it, as it keeps the media segments. */
  onPublished?(segment: SubtitleSegment): void;
  log: Logger;
}

/** One published audio segment, as the packager announces it. */
export interface CaptionAudio {
  sequence: number;
  decodeTime: number;
  timescale: number;
  duration: number;
  run: number;
  discontinuity: number;
  period: number;
  init: Buffer;
  body: Buffer;
}

/** A failed recognition is tried this many times (after 0.5 s, 1 s) before its window is left without captions. */
const RECOGNIZE_ATTEMPTS = 3;
/** Audio segments waiting for the recognizer beyond this are captioned empty: captions fall behind no further. */
const MAX_BACKLOG = 8;
const VTT = 'text/vtt';
const HLS = 'application/vnd.apple.mpegurl';
const MP4 = 'application/mp4';

/**
 * A channel's live captions. Each published audio segment is decoded (ffmpeg, 16 kHz mono), cut into windows at its
 * pauses, and each window with speech recognized by pocketsphinx in a process of its own; the words become cues, and a
 * WebVTT segment of the same span and sequence number as the audio segment is published (again as wvtt in fragmented
 * MP4, for DASH players) once everything up to its end is recognized. All of it runs beside the pipeline, never in its
 * way: the packager only hands segments over, and a failing or slow recognizer costs captions, never video.
 */
export class LiveCaptioner implements SubtitleTrack {
  readonly language: string;
  readonly name: string;
  private readonly windows = new SpeechWindows();
  private readonly published: SubtitleSegment[] = [];
  private readonly waiting: SubtitleSegment[] = [];
  private cues: Cue[] = [];
  /** Where on the timeline everything before is recognized (seconds). */
  private recognizedUntil = 0;
  private work: Promise<void> = Promise.resolve();
  private backlog = 0;
  private readonly abort = new AbortController();
  private stopped = false;
  /** Wall-clock ms at which each segment's audio was handed over, to report the captions' lag. */
  private readonly handedAt = new Map<number, number>();
  private lastLagMs: number | undefined;
  private initPublished = false;

  constructor(private readonly o: CaptionerOptions) {
    this.language = o.model.code;
    this.name = o.model.name;
  }

  segments(): SubtitleSegment[] {
    return this.published;
  }

  /** How long the last WebVTT segment took to follow its audio segment (ms): the captions' lag behind the video. */
  get lagMs(): number | undefined {
    return this.lastLagMs;
  }

  /** An audio segment is published: captioned in turn, in the background. */
  addAudio(a: CaptionAudio): void {
    if (this.stopped) return;
    const segment: SubtitleSegment = {
      sequence: a.sequence,
      start: a.decodeTime / a.timescale,
      duration: a.duration,
      run: a.run,
      discontinuity: a.discontinuity,
      period: a.period,
    };
    this.waiting.push(segment);
    this.handedAt.set(a.sequence, Date.now());
    const skip = this.backlog >= MAX_BACKLOG;
    if (skip) this.o.log.warn({ sequence: a.sequence }, 'live captions fall behind; a segment is left without captions');
    this.backlog += 1;
    // Decoded at once, while the recognizer works on the audio before it.
    const pcm = skip ? undefined : this.decode(a);
    pcm?.catch(() => {});
    this.work = this.work
      .then(() => (pcm ? this.caption(pcm, segment) : this.skip(segment)))
      .catch((err) => this.o.log.error({ err }, 'live captions failed for a segment'))
      .finally(() => (this.backlog -= 1));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.abort.abort();
    await this.work;
    await rm(this.o.workDir, { recursive: true, force: true });
  }

  private async caption(decoded: Promise<Buffer>, segment: SubtitleSegment): Promise<void> {
    if (this.stopped) return;
    let pcm: Buffer;
    try {
      pcm = await decoded;
    } catch (err) {
      if (this.stopped) return;
      this.o.log.warn({ err, sequence: segment.sequence }, 'live captions: an audio segment could not be decoded; it is captioned empty');
      pcm = Buffer.alloc(0);
    }
    // Exactly the segment's length, so that the timeline of the words is the segment's.
    const bytes = Math.round(segment.duration * PCM_RATE) * 2;
    const fitted = pcm.length >= bytes ? pcm.subarray(0, bytes) : Buffer.concat([pcm, Buffer.alloc(bytes - pcm.length)]);
    for (const w of this.windows.push(segment.start, fitted)) await this.recognizeWindow(w);
    await this.publishReady();
  }

  /** Too far behind: the segment's audio is never recognized (what was held before it is, as one window). */
  private async skip(segment: SubtitleSegment): Promise<void> {
    for (const w of this.windows.flush()) await this.recognizeWindow(w);
    this.recognizedUntil = Math.max(this.recognizedUntil, segment.start + segment.duration);
    await this.publishReady();
  }

  private async decode(a: CaptionAudio): Promise<Buffer> {
    await mkdir(this.o.workDir, { recursive: true });
    const input = join(this.o.workDir, `${a.sequence}.mp4`);
    const output = join(this.o.workDir, `${a.sequence}.pcm`);
    try {
      await writeFile(input, Buffer.concat([a.init, a.body]));
      await runFfmpeg(['-i', input, '-vn', '-ac', '1', '-ar', String(PCM_RATE), '-f', 's16le', '-y', output], {
        signal: this.abort.signal,
        redact: { [this.o.workDir]: '<captions>' },
      });
      return await readFile(output);
    } finally {
      await Promise.all([rm(input, { force: true }), rm(output, { force: true })]);
    }
  }

  private async recognizeWindow(w: SpeechWindow): Promise<void> {
    if (w.speech && !this.stopped) {
      let words: Word[] = [];
      for (let attempt = 1; attempt <= RECOGNIZE_ATTEMPTS; attempt++) {
        try {
          words = await this.recognizeOnce(w);
          break;
        } catch (err) {
          if (this.stopped) return;
          const last = attempt === RECOGNIZE_ATTEMPTS;
          this.o.log.warn(
            { err, attempt, start: w.start },
            last ? 'live captions: the recognizer failed; this window has no captions' : 'live captions: the recognizer failed; retrying',
          );
          if (!last) await new Promise((r) => setTimeout(r, 500 * attempt));
        }
      }
      this.cues.push(...cuesOf(words.map((x) => ({ text: x.text, start: w.start + x.start, end: w.start + x.end }))));
    }
    this.recognizedUntil = Math.max(this.recognizedUntil, w.start + pcmSeconds(w.pcm));
  }

  private async recognizeOnce(w: SpeechWindow): Promise<Word[]> {
    await mkdir(this.o.workDir, { recursive: true });
    const file = join(this.o.workDir, 'window.pcm');
    try {
      await writeFile(file, w.pcm);
      return await recognize(this.o.model, file, this.abort.signal);
    } finally {
      await rm(file, { force: true });
    }
  }

  /** Publishes the WebVTT (and wvtt) segments whose whole span is recognized, then the playlist; forgets what has expired. */
  private async publishReady(): Promise<void> {
    let changed = false;
    // A millisecond of slack: segment spans and decoded sample counts round differently.
    while (this.waiting[0] && this.waiting[0].start + this.waiting[0].duration <= this.recognizedUntil + 0.001) {
      const s = this.waiting.shift()!;
      if (!this.initPublished) {
        await this.o.publish(WVTT_INIT, wvttInit(), MP4);
        this.initPublished = true;
      }
      // The same cues twice: WebVTT for HLS, wvtt in fragmented MP4 for DASH (wvtt.ts); the MPD names the latter.
      await this.o.publish(wvttKey(s.sequence), wvttSegment(s, this.cues), MP4);
      await this.o.publish(subtitleKey(s.sequence), Buffer.from(webvttSegment(s, this.cues)), VTT);
      this.published.push(s);
      this.o.onPublished?.(s);
      const handed = this.handedAt.get(s.sequence);
      this.handedAt.delete(s.sequence);
      if (handed !== undefined) this.lastLagMs = Date.now() - handed;
      changed = true;
    }
    if (!changed) return;
    const { windowSegments, segmentSeconds, availabilityStart, retentionSeconds } = this.o;
    await this.o.publish(SUBTITLE_PLAYLIST, Buffer.from(subtitlePlaylist(this.published, windowSegments, segmentSeconds, availabilityStart)), HLS);
    const last = this.published.at(-1)!;
    const horizon = last.start + last.duration - retentionSeconds;
    let cut = 0;
    while (cut < this.published.length - windowSegments && this.published[cut]!.start + this.published[cut]!.duration < horizon) cut++;
    if (cut > 0) {
      const dropped = this.published.splice(0, cut);
      await this.o
        .remove(dropped.flatMap((s) => [subtitleKey(s.sequence), wvttKey(s.sequence)]))
        .catch((err) => this.o.log.warn({ err }, 'removing expired captions failed'));
    }
    // Published WebVTT files never change: only cues that reach the segments still to come are kept.
    const next = this.waiting[0]?.start ?? last.start + last.duration;
    this.cues = this.cues.filter((c) => c.end > next);
  }
}
