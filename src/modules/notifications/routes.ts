import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { WebhookConfig } from '../../config.ts';
import type { Db } from '../../db/client.ts';
import type { EventType } from '../../platform/events.ts';
import type { Metrics } from '../../platform/metrics.ts';
import { withErrors } from '../../platform/schemas.ts';
import { listWebhookEvents } from './eventLog.ts';
import * as s from './schemas.ts';
import { DEFAULT_OVERLAP_SECONDS } from './secrets.ts';
import * as notifications from './service.ts';
import { absentBodyAsEmpty, OPTIONAL_BODY } from '../../platform/parsing.ts';

export const notificationsRoutes: FastifyPluginAsyncTypebox<{ db: Db; webhooks: WebhookConfig; metrics?: Metrics; eventTypes: readonly EventType[] }> = async (
  app,
  { db, webhooks: cfg, metrics, eventTypes },
) => {
  const tags = ['Notifications'];

  app.get(
    '/notifications/v1/webhook',
    {
      config: { access: 'manage' },
      schema: {
        tags,
        summary: 'List webhooks',
        description: "Lists the tenant's webhooks with their health and subscribed event types.",
        querystring: s.WebhookListQuery,
        response: withErrors({ 200: s.WebhookList }),
      },
    },
    (req) => notifications.listWebhooks(db, req.principal.tenantId, req.query),
  );

  app.post(
    '/notifications/v1/webhook',
    {
      config: { access: 'manage' },
      schema: {
        tags,
        summary: 'Create webhook',
        description: "Subscribes a URL to event types; deliveries are signed with the tenant's signing secret.",
        body: s.WebhookCreate,
        response: withErrors({ 200: s.Webhook, 409: { $ref: 'Error' } }),
      },
    },
    (req) => notifications.createWebhook(db, cfg, req.principal.tenantId, req.body, eventTypes),
  );

  app.get(
    '/notifications/v1/webhook/signature-secret',
    {
      config: { access: 'manage' },
      schema: {
        tags,
        summary: 'Get webhook signature secret',
        description: 'Reads the secret that signs every webhook delivery of the tenant (created on first use).',
        response: withErrors({ 200: s.SignatureSecret }),
      },
    },
    (req) => notifications.getSignatureSecret(db, req.principal.tenantId),
  );

  app.post(
    '/notifications/v1/webhook/signature-secret/rotate',
    {
      config: { access: 'manage' },
      // The body is optional: without one (or with an empty one), the default overlap applies; `null` is a 400.
      preValidation: absentBodyAsEmpty,
      schema: {
        ...OPTIONAL_BODY,
        tags,
        summary: 'Rotate webhook signature secret',
        description:
          'Replaces the signing secret and answers the new one; during the overlap, deliveries are signed with both. The body is optional: without one, the default overlap applies.',
        body: s.SignatureSecretRotate,
        response: withErrors({ 200: s.SignatureSecretRotated }),
      },
    },
    (req) => notifications.rotateSignatureSecret(db, req.principal.tenantId, req.body.overlapSeconds ?? DEFAULT_OVERLAP_SECONDS),
  );

  app.get(
    '/notifications/v1/webhook/:id',
    {
      config: { access: 'manage' },
      schema: { tags, summary: 'Get webhook', description: 'Reads one webhook.', params: s.WebhookParams, response: withErrors({ 200: s.Webhook }) },
    },
    (req) => notifications.getWebhook(db, req.principal.tenantId, req.params.id),
  );

  app.patch(
    '/notifications/v1/webhook/:id',
    {
      config: { access: 'manage' },
      schema: {
        tags,
        summary: 'Update webhook',
        description: "Changes a webhook's name, URL, event types or enabled state; enabling resumes an Unhealthy webhook.",
        params: s.WebhookParams,
        body: s.WebhookUpdate,
        response: withErrors({ 200: s.Webhook }),
      },
    },
    (req) => notifications.updateWebhook(db, cfg, req.principal.tenantId, req.params.id, req.body, eventTypes),
  );

  app.delete(
    '/notifications/v1/webhook/:id',
    {
      config: { access: 'manage' },
      schema: {
        tags,
        summary: 'Delete webhook',
        description: 'Deletes a webhook; its pending deliveries are dropped.',
        params: s.WebhookParams,
        response: withErrors({ 204: { type: 'null' } }),
      },
    },
    async (req, reply) => {
      await notifications.deleteWebhook(db, req.principal.tenantId, req.params.id);
      return reply.status(204).send();
    },
  );

  app.post(
    '/notifications/v1/webhook/:id/test',
    {
      config: { access: 'manage' },
      schema: {
        tags,
        summary: 'Test webhook',
        description: "Sends a webhook.test event to the webhook now and answers the receiver's response code and content.",
        params: s.WebhookParams,
        response: withErrors({ 200: s.WebhookTestResult }),
      },
    },
    (req) => notifications.testWebhook(db, cfg, req.principal.tenantId, req.params.id, { log: req.log, metrics }),
  );

  app.get(
    '/notifications/v1/webhook-events/types',
    {
      config: { access: 'read' },
      schema: {
        tags,
        summary: 'List webhook event types',
        description: 'Lists the event types a webhook can subscribe to.',
        response: withErrors({ 200: s.EventTypeList }),
      },
    },
    () => notifications.listEventTypes(eventTypes),
  );

  app.get(
    '/notifications/v1/webhook-events',
    {
      config: { access: 'manage' },
      schema: {
        tags,
        summary: 'List webhook events',
        description: "Lists the tenant's events with their delivery status and every send attempt.",
        querystring: s.WebhookEventQuery,
        response: withErrors({ 200: s.WebhookEventList }),
      },
    },
    (req) => listWebhookEvents(db, req.principal.tenantId, req.query),
  );
};
