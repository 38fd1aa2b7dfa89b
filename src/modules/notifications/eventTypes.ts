/**
 * Every event type the platform emits: `<module>.<object>.<change>`. A module that starts emitting a new type adds it
 * here (adding types is a backward-compatible change); `recordEvent` refuses types that are not listed.
 */
export const EVENT_TYPES = [
  'webhook.test',
  'core.apikey.created',
  'core.apikey.deleted',
  'vod.file.created',
  'vod.file.completed',
  'vod.file.failed',
  'vod.file.updated',
  'vod.file.deleted',
  'vod.asset.created',
  'vod.asset.updated',
  'vod.asset.available',
  'vod.asset.failed',
  'vod.asset.deleted',
  'vod.output.created',
  'vod.output.progress',
  'vod.output.available',
  'vod.output.failed',
  'vod.output.deleted',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

/** The spec's sample names, accepted in subscriptions for the type they stand for (docs/decisions.md). */
export const EVENT_TYPE_ALIASES: Readonly<Record<string, EventType>> = {
  VodAssetCreated: 'vod.asset.created',
  VodAssetDeleted: 'vod.asset.deleted',
};

const KNOWN = new Set<string>(EVENT_TYPES);

export const isEventType = (type: string): type is EventType => KNOWN.has(type);

/** The emitted type a subscription entry stands for, or undefined when it names none. */
export function canonicalEventType(name: string): EventType | undefined {
  return isEventType(name) ? name : EVENT_TYPE_ALIASES[name];
}
