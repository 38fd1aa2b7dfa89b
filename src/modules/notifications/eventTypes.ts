import type { EventType } from '../../platform/events.ts';

/** What the notifications module records itself: the test event sent from a webhook's "test" operation. */
export const NOTIFICATIONS_EVENT_TYPES = ['webhook.test'] as const;

declare module '../../platform/events.ts' {
  interface EventTypes {
    notifications: (typeof NOTIFICATIONS_EVENT_TYPES)[number];
  }
}

/** The spec's sample names, accepted in subscriptions for the type they stand for (docs/decisions/notifications.md). */
const EVENT_TYPE_ALIASES: Readonly<Record<string, EventType>> = {
  VodAssetCreated: 'vod.asset.created',
  VodAssetDeleted: 'vod.asset.deleted',
};

/** The emitted type a subscription entry stands for among the platform's types (`ctx.catalogue.eventTypes`), or undefined. */
export function canonicalEventType(name: string, known: readonly EventType[]): EventType | undefined {
  return (known as readonly string[]).includes(name) ? (name as EventType) : EVENT_TYPE_ALIASES[name];
}
