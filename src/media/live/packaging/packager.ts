import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { runDiscontinuity } from './discontinuity.ts';
import { canResume, restoredTrack, savedTrack, type PackagerSnapshot } from './snapshot.ts';
import { dashManifest, masterPlaylist, mediaPlaylist, segmentKey, type Period, type PublishedSegment, type Track } from './manifests.ts';
import { FORENSIC_MASTER, forensicMasterPlaylist } from '../forensic/forensic.ts';
import { readDecodeTime, readInit } from './mp4.ts';
import { PartCutter, type CutTrack } from './partCutter.ts';
import { parseVariant, type Entry } from './runPlaylist.ts';
import { captionHoldBack, type SubtitleTrack } from '../captions/subtitles.ts';

export type { PackagerSnapshot } from './snapshot.ts';

export interface PackagerOptions {
  tracks: Omit<Track, 'segments' | 'codec' | 'timescale'>[];
  segmentSeconds: number;
  windowSegments: number;
  retentionSeconds: number;
  /** The first sequence number of every track (a channel's earlier sessions used the ones below). */
  firstSequence?: number;
  /** Wall-clock ms of media time 0 (DASH availabilityStartTime, HLS program date-time origin). */
  availabilityStart: number;
  publish(key: string, body: Buffer, contentType: string): Promise<void>;
  remove(keys: string[]): Promise<void>;
  /** `body` and `init`: the segment's bytes and its init segment's (live captions decode the audio from them). */
  onSegment(track: string, segment: PublishedSegment, info: { key: string; timescale: number; startMs: number; body: Buffer; init: Buffer }): void;
  log: Logger;
  /**
   * Low latency (`ReducedLatency`): the run writes fragmented MP4 files (`runArgs` with `partSeconds`) and every chunk
   * is published at once as a part of this target duration (seconds); segments are the concatenation of their parts.
   */
  partSeconds?: number;
  /** What a previous pipeline of the channel published (another process's, before a takeover): continued, not restarted. */
  resume?: PackagerSnapshot;
  /** Live captions: named in the master playlist and the MPD (their own playlist and segments are the captioner's). */
  subtitles?: SubtitleTrack;
}

interface RunState {
  run: number;
  dir: string;
  offset: number;
  started?: boolean;
  /** Per entry of the run's playlists (its index): the polls that could not publish it in every track. */
  failures: Map<number, number>;
  /** Per track: how many of the run's playlist entries are published. */
  done: Map<string, number>;
  /** Low latency: the run's fragmented output, cut into parts and segments. */
  cutter?: PartCutter;
  /** Where the timeline ended when the run began; absent for the packager's first run (a start, a takeover). */
  from?: number;
  /** The discontinuity number of all its segments, in every track (`runDiscontinuity`); set when the run opens. */
  discontinuity?: number;
}

interface TrackState extends CutTrack, Track {
  /** The init bytes of the current DASH Period, to tell whether a new run's init changes it. */
  periodInit?: Buffer;
  lastRun?: number;
}

const HLS = 'application/vnd.apple.mpegurl';
/** Polls (of 100 ms) a segment listed by ffmpeg may stay unreadable before it is skipped. */
const MAX_SEGMENT_TRIES = 20;
const DASH = 'application/dash+xml';
const MEDIA = 'video/iso.segment';

/** One of a run's segments as ffmpeg listed it; throws while it cannot be read or is damaged (the next poll tries again). */
async function readSegment(state: RunState, track: Track, entry: Entry) {
  const body = await readFile(join(state.dir, track.name, entry.uri));
  return { body, segment: { duration: entry.duration, decodeTime: readDecodeTime(body) } };
}

/** Where the low-latency delta update (`_HLS_skip=YES`) of a media playlist is published. */
export const deltaPlaylistKey = (track: string) => `${track}.delta.m3u8`;

/**
 * Owns the channel's manifests. ffmpeg writes each run's CMAF segments and its own playlists into the run's
 * directory; the packager publishes finished segments under channel-global names and writes the HLS playlists and
 * the DASH manifest over all runs, so a new run (input lost, input back, a restarted encoder) never changes a URL.
 */
export class Packager {
  private readonly tracks: TrackState[];
  private readonly periods: Period[] = [];
  private run: RunState | undefined;
  private masterWritten = false;
  private written = 0;
  /** The channel stopped: the manifests are written as ended (see `end`). A resumed packager starts live again. */
  private ended = false;

  constructor(private readonly o: PackagerOptions) {
    this.tracks = o.tracks.map((t) => ({ ...t, segments: [], period: -1, discontinuities: 0, nextSequence: o.firstSequence ?? 0, partsStored: [] }));
    const r = o.resume;
    if (r) {
      this.periods.push(...r.periods);
      // Written again all the same: the channel's captions may have been turned on or off since.
      this.masterWritten = false;
      for (const t of this.tracks) {
        Object.assign(t, restoredTrack(r.tracks.find((x) => x.name === t.name)!));
      }
    }
  }

  /** Whether `snapshot` can be continued with these tracks (`canResume`). */
  static readonly canResume = canResume;

  /** The last run any track has seen (a resumed pipeline numbers its runs after it: init keys are never reused). */
  get lastRun(): number {
    return Math.max(0, ...this.tracks.map((t) => t.lastRun ?? 0));
  }

  /** The state to continue from; only the listed window of segments is kept (see docs/decisions/live.md, "Failover"). */
  snapshot(): PackagerSnapshot {
    const windows = this.tracks.map((t) => t.segments.slice(-this.o.windowSegments));
    const oldestPeriod = Math.min(...windows.flatMap((w) => w.map((s) => s.period)));
    return {
      version: 1,
      availabilityStart: this.o.availabilityStart,
      periods: this.periods.filter((p, i) => p.id >= oldestPeriod || i === this.periods.length - 1),
      masterWritten: this.masterWritten,
      tracks: this.tracks.map((t, i) => savedTrack(t, windows[i]!)),
    };
  }

  get segmentsWritten(): number {
    return this.written;
  }

  /** Where the timeline ends so far, in seconds since availabilityStart: the next run starts there or later. */
  get timelineEnd(): number {
    let end = 0;
    for (const t of this.tracks) {
      const last = t.segments.at(-1);
      if (last) end = Math.max(end, last.decodeTime / t.timescale! + last.duration);
    }
    return end;
  }

  /** Follows a new run's output directory from media time `offset` (seconds); the previous run must be drained. */
  beginRun(run: number, dir: string, offset: number): void {
    const state: RunState = { run, dir, offset, done: new Map(), failures: new Map(), from: this.run ? this.timelineEnd : undefined };
    this.run = state;
    const { partSeconds, segmentSeconds, availabilityStart, publish, remove, log } = this.o;
    if (!partSeconds) return;
    state.cutter = new PartCutter(
      {
        tracks: this.tracks,
        segmentSeconds,
        partSeconds,
        availabilityStart,
        publish,
        remove,
        log,
        openRun: (inits, at) => {
          state.offset = at;
          return this.openRun(state, inits as Map<TrackState, Buffer>);
        },
        discontinuity: () => state.discontinuity!,
        segmentClosed: (track, segment, key, body) => this.segmentClosed(track as TrackState, segment, key, body),
        writeManifests: (changed) => this.writeManifests(changed as TrackState[]),
      },
      run,
      dir,
      offset,
    );
  }

  /**
   * The run's ffmpeg has exited and its output is read (low latency): the segments it left open are complete as they
   * are, so they are closed and published, and the playlists no longer hint at a part the run will not write.
   */
  async endRun(): Promise<void> {
    await this.run?.cutter?.end();
  }

  /**
   * The channel stops: after the last run's segments are published, its playlists end (`EXT-X-ENDLIST`) and its MPD
   * turns static, so players that watch reach `ended`. The next start continues the same playlists from the checkpoint
   * (a new packager): they go on live after a discontinuity (docs/decisions/live.md, "Stop and start again").
   */
  async end(): Promise<void> {
    this.ended = true;
    await this.writeManifests(this.tracks.filter((t) => t.segments.length > 0));
  }

  /** Publishes what the current run has finished since the last call; returns how many segments that was. */
  async poll(): Promise<number> {
    const state = this.run;
    if (!state) return 0;
    if (state.cutter) return state.cutter.poll();
    const variants = new Map<string, { map?: string; entries: Entry[] }>();
    for (const track of this.tracks) {
      try {
        variants.set(track.name, parseVariant(await readFile(join(state.dir, track.name, 'index.m3u8'), 'utf8')));
      } catch {
        // ffmpeg has not written this variant's playlist yet
      }
    }
    if (!state.started) {
      // A run's init segments are compared all at once: its tracks change Period together or not at all.
      if (!this.tracks.every((t) => variants.get(t.name)?.map && variants.get(t.name)!.entries.length > 0)) return 0;
      await this.startRun(state, variants);
    }
    // A run's n-th segment is published in every track at once, so the playlists give the same number to the same
    // time: a player pairs the audio with the video by it. ffmpeg lists audio first (its encoder is ahead of the video's
    // by the video encoder's delay, more under load), and on exit flushes each track where its encoder stopped, which
    // can leave the audio one segment more (as short as one frame): that one is never published.
    const limit = Math.min(...this.tracks.map((t) => variants.get(t.name)?.entries.length ?? 0));
    let published = 0;
    const changed = new Set<TrackState>();
    for (let i = Math.min(...this.tracks.map((t) => state.done.get(t.name) ?? 0)); i < limit; i++) {
      const pending = this.tracks.filter((t) => (state.done.get(t.name) ?? 0) <= i);
      try {
        // Read in every track before any is published: a segment one track cannot read is skipped in all of them.
        const read = await Promise.all(pending.map(async (track) => ({ track, ...(await readSegment(state, track, variants.get(track.name)!.entries[i]!)) })));
        for (const r of read) {
          await this.publishSegment(r.track, state, r.segment, r.body);
          state.done.set(r.track.name, i + 1);
          changed.add(r.track);
          published += 1;
        }
      } catch (e) {
        // A segment that stays unreadable is skipped (players see a gap, not a stuck channel), in every track that has
        // not published it: skipped in one track alone, it numbered the rest of that track's run one lower than the
        // others, and hls.js pairs the audio with the video by number.
        const tries = (state.failures.get(i) ?? 0) + 1;
        state.failures.set(i, tries);
        if (tries < MAX_SEGMENT_TRIES) break;
        this.o.log.error({ err: e, tracks: pending.map((t) => t.name) }, 'skipping a live segment that cannot be read');
        for (const track of pending) state.done.set(track.name, i + 1);
      }
    }
    if (changed.size > 0) await this.writeManifests([...changed]);
    return published;
  }

  private async startRun(state: RunState, variants: Map<string, { map?: string; entries: Entry[] }>): Promise<void> {
    const inits = new Map<TrackState, Buffer>();
    for (const track of this.tracks) inits.set(track, await readFile(join(state.dir, track.name, variants.get(track.name)!.map!)));
    await this.openRun(state, inits);
  }

  /** A segment is complete and published under `key`: listed, announced, and the oldest expired. */
  private async segmentClosed(track: TrackState, segment: PublishedSegment, key: string, body: Buffer): Promise<void> {
    track.nextSequence = segment.sequence + 1;
    track.discontinuities = segment.discontinuity;
    track.segments.push(segment);
    this.written += 1;
    const startMs = Math.round(this.o.availabilityStart + (segment.decodeTime / track.timescale!) * 1000);
    this.o.onSegment(track.name, segment, { key, timescale: track.timescale!, startMs, body, init: track.periodInit! });
    await this.expire(track);
  }

  private async openRun(state: RunState, inits: Map<TrackState, Buffer>): Promise<void> {
    for (const track of this.tracks) {
      const init = inits.get(track)!;
      const info = readInit(init);
      track.codec ??= info.codec;
      track.timescale ??= info.timescale;
      if (info.timescale !== track.timescale) throw new Error(`the timescale of ${track.name} changed between runs`);
    }
    const newPeriod = this.tracks.some((t) => !t.periodInit?.equals(inits.get(t)!));
    if (newPeriod && this.periods.length > 0) {
      const changed = this.tracks
        .filter((t) => !t.periodInit!.equals(inits.get(t)!))
        .map((t) => {
          const a = t.periodInit!;
          const b = inits.get(t)!;
          let at = 0;
          while (at < Math.min(a.length, b.length) && a[at] === b[at]) at++;
          return { track: t.name, sizes: [a.length, b.length], firstDifference: at };
        });
      this.o.log.info({ run: state.run, changed }, 'init segments changed: a new DASH Period');
    }
    if (newPeriod) this.periods.push({ id: state.run, start: this.periods.length === 0 ? 0 : state.offset });
    // A millisecond of tolerance: both numbers are the same seconds, one of them read back from decode times.
    const continues = !newPeriod && state.from !== undefined && state.offset - state.from < 0.001;
    state.discontinuity = runDiscontinuity(this.tracks, continues);
    for (const track of this.tracks) {
      track.lastRun = state.run;
      if (!newPeriod) continue;
      const initKey = `${track.name}/init-${state.run}.mp4`;
      await this.o.publish(initKey, inits.get(track)!, 'video/mp4');
      track.periodInit = inits.get(track);
      track.periodInitKey = initKey;
      track.period = state.run;
    }
    state.started = true;
  }

  private async publishSegment(track: TrackState, state: RunState, read: Pick<PublishedSegment, 'duration' | 'decodeTime'>, body: Buffer): Promise<void> {
    const segment: PublishedSegment = {
      ...read,
      sequence: track.nextSequence,
      run: state.run,
      initKey: track.periodInitKey!,
      discontinuity: state.discontinuity!,
      period: track.period,
    };
    const key = segmentKey(track.name, segment.sequence);
    await this.o.publish(key, body, MEDIA);
    await this.segmentClosed(track, segment, key, body);
  }

  /** Keeps `retentionSeconds` of published segments (at least the window); removes older ones and unused inits. */
  private async expire(track: TrackState): Promise<void> {
    const ts = track.timescale!;
    const last = track.segments.at(-1)!;
    const horizon = last.decodeTime / ts + last.duration - this.o.retentionSeconds;
    let cut = 0;
    while (cut < track.segments.length - this.o.windowSegments && track.segments[cut]!.decodeTime / ts + track.segments[cut]!.duration < horizon) cut++;
    if (cut === 0) return;
    const dropped = track.segments.splice(0, cut);
    const inUse = new Set(track.segments.map((s) => s.initKey));
    const keys = dropped.map((s) => segmentKey(track.name, s.sequence));
    for (const init of new Set(dropped.map((s) => s.initKey))) if (!inUse.has(init)) keys.push(init);
    await this.o.remove(keys).catch((e) => this.o.log.warn({ err: e }, 'removing expired live segments failed'));
  }

  private async writeManifests(changed: TrackState[]): Promise<void> {
    const { segmentSeconds, windowSegments, availabilityStart, partSeconds } = this.o;
    for (const t of changed) {
      const ll = partSeconds ? { partTarget: partSeconds } : undefined;
      // The delta update first: a player blocked on the full playlist may ask for the delta as soon as it changes.
      if (ll)
        await this.o.publish(
          deltaPlaylistKey(t.name),
          Buffer.from(mediaPlaylist(t, windowSegments, segmentSeconds, availabilityStart, { ...ll, skip: true }, undefined, this.ended)),
          HLS,
        );
      const holdBack = this.o.subtitles ? captionHoldBack(segmentSeconds) : undefined;
      await this.o.publish(`${t.name}.m3u8`, Buffer.from(mediaPlaylist(t, windowSegments, segmentSeconds, availabilityStart, ll, holdBack, this.ended)), HLS);
    }
    if (!this.masterWritten && this.tracks.every((t) => t.codec)) {
      await this.o.publish('master.m3u8', Buffer.from(masterPlaylist(this.tracks, this.o.subtitles)), HLS);
      const forensic = forensicMasterPlaylist(this.tracks);
      if (forensic) await this.o.publish(FORENSIC_MASTER, Buffer.from(forensic), HLS);
      this.masterWritten = true;
    }
    if (this.tracks.every((t) => t.segments.length > 0)) {
      const mpd = dashManifest({
        tracks: this.tracks,
        periods: this.periods,
        windowSegments,
        segmentSeconds,
        availabilityStart,
        now: Date.now(),
        partSeconds,
        subtitles: this.o.subtitles,
        // dash.js plays this far behind the edge (without low latency, whose ServiceDescription it prefers), as hls.js HOLD-BACK.
        presentationDelay: this.o.subtitles ? captionHoldBack(segmentSeconds) : undefined,
        ended: this.ended,
      });
      await this.o.publish('manifest.mpd', Buffer.from(mpd), DASH);
    }
  }
}
