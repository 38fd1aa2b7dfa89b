import type { PlatformContext } from '../context.ts';

/**
 * The marks of a watermark-protected live channel: the live module runs the channel, the module that owns forensic
 * watermarking (its manifest's `channelMarks`) chooses which rungs carry the A/B marks and with which pattern. Live
 * asks through the platform, the way media delivery asks the `playbackGuards`, so neither module imports the other.
 */

/** One rung of a channel's video ladder (the same fields as the live pipeline's `LiveRendition`). */
export interface MarkRung {
  name: string;
  width: number;
  height: number;
  videoBitrate: number;
  frameRate: number;
}

/** A channel about to start with `isWatermarkProtected`. */
export interface MarkedChannel {
  tenantId: string;
  channelId: string;
  title: string;
  ladder: MarkRung[];
  segmentSeconds: number;
  /** The most rungs to mark (`MEDIAPLANE_LIVE_WATERMARK_RUNGS`). */
  rungCount: number;
}

/** What the live pipeline marks: the pattern's seed and strength, and the rungs marked (each at its exact size). */
export interface ChannelMarks {
  seed: string;
  strength: number;
  rungs: MarkRung[];
}

/** Answers undefined for a channel with nothing to mark (no video). */
export type ChannelMarkPlanner = (ctx: PlatformContext, channel: MarkedChannel) => Promise<ChannelMarks | undefined>;
