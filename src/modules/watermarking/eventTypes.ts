/** The events the watermarking module records. */
export const WATERMARKING_EVENT_TYPES = [
  'watermarking.asset.created',
  'watermarking.asset.available',
  'watermarking.asset.failed',
  'watermarking.session.created',
  'watermarking.session.revoked',
  'watermarking.session.unrevoked',
  'watermarking.file.created',
  'watermarking.file.completed',
  'watermarking.detection.started',
  'watermarking.detection.completed',
  'watermarking.settings.updated',
] as const;

declare module '../../platform/events.ts' {
  interface EventTypes {
    watermarking: (typeof WATERMARKING_EVENT_TYPES)[number];
  }
}
