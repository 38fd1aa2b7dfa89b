/** The events the core module records. */
export const CORE_EVENT_TYPES = ['core.apikey.created', 'core.apikey.deleted'] as const;

declare module '../../platform/events.ts' {
  interface EventTypes {
    core: (typeof CORE_EVENT_TYPES)[number];
  }
}
