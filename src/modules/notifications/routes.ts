import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { WebhookConfig } from '../../config.ts';
import type { Db } from '../../db/client.ts';
import { withErrors } from '../../platform/schemas.ts';
import { listWebhookEvents } from './eventLog.ts';
import * as s from './schemas.ts';
import * as notifications from './service.ts';

export const notificationsRoutes: FastifyPluginAsyncTypebox<{ db: Db; webhooks: WebhookConfig }> = async (app, { db, webhooks: cfg }) => {
  const tags = ['Notifications'];

  app.get('/notifications/v1/webhook', {
    config: { access: 'manage' },
    schema: { tags, summary: 'List webhooks', querystring: s.WebhookListQuery, response: withErrors({ 200: s.WebhookList }) },
  }, (req) => notifications.listWebhooks(db, req.principal.tenantId, req.query));

  app.post('/notifications/v1/webhook', {
    config: { access: 'manage' },
    schema: { tags, summary: 'Create webhook', body: s.WebhookCreate, response: withErrors({ 200: s.Webhook, 409: { $ref: 'Error' } }) },
  }, (req) => notifications.createWebhook(db, cfg, req.principal.tenantId, req.body));

  app.get('/notifications/v1/webhook/signature-secret', {
    config: { access: 'manage' },
    schema: { tags, summary: 'Get webhook signature secret', response: withErrors({ 200: s.SignatureSecret }) },
  }, (req) => notifications.getSignatureSecret(db, req.principal.tenantId));

  app.get('/notifications/v1/webhook/:id', {
    config: { access: 'manage' },
    schema: { tags, summary: 'Get webhook', params: s.WebhookParams, response: withErrors({ 200: s.Webhook }) },
  }, (req) => notifications.getWebhook(db, req.principal.tenantId, req.params.id));

  app.patch('/notifications/v1/webhook/:id', {
    config: { access: 'manage' },
    schema: { tags, summary: 'Update webhook', params: s.WebhookParams, body: s.WebhookUpdate, response: withErrors({ 200: s.Webhook }) },
  }, (req) => notifications.updateWebhook(db, cfg, req.principal.tenantId, req.params.id, req.body));

  app.delete('/notifications/v1/webhook/:id', {
    config: { access: 'manage' },
    schema: { tags, summary: 'Delete webhook', params: s.WebhookParams, response: withErrors({ 204: { type: 'null' } }) },
  }, async (req, reply) => {
    await notifications.deleteWebhook(db, req.principal.tenantId, req.params.id);
    return reply.status(204).send();
  });

  app.post('/notifications/v1/webhook/:id/test', {
    config: { access: 'manage' },
    schema: { tags, summary: 'Test webhook', params: s.WebhookParams, response: withErrors({ 200: s.WebhookTestResult }) },
  }, (req) => notifications.testWebhook(db, cfg, req.principal.tenantId, req.params.id));

  app.get('/notifications/v1/webhook-events/types', {
    config: { access: 'read' },
    schema: { tags, summary: 'List webhook event types', response: withErrors({ 200: s.EventTypeList }) },
  }, () => notifications.listEventTypes());

  app.get('/notifications/v1/webhook-events', {
    config: { access: 'manage' },
    schema: { tags, summary: 'List webhook events', querystring: s.WebhookEventQuery, response: withErrors({ 200: s.WebhookEventList }) },
  }, (req) => listWebhookEvents(db, req.principal.tenantId, req.query));
};
