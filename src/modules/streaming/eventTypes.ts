/** The events the streaming module records: a change to what it adds to an asset (title, tags, images, chapters, settings). */
export const STREAMING_EVENT_TYPES = ['streaming.asset.updated'] as const;

declare module '../../platform/events.ts' {
  interface EventTypes {
    streaming: (typeof STREAMING_EVENT_TYPES)[number];
  }
}
