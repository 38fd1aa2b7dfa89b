/** The events the VOD module records: files, assets and their outputs. */
export const VOD_EVENT_TYPES = [
  'vod.file.created',
  'vod.file.progress',
  'vod.file.completed',
  'vod.file.failed',
  'vod.file.updated',
  'vod.file.deleted',
  'vod.asset.created',
  'vod.asset.updated',
  'vod.asset.available',
  'vod.asset.failed',
  'vod.asset.deleted',
  'vod.captions.available',
  'vod.captions.failed',
  'vod.output.created',
  'vod.output.progress',
  'vod.output.playable',
  'vod.output.available',
  'vod.output.failed',
  'vod.output.deleted',
] as const;

declare module '../../platform/events.ts' {
  interface EventTypes {
    vod: (typeof VOD_EVENT_TYPES)[number];
  }
}
