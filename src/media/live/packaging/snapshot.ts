/**
 * The packager's checkpoint: what it saves after every batch, and how a track is taken back from it by the next owner
 * of the channel (a takeover, a restart), so that the same playlists go on (docs/decisions/live.md, "Failover").
 */
import type { Period, PublishedSegment, Track } from './manifests.ts';

/**
 * The packager's state as the next owner of the channel needs it to continue the same playlists (sequence numbers,
 * discontinuities, DASH Periods, init segments, the listed window), written to the store after every batch.
 */
export interface PackagerSnapshot {
  version: 1;
  availabilityStart: number;
  periods: Period[];
  masterWritten: boolean;
  tracks: SavedTrack[];
}

/** A track's saved state: its shape (a saved kind is checked, not trusted: `canResume`) and where its playlists are. */
export interface SavedTrack extends Pick<Track, 'name' | 'width' | 'height' | 'frameRate' | 'bandwidth' | 'codec' | 'timescale' | 'segments'> {
  kind: string;
  /** base64 */
  periodInit?: string;
  periodInitKey?: string;
  period: number;
  lastRun?: number;
  discontinuities: number;
  nextSequence: number;
}

/** A packager track as it is saved and taken back: its saved fields, with its init segment's bytes. */
type TrackState = Omit<SavedTrack, 'periodInit'> & { periodInit?: Buffer };

/**
 * Whether `snapshot` can be continued with these tracks: the same renditions with the same shape. Another ladder
 * (the channel's qualities changed while it was off) starts its playlists anew.
 */
export function canResume(tracks: Omit<Track, 'segments' | 'codec' | 'timescale'>[], snapshot: PackagerSnapshot | undefined): snapshot is PackagerSnapshot {
  if (snapshot?.version !== 1 || snapshot.tracks.length !== tracks.length) return false;
  return tracks.every((t) => {
    const s = snapshot.tracks.find((x) => x.name === t.name);
    return !!s && s.kind === t.kind && s.width === t.width && s.height === t.height && s.frameRate === t.frameRate && s.bandwidth === t.bandwidth;
  });
}

/** A track as it is saved, with `window`, the segments its playlists list. */
export const savedTrack = (t: TrackState, window: PublishedSegment[]): SavedTrack => ({
  name: t.name,
  kind: t.kind,
  width: t.width,
  height: t.height,
  frameRate: t.frameRate,
  bandwidth: t.bandwidth,
  codec: t.codec,
  timescale: t.timescale,
  periodInit: t.periodInit?.toString('base64'),
  periodInitKey: t.periodInitKey,
  period: t.period,
  lastRun: t.lastRun,
  discontinuities: t.discontinuities,
  nextSequence: t.nextSequence,
  segments: window,
});

/** What a resumed track takes back from its saved state (its shape is the ladder's: `canResume`). */
export const restoredTrack = (saved: SavedTrack): Partial<TrackState> => ({
  codec: saved.codec,
  timescale: saved.timescale,
  periodInit: saved.periodInit ? Buffer.from(saved.periodInit, 'base64') : undefined,
  periodInitKey: saved.periodInitKey,
  period: saved.period,
  lastRun: saved.lastRun,
  discontinuities: saved.discontinuities,
  nextSequence: saved.nextSequence,
  segments: saved.segments,
});
