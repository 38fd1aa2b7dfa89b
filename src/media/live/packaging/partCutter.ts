import type { Logger } from 'pino';
import { FragmentTail } from './fragmentTail.ts';
import { fragmentFile } from '../args.ts';
import { PART_SEGMENTS, partKey, segmentKey, type PublishedSegment, type Track } from './manifests.ts';
import { readChunk, readInit, shiftDecodeTime } from './mp4.ts';

const MEDIA = 'video/iso.segment';
/** The part files of this many segments are kept (those listed in the playlists, and a margin for players still fetching them). */
const PARTS_KEPT = PART_SEGMENTS + 2;

/** A packager track as the part cutter reads and advances it. */
export interface CutTrack extends Track {
  periodInitKey?: string;
  period: number;
  discontinuities: number;
  nextSequence: number;
  /** Segments whose part files are still stored, oldest first. */
  partsStored: { sequence: number; count: number }[];
}

/** What the cutter needs of the packager that owns the tracks and the manifests. */
export interface CutterHost {
  readonly tracks: CutTrack[];
  readonly segmentSeconds: number;
  readonly partSeconds: number;
  readonly availabilityStart: number;
  publish(key: string, body: Buffer, contentType: string): Promise<void>;
  remove(keys: string[]): Promise<void>;
  log: Logger;
  /** The run's first chunks are out: its media time starts at `offset` (seconds); the init segments are compared. */
  openRun(inits: Map<CutTrack, Buffer>, offset: number): Promise<void>;
  /** The opened run's discontinuity number, the same for all its segments in every track (`runDiscontinuity`). */
  discontinuity(): number;
  /** A segment is complete and published under `key`: listed, announced, and old ones expired. */
  segmentClosed(track: CutTrack, segment: PublishedSegment, key: string, body: Buffer): Promise<void>;
  writeManifests(changed: CutTrack[]): Promise<void>;
}

/**
 * Low latency (`ReducedLatency`): one run's fragmented MP4 files cut into parts and segments. Every complete chunk is
 * published at once as a part; a segment closes at each video key frame (the GOP is one segment) and is published
 * whole, the concatenation of its parts.
 */
export class PartCutter {
  private readonly tails: Map<string, FragmentTail>;
  /** Per track: the chunks read but not yet published, the open segment's bytes, the segments closed in this run. */
  private readonly queued = new Map<string, Buffer[]>();
  private readonly bodies = new Map<string, Buffer[]>();
  private readonly closed = new Map<string, number>();
  private started = false;

  constructor(
    private readonly host: CutterHost,
    private readonly run: number,
    dir: string,
    private offset: number,
  ) {
    this.tails = new Map(host.tracks.map((t) => [t.name, new FragmentTail(fragmentFile(dir, t.name))]));
    for (const t of host.tracks) {
      this.queued.set(t.name, []);
      this.bodies.set(t.name, []);
    }
  }

  /**
   * A run's media time starts where the wall clock is when its first chunks are out (less their own length), never
   * before the timeline's end. A run starts a second or two after it is launched (and after the run it replaces ends);
   * continuing the timeline without a gap, as whole segments do, would leave it behind the wall clock by that much at
   * every switch, and low-latency DASH players, which find the live edge from the wall clock a part or two behind it,
   * would ask for segments before they exist. A short gap at a switch is what they jump instead.
   */
  private anchorToWallClock(): number {
    const firstChunk = Math.max(
      ...this.host.tracks.map((t) => readChunk(this.queued.get(t.name)![0]!).duration / readInit(this.tails.get(t.name)!.init!).timescale),
    );
    return Math.max(this.offset, (Date.now() - this.host.availabilityStart) / 1000 - firstChunk);
  }

  /** Publishes every complete chunk of the run as a part, closing a segment at each key frame; returns how many. */
  async poll(): Promise<number> {
    const { tracks } = this.host;
    for (const track of tracks) this.queued.get(track.name)!.push(...(await this.tails.get(track.name)!.read()));
    if (!this.started) {
      if (!tracks.every((t) => this.tails.get(t.name)!.init && this.queued.get(t.name)!.length > 0)) return 0;
      this.offset = this.anchorToWallClock();
      await this.host.openRun(new Map(tracks.map((t) => [t, this.tails.get(t.name)!.init!])), this.offset);
      this.started = true;
    }
    let published = 0;
    const changed: CutTrack[] = [];
    for (const track of tracks) {
      const queued = this.queued.get(track.name)!;
      if (queued.length === 0) continue;
      changed.push(track);
      for (const chunk of queued.splice(0)) {
        await this.publishChunk(track, chunk);
        published += 1;
      }
    }
    if (changed.length > 0) await this.host.writeManifests(changed);
    return published;
  }

  /**
   * The run's ffmpeg has exited and its output is read: the segments it left open are complete as they are, so they
   * are closed and published, and the playlists no longer hint at a part the run will not write.
   */
  async end(): Promise<void> {
    // As many segments in every track (Packager.poll says why): the audio, ahead of the video, may have opened one
    // more, which is dropped with its parts.
    const closed = (t: CutTrack) => this.closed.get(t.name) ?? 0;
    const changed = this.host.tracks.filter((t) => t.open && t.open.run === this.run);
    const keep = Math.min(...this.host.tracks.map((t) => closed(t) + (changed.includes(t) ? 1 : 0)));
    for (const t of changed) {
      if (closed(t) < keep) {
        await this.closeSegment(t);
        continue;
      }
      const { sequence, parts } = t.open!;
      t.open = undefined;
      this.bodies.get(t.name)!.splice(0);
      await this.host.remove(parts.map((_, i) => partKey(t.name, sequence, i))).catch((e) => this.host.log.warn({ err: e }, 'removing live parts failed'));
    }
    for (const tail of this.tails.values()) await tail.close();
    if (changed.length > 0) await this.host.writeManifests(changed);
  }

  private async publishChunk(track: CutTrack, chunk: Buffer): Promise<void> {
    const ts = track.timescale!;
    shiftDecodeTime(chunk, Math.round(this.offset * ts));
    const info = readChunk(chunk);
    if (track.open?.parts.length) {
      // Video: every key frame starts a segment (the GOP is one segment). Audio: the first chunk at the boundary.
      const boundary = track.kind === 'video' ? info.independent : this.audioBoundary(track, info.decodeTime);
      if (boundary) await this.closeSegment(track);
    }
    track.open ??= {
      sequence: track.nextSequence,
      decodeTime: info.decodeTime,
      run: this.run,
      initKey: track.periodInitKey!,
      discontinuity: this.host.discontinuity(),
      period: track.period,
      parts: [],
    };
    await this.host.publish(partKey(track.name, track.open.sequence, track.open.parts.length), chunk, MEDIA);
    this.bodies.get(track.name)!.push(chunk);
    track.open.parts.push({ duration: info.duration / ts, independent: info.independent });
    // The preload hint names the part that comes next: the next segment's first once this one has its full length.
    const length = track.open.parts.reduce((a, p) => a + p.duration, 0);
    track.open.complete =
      track.kind === 'video' ? length >= this.host.segmentSeconds - 0.5 / (track.frameRate ?? 25) : this.audioBoundary(track, info.decodeTime + info.duration);
  }

  /**
   * Audio chunks do not fall on the video's segment boundaries: an audio segment ends at the chunk nearest to the
   * boundary (within half a part), so that audio and video segments cover about the same time.
   */
  private audioBoundary(track: CutTrack, decodeTime: number): boolean {
    const closed = this.closed.get(track.name) ?? 0;
    return decodeTime / track.timescale! - this.offset >= (closed + 1) * this.host.segmentSeconds - this.host.partSeconds / 2;
  }

  /** The open segment is complete: published whole (after its parts, so a segment that exists has all its parts). */
  private async closeSegment(track: CutTrack): Promise<void> {
    const { complete, ...open } = track.open!;
    void complete;
    const body = Buffer.concat(this.bodies.get(track.name)!.splice(0));
    const segment: PublishedSegment = { ...open, duration: open.parts.reduce((a, p) => a + p.duration, 0) };
    const key = segmentKey(track.name, segment.sequence);
    await this.host.publish(key, body, MEDIA);
    track.open = undefined;
    this.closed.set(track.name, (this.closed.get(track.name) ?? 0) + 1);
    track.partsStored.push({ sequence: segment.sequence, count: open.parts.length });
    if (track.partsStored.length > PARTS_KEPT) {
      const old = track.partsStored.shift()!;
      const keys = Array.from({ length: old.count }, (_, i) => partKey(track.name, old.sequence, i));
      await this.host.remove(keys).catch((e) => this.host.log.warn({ err: e }, 'removing old live parts failed'));
    }
    await this.host.segmentClosed(track, segment, key, body);
  }
}
