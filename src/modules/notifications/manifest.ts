import type { PlatformModule } from '../../platform/module.ts';
import { startWebhookDispatcher } from './dispatcher.ts';
import { NOTIFICATIONS_EVENT_TYPES } from './eventTypes.ts';
import { startEventRetention } from './retention.ts';
import { notificationsRoutes } from './routes.ts';

/** Webhooks: subscriptions, the event log, and delivery of the outbox's events. */
export const notificationsModule: PlatformModule = {
  name: 'notifications',
  routes: async (app, ctx) => {
    await app.register(notificationsRoutes, { db: ctx.db, webhooks: ctx.config.webhooks, metrics: ctx.metrics, eventTypes: ctx.catalogue.eventTypes });
  },
  workers: [
    { roles: ['worker'], start: startWebhookDispatcher },
    { roles: ['worker'], start: startEventRetention },
  ],
  eventTypes: NOTIFICATIONS_EVENT_TYPES,
};
