import { createLivePipeline, createRestreamDestination, startRtmpIngest, startSrtRelay } from '../../media/live/index.ts';

/** The media layer (`src/media/live/`) as the channel runner uses it; tests may give the runner a stand-in. */
export type {
  InputLoss,
  InputSlot,
  LiveInput,
  LivePipeline,
  LivePipelineEvent,
  LivePipelineOptions,
  LivePipelineStats,
  LiveRendition,
  RtmpIngest,
  RestreamDestination,
  RestreamDestinationOptions,
  RestreamEvent,
  RestreamSource,
  RestreamStatus,
  RtmpIngestOptions,
  SrtRelay,
} from '../../media/live/index.ts';

export interface LiveMedia {
  startRtmpIngest: typeof startRtmpIngest;
  createLivePipeline: typeof createLivePipeline;
  /** Absent in stand-ins that do not restream. */
  createRestreamDestination?: typeof createRestreamDestination;
  /** Absent in stand-ins that take no SRT. */
  startSrtRelay?: typeof startSrtRelay;
}

export const liveMedia: LiveMedia = { startRtmpIngest, createLivePipeline, createRestreamDestination, startSrtRelay };
