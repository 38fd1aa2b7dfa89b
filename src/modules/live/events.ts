/**
 * The webhook event types of live channels (every status transition, and what the owner sees of the input) and of live
 * events (created, updated, deleted, and each status the clock gives them: `live`, `finished`).
 */
export const LIVE_EVENT_TYPES = [
  'live.channel.created',
  'live.channel.updated',
  'live.channel.deleted',
  'live.channel.starting',
  'live.channel.on',
  'live.channel.stopping',
  'live.channel.off',
  'live.channel.error',
  'live.channel.input.connected',
  'live.channel.input.lost',
  'live.channel.restream.failed',
  'live.channel.restream.recovered',
  'live.event.created',
  'live.event.updated',
  'live.event.deleted',
  'live.event.live',
  'live.event.finished',
] as const;

export type LiveEventType = (typeof LIVE_EVENT_TYPES)[number];

declare module '../../platform/events.ts' {
  interface EventTypes {
    live: LiveEventType;
  }
}
