/** The live media layer: RTMP ingest, supervised ffmpeg runs, the HLS/DASH packager. Imports nothing from modules. */
export type {
  InputLoss,
  InputSlot,
  LiveInput,
  LivePipeline,
  LivePipelineEvent,
  LivePipelineOptions,
  LivePipelineStats,
  LiveRendition,
  LiveWatermark,
  RtmpIngest,
  RtmpIngestOptions,
} from './types.ts';
export { startRtmpIngest } from './ingest/ingest.ts';
export { createLivePipeline } from './pipeline.ts';
export { FORENSIC_MASTER, forensicRungOf, forensicTrack, isForensicTrack } from './forensic/forensic.ts';
export { AUDIO_TRACK } from './args.ts';
export type { RestreamDestination, RestreamDestinationOptions, RestreamEvent, RestreamSource, RestreamState, RestreamStatus } from './restream.ts';
export { createRestreamDestination } from './restream.ts';
export type { SrtRelay, SrtRelayOptions } from './ingest/srtRelay.ts';
export { startSrtRelay } from './ingest/srtRelay.ts';
export type { CaptionModel } from './captions/captionModels.ts';
export { captionModel, captioningOf, installedCaptionModels } from './captions/captionModels.ts';
export type { LiveProtection } from './protection/protect.ts';
export { dashDrmPrefix, HLS_DRM_PREFIX } from './protection/protect.ts';
