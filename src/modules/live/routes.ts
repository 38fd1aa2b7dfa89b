import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { PlatformContext } from '../../context.ts';
import { ROLES } from '../../platform/roles.ts';
import { IdResponse, withErrors } from '../../platform/schemas.ts';
import * as s from './schemas.ts';
import * as channels from './service.ts';
import { channelStats } from './stats.ts';

/** "No response body; the HTTP status is the result" (spec, Stop channel), and "200, no body" for deletes. */
const NoBody = Type.Unsafe<undefined>({ type: 'null', description: 'no body' });

export const liveChannelRoutes: FastifyPluginAsyncTypebox<{ ctx: PlatformContext }> = async (app, { ctx }) => {
  const tags = ['Live channels'];
  const read = { access: 'read' as const };
  const write = { access: 'write' as const };
  const reader = (req: { principal: { tenantId: string; roleType: keyof typeof ROLES } }) => ({
    tenantId: req.principal.tenantId,
    canWrite: ROLES[req.principal.roleType].grants.includes('write'),
  });

  app.get('/live/v1/channels', {
    config: read,
    schema: { tags, summary: 'List channels', querystring: s.ChannelListQuery, response: withErrors({ 200: s.ChannelList }) },
  }, (req) => channels.listChannels(ctx, reader(req), req.query));

  app.post('/live/v1/channels', {
    config: write,
    schema: { tags, summary: 'Create channel', body: s.ChannelCreate, response: withErrors({ 200: IdResponse }) },
  }, (req) => channels.createChannel(ctx, req.principal.tenantId, req.body));

  app.get('/live/v1/channels/limit', {
    config: read,
    schema: { tags, summary: 'Get channel limit', response: withErrors({ 200: s.ChannelsLimit }) },
  }, (req) => channels.channelsLimit(ctx, req.principal.tenantId));

  app.get('/live/v1/channels/ai-live-caption-languages', {
    config: read,
    schema: { tags, summary: 'Get AI live caption languages', response: withErrors({ 200: s.CaptionLanguages }) },
  }, async () => channels.captionLanguages());

  app.get('/live/v1/channelsstatus', {
    config: read,
    schema: { tags, summary: 'Get channels status', querystring: s.ChannelsStatusQuery, response: withErrors({ 200: Type.Array(s.ChannelStatusBody) }) },
  }, (req) => channels.channelsStatus(ctx, req.principal.tenantId, req.query.ids));

  app.get('/live/v1/channels/:id', {
    config: read,
    schema: { tags, summary: 'Get channel details', params: s.ChannelParams, response: withErrors({ 200: s.Channel }) },
  }, (req) => channels.getChannel(ctx, reader(req), req.params.id));

  app.patch('/live/v1/channels/:id', {
    config: write,
    schema: { tags, summary: 'Update channel', params: s.ChannelParams, body: s.ChannelPatch, response: withErrors({ 200: s.ChannelUpdated }) },
  }, (req) => channels.updateChannel(ctx, req.principal.tenantId, req.params.id, req.body));

  app.delete('/live/v1/channels/:id', {
    config: write,
    schema: { tags, summary: 'Delete channel (Off or Error only; 409 channel_not_off otherwise)', params: s.ChannelParams, response: withErrors({ 200: NoBody }) },
  }, async (req, reply) => {
    await channels.deleteChannel(ctx, req.principal.tenantId, req.params.id);
    return reply.status(200).send();
  });

  app.post('/live/v1/channels/:id/start', {
    config: write,
    schema: { tags, summary: 'Start channel (Off → Starting → On)', params: s.ChannelParams, response: withErrors({ 200: NoBody }) },
  }, async (req, reply) => {
    await channels.startChannel(ctx, req.principal.tenantId, req.params.id);
    return reply.status(200).send();
  });

  app.post('/live/v1/channels/:id/stop', {
    config: write,
    schema: { tags, summary: 'Stop channel (Stopping → Off)', params: s.ChannelParams, response: withErrors({ 200: NoBody }) },
  }, async (req, reply) => {
    await channels.stopChannel(ctx, req.principal.tenantId, req.params.id);
    return reply.status(200).send();
  });

  app.post('/live/v1/channels/:id/stream-key/rotate', {
    config: write,
    schema: { tags, summary: 'Rotate the stream key (the connected encoder is disconnected)', params: s.ChannelParams, response: withErrors({ 200: s.StreamKeyRotated }) },
  }, (req) => channels.rotateStreamKey(ctx, req.principal.tenantId, req.params.id));

  app.get('/live/v1/channels/:id/status', {
    config: read,
    schema: { tags, summary: 'Get channel status', params: s.ChannelParams, response: withErrors({ 200: s.ChannelStatusBody }) },
  }, (req) => channels.channelStatus(ctx, req.principal.tenantId, req.params.id));

  app.get('/live/v1/channels/:id/stats', {
    config: read,
    schema: { tags, summary: 'Get channel statistics', params: s.ChannelParams, querystring: s.StatsQuery, response: withErrors({ 200: s.Stats }) },
  }, (req) => channelStats(ctx, req.principal.tenantId, req.params.id, req.query));

  app.get('/live/v1/channels/:id/configuration', {
    config: read,
    schema: { tags, summary: 'Get channel configuration', params: s.ChannelParams, response: withErrors({ 200: s.Configuration }) },
  }, (req) => channels.channelConfiguration(ctx, reader(req), req.params.id));
};
