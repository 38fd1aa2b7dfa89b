import type { Logger } from 'pino';
import type { CaptionModel } from './captions/captionModels.ts';
import type { LiveProtection } from './protection/protect.ts';

/** Which of a channel's inputs a publisher feeds: `secondary` exists for `redundancy: DoubleInput`. */
export type InputSlot = 'primary' | 'secondary';

/** Whose stream a publish is, or why it is refused. */
export type IngestVerdict = { channelId: string; slot?: InputSlot } | { refused: string };

/** One shared RTMP listener per live process (node-media-server 4's protocol code over our own listener). */
export interface RtmpIngestOptions {
  host: string; // MEDIAPLANE_RTMP_HOST, default 0.0.0.0
  port: number; // MEDIAPLANE_RTMP_PORT, default 1935 (0 = any free port, for tests)
  /**
   * The check at `publish`, before the publish is acknowledged and before any media is accepted: the channel (and which
   * of its inputs) that owns this stream name, or why not (said to the encoder in the protocol's refusal). It may take
   * a moment (a channel started a moment ago is not run here yet); the encoder waits for the answer.
   * `relayed`: the publisher is this process's own relay (an SRT listener, `relayUrl`).
   */
  authorize(streamName: string, remoteAddress: string, how: { relayed: boolean }): IngestVerdict | Promise<IngestVerdict>;
  onPublish(channelId: string, slot: InputSlot): void; // the encoder is connected and sending
  onUnpublish(channelId: string, slot: InputSlot): void; // it disconnected (or stalled past a timeout)
  log: Logger;
}
export interface RtmpIngest {
  readonly port: number;
  /** Where a local ffmpeg reads the channel's published stream (loopback; nobody else may play it). */
  inputUrl(channelId: string, slot?: InputSlot): string | undefined;
  /**
   * Where the channel's encode reads its programme: the selected input (`select`), continuous across switches between
   * inputs (the same stream plays on, no new connection). Loopback, with the play token.
   */
  programmeUrl(channelId: string): string;
  /** The input the programme plays: a switch waits for the new input's next key frame; null ends the programme. */
  select(channelId: string, slot: InputSlot | null): void;
  /** Bytes and video frames the programme has sent (for `LiveInput.bytesReceived`, `framesReceived`). */
  programmeBytes(channelId: string): number;
  programmeFrames(channelId: string): number;
  /** The channel no longer runs here: its programme goes. */
  forget(channelId: string): void;
  /** Bytes received from the channel's current publisher (for `LiveInput.bytesReceived`), undefined if none. */
  bytesReceived(channelId: string, slot?: InputSlot): number | undefined;
  /** Video frames received from the channel's current publisher (for `LiveInput.framesReceived`), undefined if none. */
  framesReceived(channelId: string, slot?: InputSlot): number | undefined;
  /** Where this process's own relay (an SRT listener) publishes `streamName`: loopback, with a per-process token. */
  relayUrl(streamName: string): string;
  /** Disconnects a channel's publishers, every input (key rotated, channel stopped). */
  kick(channelId: string): void;
  close(): Promise<void>;
}

export interface LiveRendition {
  name: string;
  width: number;
  height: number;
  videoBitrate: number;
  /** Frames per second; with `followsSource`, the most: the input's own rate up to this one (25 stays 25, 60 gives 30). */
  frameRate: number;
  followsSource?: boolean;
}
export type InputLoss = { type: 'COLOR'; color: string } | { type: 'SLATE'; imagePath: string };

export interface LivePipelineOptions {
  channelId: string;
  workDir: string; // local scratch directory for ffmpeg's output; the pipeline owns it
  renditions: LiveRendition[]; // the video ladder (empty when audioOnly)
  audioOnly: boolean; // transmissionType Audio
  segmentSeconds: number; // 2 by default
  windowSegments: number; // segments listed in the live playlists (the seek-back window)
  inputLoss: InputLoss;
  /** Published segments older than this are removed (the Recorder reads this window). Default 3600. */
  retentionSeconds?: number;
  /**
   * Low latency (`ReducedLatency`): parts of about this many seconds (LL-HLS `EXT-X-PART`, LL-DASH chunks) published as
   * soon as the encoder writes them, besides the whole segments. Unset: whole segments only.
   */
  partSeconds?: number;
  /**
   * The first segment sequence number and run id of this pipeline (default 0 and 1). A channel that starts again
   * continues after its previous session's numbers, so that its published keys never overwrite retained ones.
   */
  firstSequence?: number;
  firstRun?: number;
  /** Writes a file of the channel's output: `key` is relative to the channel's output prefix (e.g. `720p/12.m4s`). */
  publish(key: string, body: Buffer, contentType: string): Promise<void>;
  remove(keys: string[]): Promise<void>;
  log: Logger;
  onEvent(event: LivePipelineEvent): void;
  /**
   * Where the packager's state is kept between pipelines of the channel (another process after a takeover, or a
   * restart): with it a new pipeline continues the same playlists (sequence numbers, timeline, Periods) instead of
   * starting them anew. Saved after every published batch.
   */
  checkpoint?: { load(): Promise<Buffer | undefined>; save(body: Buffer): Promise<void> };
  /**
   * Live captions in this language's model: WebVTT from the channel's audio, as a subtitle rendition of the HLS output
   * and a text AdaptationSet of the DASH output. A recognizer that fails costs captions, never video.
   */
  captions?: CaptionModel;
  /** DRM endpoints: each segment is also published encrypted under their prefixes (`protect.ts`). Not with `partSeconds`. */
  protection?: LiveProtection;
  /**
   * A/B forensic watermarking (`isWatermarkProtected`): every run also encodes two marked variants of each marked
   * rung (tracks `wmA-<rung>` and `wmB-<rung>`, same segments, same sequence numbers), published with their own media
   * playlists and listed in `forensic.m3u8` only, never in the channel's master playlist or MPD; the watermarking
   * redirector hands each viewer A or B per segment.
   */
  watermark?: LiveWatermark;
}
export interface LiveWatermark {
  /** Chooses the pattern (the watermarking asset's id: detection rebuilds the same pattern from it). */
  seed: string;
  strength: number;
  /** The rungs marked (each at its exact, even size: the pattern frame is blended at that size). */
  rungs: LiveRendition[];
}
export type LivePipelineEvent =
  | { type: 'input.connected' }
  | { type: 'input.lost' }
  | { type: 'encoder.failed'; message: string }
  | { type: 'encoder.recovered' }
  | {
      type: 'segment';
      rendition: string;
      sequence: number;
      durationSeconds: number;
      /** The published keys of the segment and of its init segment, relative to the channel's output prefix. */
      key: string;
      initKey: string;
      /** Wall-clock time of its first frame on the channel's timeline (EXT-X-PROGRAM-DATE-TIME), in ms. */
      startMs: number;
      /** Its decode time in the track's timescale (DASH SegmentTimeline). */
      decodeTime: number;
      timescale: number;
      /** The run that encoded it: a change of run is a discontinuity. */
      run: number;
      /** Encoded from the channel's input (not the input-loss picture): an on-air session's segment. */
      live?: boolean;
    };
export interface LivePipelineStats {
  inputConnected: boolean;
  inputBitrateKbps: number;
  inputFrameRate: number;
  droppedFrames: number;
  segmentsWritten: number;
  inputConnectedSeconds: number;
}
export interface LiveInput {
  url: string;
  loop?: boolean;
  /** Bytes received from the input so far (the ingest counts them); gives `inputBitrateKbps`. */
  bytesReceived?: () => number;
  /**
   * Video frames received from the input so far (the ingest counts them); gives `inputFrameRate`. Without it the rate
   * is ffmpeg's, which counts the frames it outputs: a 15 fps input into a 25 fps rung would read as 25.
   */
  framesReceived?: () => number;
}
export interface LivePipeline {
  /**
   * Starts producing output at once: the input-loss slate/colour until an input is set. Resolves at the first
   * published segment; rejects (and stops) if the first run fails before any, as when ffmpeg cannot run at all.
   */
  start(): Promise<void>;
  /** The live input (an RTMP URL from the ingest, or a file/URL looped for input.mp4Sources), or null: input lost. */
  setInput(input: LiveInput | null): void;
  stats(): LivePipelineStats;
  /**
   * Stops every run. `end`: the channel stops (not handed to another process): once the last segments are out, the
   * playlists end and the MPD turns static, so the players that watch reach the end.
   */
  stop(opts?: { end?: boolean }): Promise<void>;
}
