import type { Logger } from 'pino';

/**
 * The media layer's interface (LIVE.md), as the channel runner uses it. `src/media/live/index.ts` implements it; it is
 * written in parallel, so the runner is given an implementation (`LiveMedia`) rather than importing one: the live role
 * loads the real one (`loadLiveMedia`), tests may pass a stand-in. Keep in step with LIVE.md.
 */
export interface RtmpIngestOptions {
  host: string;
  port: number;
  authorize(streamKey: string, remoteAddress: string): { channelId: string } | { refused: string };
  onPublish(channelId: string): void;
  onUnpublish(channelId: string): void;
  log: Logger;
}
export interface RtmpIngest {
  readonly port: number;
  inputUrl(channelId: string): string | undefined;
  /** Bytes received from the channel's current publisher, undefined if none. */
  bytesReceived(channelId: string): number | undefined;
  kick(channelId: string): void;
  close(): Promise<void>;
}

export interface LiveRendition { name: string; width: number; height: number; videoBitrate: number; frameRate: number }
export type InputLoss = { type: 'COLOR'; color: string } | { type: 'SLATE'; imagePath: string };

export interface LivePipelineOptions {
  channelId: string;
  workDir: string;
  renditions: LiveRendition[];
  audioOnly: boolean;
  segmentSeconds: number;
  windowSegments: number;
  inputLoss: InputLoss;
  /** Published segments older than this are removed (the Recorder will need a retention window). Default 3600. */
  retentionSeconds?: number;
  publish(key: string, body: Buffer, contentType: string): Promise<void>;
  remove(keys: string[]): Promise<void>;
  log: Logger;
  onEvent(event: LivePipelineEvent): void;
}
export type LivePipelineEvent =
  | { type: 'input.connected' }
  | { type: 'input.lost' }
  | { type: 'encoder.failed'; message: string }
  | { type: 'encoder.recovered' }
  | { type: 'segment'; rendition: string; sequence: number; durationSeconds: number };
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
}
export interface LivePipeline {
  start(): Promise<void>;
  setInput(input: LiveInput | null): void;
  stats(): LivePipelineStats;
  stop(): Promise<void>;
}

export interface LiveMedia {
  startRtmpIngest(opts: RtmpIngestOptions): Promise<RtmpIngest>;
  createLivePipeline(opts: LivePipelineOptions): LivePipeline;
}

/**
 * The media layer of `src/media/live/`. Imported by a computed path while that folder is being written beside this
 * module (so that this one typechecks without it); once both are on main this becomes a plain static import.
 */
export async function loadLiveMedia(): Promise<LiveMedia> {
  const path = '../../media/live/index.ts';
  const media = (await import(/* @vite-ignore */ path)) as Partial<LiveMedia>;
  if (typeof media.startRtmpIngest !== 'function' || typeof media.createLivePipeline !== 'function') {
    throw new Error('src/media/live/index.ts does not export startRtmpIngest and createLivePipeline');
  }
  return media as LiveMedia;
}
