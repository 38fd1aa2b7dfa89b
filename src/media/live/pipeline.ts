import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { MediaError, runFfmpeg } from '../ffmpeg.ts';
import { AUDIO_TRACK, audioBandwidth, runArgs, type RunSource } from './args.ts';
import { forensicArgs, forensicVariants, isForensicTrack, type ForensicArgs } from './forensic/forensic.ts';
import { channelCaptioner } from './channelCaptioner.ts';
import type { LiveCaptioner } from './captions/captions.ts';
import { Packager, type PackagerSnapshot } from './packaging/packager.ts';
import { protectedPublisher } from './protection/protect.ts';
import { RunProgress } from './runProgress.ts';
import type { LiveInput, LivePipeline, LivePipelineEvent, LivePipelineOptions, LivePipelineStats, LiveRendition } from './types.ts';

const POLL_MS = 100;
/** Low latency: a part waits at most this long on disk before it is published. */
const LL_POLL_MS = 40;
/** A crashed run is restarted after this, doubling up to RESTART_MAX_MS while it keeps crashing. */
const RESTART_MIN_MS = 500;
const RESTART_MAX_MS = 8000;
/** Media time is anchored this far before start() so the first run's audio priming never goes below zero. */
const ORIGIN_LEAD_S = 1;
/** A live run without a new frame for this many segments (and at least STALL_MIN_S) counts as input loss. */
const STALL_SEGMENTS = 3;
const STALL_MIN_S = 5;
/** How far (in segments) the timeline may fall behind the wall clock before a run re-anchors it. */
const MAX_LAG_SEGMENTS = 3;
/** …and never less than this many seconds (short test segments would re-anchor at every switch). */
const MAX_LAG_MIN_S = 6;

interface Run {
  id: number;
  source: RunSource;
  abort: AbortController;
  done: Promise<void>;
  /** Set when the supervisor itself ended the run (a switch or stop), so its exit is no failure. */
  ended: boolean;
  /** Its ffmpeg process has exited. */
  exited: boolean;
  progress: RunProgress;
  firstSegment: boolean;
}

/**
 * One channel's output: one ffmpeg run at a time (the live input, or the input-loss slate when there is none),
 * supervised and restarted on failure, all runs packaged onto one continuous timeline by the Packager.
 */
export function createLivePipeline(o: LivePipelineOptions): LivePipeline {
  const log = o.log.child({ channelId: o.channelId });
  let availabilityStart = 0;
  let packager: Packager | undefined;
  let captioner: LiveCaptioner | undefined;
  let input: LiveInput | null = null;
  let current: Run | undefined;
  let runs = (o.firstRun ?? 1) - 1;
  let stopped = false;
  let started = false;
  let switching: Promise<void> = Promise.resolve();
  let pollTimer: NodeJS.Timeout | undefined;
  let polling: Promise<unknown> = Promise.resolve();
  let failing = false;
  let restartDelay = RESTART_MIN_MS;
  let restartTimer: NodeJS.Timeout | undefined;
  let connectedSince: number | undefined;
  let connectedSeconds = 0;
  let droppedBefore = 0;
  let inputConnected = false;
  /** How the first run turned out: its first segment, or a failure before any (start() rejects with it). */
  let firstOutcome: { resolve(): void; reject(e: unknown): void } | undefined;
  const first = new Promise<void>((resolve, reject) => (firstOutcome = { resolve, reject }));
  first.catch(() => {});
  const settleFirst = (error?: unknown) => {
    const o = firstOutcome;
    firstOutcome = undefined;
    if (o && error !== undefined) o.reject(error);
    else o?.resolve();
  };

  const videoTrack = (r: LiveRendition) => ({
    name: r.name,
    kind: 'video' as const,
    width: r.width,
    height: r.height,
    frameRate: r.frameRate,
    bandwidth: r.videoBitrate,
  });
  const tracks = [
    ...(o.audioOnly ? [] : o.renditions.map(videoTrack)),
    // The marked variants: published with their own playlists, in no channel master or MPD.
    ...(o.watermark && !o.audioOnly ? forensicVariants(o.watermark.rungs).map((r) => ({ ...videoTrack(r), forensic: true })) : []),
    { name: AUDIO_TRACK, kind: 'audio' as const, bandwidth: audioBandwidth },
  ];
  let forensic: ForensicArgs | undefined;

  /** The current input turned out to have no audio track (an encoder that sends video only). */
  let inputSilent = false;
  const desired = (): RunSource =>
    input ? { kind: 'live', url: input.url, loop: input.loop ?? false, silent: inputSilent } : { kind: 'slate', loss: o.inputLoss };

  /** Segment events of the batch being published, sent when the batch (its playlists included) is out. */
  const published: LivePipelineEvent[] = [];
  /** The runs that read the input (not the slate): their segments are on air. */
  const liveRuns = new Set<number>();
  const poll = () => {
    polling = polling.then(async () => {
      if (!packager) return;
      try {
        const count = await packager.poll();
        const segments = published.splice(0);
        for (const e of segments) o.onEvent(e);
        // Saved when a segment is complete (a low-latency poll that published parts only changes nothing a takeover needs).
        if (segments.length > 0 && o.checkpoint) {
          await o.checkpoint.save(Buffer.from(JSON.stringify(packager.snapshot()))).catch((e) => log.warn({ err: e }, 'live checkpoint not saved'));
        }
        const run = current;
        if (count > 0 && run && !run.firstSegment) {
          run.firstSegment = true;
          settleFirst();
          restartDelay = RESTART_MIN_MS;
          if (failing) {
            failing = false;
            o.onEvent({ type: 'encoder.recovered' });
          }
        }
      } catch (e) {
        log.error({ err: e }, 'live packager failed to publish');
      }
    });
  };

  function launch(source: RunSource): void {
    const id = ++runs;
    const dir = join(o.workDir, `run-${id}`);
    // Runs continue the timeline without a gap, so players buffer through a switch. Each switch leaves the timeline
    // behind the wall clock by the new run's start-up time; once that exceeds MAX_LAG segments, the next run starts at
    // the wall clock instead (one gap), so DASH players, which find the live edge from the wall clock, stay close.
    const end = packager!.timelineEnd;
    const wall = (Date.now() - availabilityStart) / 1000;
    const offset = end === 0 || wall - end > Math.max(MAX_LAG_SEGMENTS * o.segmentSeconds, MAX_LAG_MIN_S) ? Math.max(end, wall) : end;
    const abort = new AbortController();
    const progress = new RunProgress(source.kind === 'live' ? input?.bytesReceived : undefined, source.kind === 'live' ? input?.framesReceived : undefined);
    const run: Run = { id, source, abort, ended: false, exited: false, progress, firstSegment: false, done: Promise.resolve() };
    if (source.kind === 'live') liveRuns.add(id);
    current = run;
    log.info({ run: id, kind: source.kind, offset }, 'live run starting');
    run.done = (async () => {
      await mkdir(dir, { recursive: true });
      packager!.beginRun(id, dir, offset);
      const args = runArgs({
        source,
        renditions: o.renditions,
        audioOnly: o.audioOnly,
        segmentSeconds: o.segmentSeconds,
        offset,
        dir,
        partSeconds: o.partSeconds,
        forensic,
      });
      const redact: Record<string, string> = { [o.workDir]: '<output>' };
      if (source.kind === 'live') redact[source.url] = '<input>';
      try {
        await runFfmpeg(args, { signal: abort.signal, onStdout: (c) => progress.push(c), redact });
        run.exited = true;
        if (!run.ended) onRunExit(run, undefined);
      } catch (e) {
        run.exited = true;
        if (!run.ended) onRunExit(run, e);
      }
      // Publish what the run finished before it exited (ffmpeg flushes its last, shorter segment on SIGTERM).
      poll();
      await polling;
      // Low latency: the segments the run left open are complete as they are.
      polling = polling.then(() => packager!.endRun().catch((e) => log.error({ err: e }, 'live packager failed to close a run')));
      await polling;
      droppedBefore += progress.dropped;
      await rm(dir, { recursive: true, force: true });
    })();
  }

  /** A run ended on its own: a crash (restart it, report it) or the end of a non-looping input (back to the slate). */
  function onRunExit(run: Run, error: unknown): void {
    if (stopped || current !== run) return;
    // An input without audio (the stream map finds no audio track): run it again with a silent track, at once.
    if (
      error !== undefined &&
      run.source.kind === 'live' &&
      !run.source.silent &&
      !o.audioOnly &&
      /\ba:0\b[^;]*matches no streams/.test(String((error as Error)?.message))
    ) {
      log.info({ run: run.id }, 'the live input has no audio; adding a silent track');
      inputSilent = true;
      void switchTo(desired());
      return;
    }
    // The channel's very first run failed before any output: the encoder cannot run at all (ffmpeg missing, a slate
    // it cannot decode). start() fails with the reason instead of retrying for ever behind a status of Starting.
    if (firstOutcome && error !== undefined && !run.firstSegment) return settleFirst(error);
    if (error !== undefined) {
      const message = error instanceof MediaError ? error.message : error instanceof Error ? error.message : 'ffmpeg exited';
      log.warn({ run: run.id, err: message }, 'live encoder run failed; restarting it');
      failing = true;
      o.onEvent({ type: 'encoder.failed', message });
    } else if (run.source.kind === 'live') {
      log.info({ run: run.id }, 'live input ended');
    }
    if (run.source.kind === 'live') fallBackToSlate();
    else {
      scheduleRestart(restartDelay);
      restartDelay = Math.min(restartDelay * 2, RESTART_MAX_MS);
    }
  }

  /** The live run is gone or stuck: viewers get the slate at once, and the input is tried again a little later. */
  function fallBackToSlate(): void {
    markConnected(false);
    void switchTo({ kind: 'slate', loss: o.inputLoss });
    scheduleRestart(Math.max(restartDelay, stallMs()));
    restartDelay = Math.min(restartDelay * 2, RESTART_MAX_MS);
  }

  /** A live run whose frame count has not moved for this long has lost its input (or hangs). */
  const stallMs = () => Math.max(STALL_SEGMENTS * o.segmentSeconds, STALL_MIN_S) * 1000;

  function watchStall(): void {
    const run = current;
    if (stopped || !run || run.ended || run.source.kind !== 'live') return;
    if (Date.now() - run.progress.lastAdvanceAt < stallMs()) return;
    log.warn({ run: run.id }, 'live input stalled; showing the input-loss slate');
    run.ended = true;
    fallBackToSlate();
  }

  function scheduleRestart(delay: number): void {
    clearTimeout(restartTimer);
    restartTimer = setTimeout(() => {
      const want = desired();
      // Nothing to do if what is wanted is already running (the input went away while the retry waited).
      if (current && !current.exited && !current.ended && current.source.kind === want.kind) return;
      void switchTo(want);
    }, delay);
  }

  /** Ends the current run (its last segment is still published), then starts `source`: one run at a time. */
  function switchTo(source: RunSource): Promise<void> {
    switching = switching.then(async () => {
      if (stopped) return;
      const old = current;
      if (old) {
        settleFirst();
        old.ended = true;
        old.abort.abort();
        await old.done;
      }
      if (!stopped) launch(source);
    });
    return switching;
  }

  function markConnected(connected: boolean): void {
    if (connected === inputConnected) return;
    inputConnected = connected;
    if (connected) {
      connectedSince = Date.now();
      o.onEvent({ type: 'input.connected' });
    } else {
      connectedSeconds += (Date.now() - (connectedSince ?? Date.now())) / 1000;
      connectedSince = undefined;
      o.onEvent({ type: 'input.lost' });
    }
  }

  /** The previous pipeline's state, if the store has one that fits this ladder. */
  async function loadCheckpoint(): Promise<PackagerSnapshot | undefined> {
    try {
      const body = await o.checkpoint?.load();
      const snapshot = body ? (JSON.parse(body.toString('utf8')) as PackagerSnapshot) : undefined;
      if (Packager.canResume(tracks, snapshot)) return snapshot;
      if (snapshot) log.info('the saved live state is of another ladder; the playlists start anew');
    } catch (e) {
      log.warn({ err: e }, 'the saved live state cannot be read; the playlists start anew');
    }
    return undefined;
  }

  const pipeline: LivePipeline = {
    async start() {
      if (started) return;
      started = true;
      await rm(o.workDir, { recursive: true, force: true });
      await mkdir(o.workDir, { recursive: true });
      if (o.watermark && !o.audioOnly) forensic = await forensicArgs(o.watermark, o.workDir);
      const resume = await loadCheckpoint();
      availabilityStart = resume?.availabilityStart ?? Date.now() - ORIGIN_LEAD_S * 1000;
      const output = o.protection ? protectedPublisher(o.protection, o.publish, o.remove, log) : undefined;
      if (output && resume) {
        const inits = resume.tracks.filter((t) => t.periodInit && t.periodInitKey);
        await output.resume(inits.map((t) => ({ key: t.periodInitKey!, track: t.name, body: Buffer.from(t.periodInit!, 'base64') })));
      }
      captioner = o.captions ? channelCaptioner(o, o.captions, availabilityStart, log) : undefined;
      packager = new Packager({
        resume,
        tracks,
        segmentSeconds: o.segmentSeconds,
        windowSegments: o.windowSegments,
        retentionSeconds: o.retentionSeconds ?? 3600,
        firstSequence: o.firstSequence,
        availabilityStart,
        publish: output?.publish ?? o.publish,
        remove: output?.remove ?? o.remove,
        log,
        partSeconds: o.partSeconds,
        subtitles: captioner,
        onSegment: (rendition, s, info) => {
          if (rendition === AUDIO_TRACK) captioner?.addAudio({ ...s, timescale: info.timescale, init: info.init, body: info.body });
          // The forensic variants are the redirector's: the channel's events, timeline and recordings know the ladder only.
          if (isForensicTrack(rendition)) return;
          // The last segments of a live run ended by an input loss are no reconnect.
          if (input && current?.source.kind === 'live' && !current.ended) markConnected(true);
          // Told once the batch's playlists are written too: whoever hears "segment" (the channel turns On) finds them.
          published.push({
            type: 'segment',
            rendition,
            sequence: s.sequence,
            durationSeconds: s.duration,
            key: info.key,
            initKey: s.initKey,
            startMs: info.startMs,
            decodeTime: s.decodeTime,
            timescale: info.timescale,
            run: s.run,
            ...(liveRuns.has(s.run) ? { live: true } : {}),
          });
        },
      });
      // Run ids name init segments (`init-<run>.mp4`, immutable): a continued channel numbers its runs after the last.
      runs = Math.max(packager.lastRun, (o.firstRun ?? 1) - 1);
      if (resume) log.info({ runs, availabilityStart }, 'live pipeline continues the published playlists');
      pollTimer = setInterval(
        () => {
          poll();
          watchStall();
        },
        o.partSeconds ? LL_POLL_MS : POLL_MS,
      );
      await switchTo(desired());
      try {
        await first;
      } catch (e) {
        await pipeline.stop();
        throw e;
      }
    },

    setInput(next) {
      const was = input;
      input = next;
      if (next?.url !== was?.url) inputSilent = false;
      if (!next && was) markConnected(false);
      if (!started || stopped) return;
      if (!next && !was) return;
      if (next && was && next.url === was.url && current?.source.kind === 'live') return;
      clearTimeout(restartTimer);
      void switchTo(desired());
    },

    stats(): LivePipelineStats {
      const run = current;
      const live = run?.source.kind === 'live' && inputConnected;
      return {
        inputConnected,
        inputBitrateKbps: live ? run.progress.inputBitrateKbps() : 0,
        inputFrameRate: live ? run.progress.inputFrameRate : 0,
        droppedFrames: droppedBefore + (run?.progress.dropped ?? 0),
        segmentsWritten: packager?.segmentsWritten ?? 0,
        inputConnectedSeconds: connectedSeconds + (connectedSince ? (Date.now() - connectedSince) / 1000 : 0),
      };
    },

    async stop(opts = {}) {
      if (stopped) return;
      stopped = true;
      settleFirst();
      clearTimeout(restartTimer);
      clearInterval(pollTimer);
      await switching;
      if (current) {
        current.ended = true;
        current.abort.abort();
        await current.done;
      }
      await polling;
      if (opts.end && packager) {
        await packager.end().catch((e) => log.error({ err: e }, 'the ended live playlists were not written'));
      }
      await captioner?.stop();
      if (inputConnected) markConnected(false);
      await rm(o.workDir, { recursive: true, force: true });
    },
  };
  return pipeline;
}
