/** The live module's front door: what other modules may use of it (docs/architecture.md, "Front doors"). */
export { liveModule } from './manifest.ts';
/** A channel's timeline as ranges: what the Recorder copies and plays, and its endpoints. */
export {
  channelEndpoints,
  channelMaster,
  channelRunning,
  channelsWithDash,
  masterTracks,
  RANGE_SETTLE_MS,
  rangeCaptionPlaylist,
  rangeDashTracks,
  rangeEnded,
  rangeMasterOf,
  rangeSegments,
  retainedSince,
  type TimelineSegment,
} from './timeline.ts';
/** Where a channel's segments and its runner's checkpoint are stored (watermarking's live reference and redirector). */
export { channelPrefix, checkpointKey } from './urls.ts';
/** A channel's on-air sessions with `autoRecord` on: what the Recorder records of them (docs/decisions/recorder.md). */
export { autoRecordedSessions, type AutoRecordedSession } from './sessions.ts';
export type { AutoRecordRow } from './tables.ts';
