import { createLivePipeline, createRestreamDestination, startRtmpIngest } from '../../media/live/index.ts';

/** The media layer (`src/media/live/`) as the channel runner uses it; tests may give the runner a stand-in. */
export type {
  InputLoss,
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
} from '../../media/live/index.ts';

export interface LiveMedia {
  startRtmpIngest: typeof startRtmpIngest;
  createLivePipeline: typeof createLivePipeline;
  /** Absent in stand-ins that do not restream. */
  createRestreamDestination?: typeof createRestreamDestination;
}

export const liveMedia: LiveMedia = { startRtmpIngest, createLivePipeline, createRestreamDestination };
