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

  app.get(
    '/live/v1/channels',
    {
      config: read,
      schema: {
        tags,
        summary: 'List channels',
        description: "The tenant's live channels, one page, filtered by ids and dates, sorted; includeCloudData=false leaves out endpoints and inputs.",
        querystring: s.ChannelListQuery,
        response: withErrors({ 200: s.ChannelList }),
      },
    },
    (req) => channels.listChannels(ctx, reader(req), req.query),
  );

  app.post(
    '/live/v1/channels',
    {
      config: write,
      schema: {
        tags,
        summary: 'Create channel',
        description:
          "Creates a channel, Off, with its input, ladder, endpoints and restreams; refused with 409 channel_limit_reached over the tenant's channel limit.",
        body: s.ChannelCreate,
        response: withErrors({ 200: IdResponse }),
      },
    },
    (req) => channels.createChannel(ctx, req.principal.tenantId, req.body),
  );

  app.get(
    '/live/v1/channels/limit',
    {
      config: read,
      schema: {
        tags,
        summary: 'Get channel limit',
        description: 'How many channels the tenant may have (channelsLimit).',
        response: withErrors({ 200: s.ChannelsLimit }),
      },
    },
    (req) => channels.channelsLimit(ctx, req.principal.tenantId),
  );

  app.get(
    '/live/v1/channels/ai-live-caption-languages',
    {
      config: read,
      schema: {
        tags,
        summary: 'Get AI live caption languages',
        description:
          "The languages live captions can be made in: exactly those whose speech model is installed on the server (pocketsphinx models, e.g. Debian's pocketsphinx-en-us); empty when none is. A channel asking for another language is refused with 400.",
        response: withErrors({ 200: s.CaptionLanguages }),
      },
    },
    async () => channels.captionLanguages(ctx),
  );

  app.get(
    '/live/v1/channelsstatus',
    {
      config: read,
      schema: {
        tags,
        summary: 'Get channels status',
        description: 'The status of several channels (ids comma-separated or repeated; every channel when none); unknown ids are left out.',
        querystring: s.ChannelsStatusQuery,
        response: withErrors({ 200: Type.Array(s.ChannelStatusBody) }),
      },
    },
    (req) => channels.channelsStatus(ctx, req.principal.tenantId, req.query.ids),
  );

  app.get(
    '/live/v1/channels/:id',
    {
      config: read,
      schema: {
        tags,
        summary: 'Get channel details',
        description: 'One channel: name, status, endpoints (HLS, DASH), inputs with the ingest URL, metadata.',
        params: s.ChannelParams,
        response: withErrors({ 200: s.Channel }),
      },
    },
    (req) => channels.getChannel(ctx, reader(req), req.params.id),
  );

  app.patch(
    '/live/v1/channels/:id',
    {
      config: write,
      schema: {
        tags,
        summary: 'Update channel',
        description: "Changes a channel's name, input, endpoints, ladder, restreams (at most 10) or access policy (null removes it); answers its endpoints.",
        params: s.ChannelParams,
        body: s.ChannelPatch,
        response: withErrors({ 200: s.ChannelUpdated }),
      },
    },
    (req) => channels.updateChannel(ctx, req.principal.tenantId, req.params.id, req.body),
  );

  app.delete(
    '/live/v1/channels/:id',
    {
      config: write,
      schema: {
        tags,
        summary: 'Delete channel',
        description: 'Deletes an Off (or Error) channel with its statistics and output files; a running channel answers 409 channel_not_off.',
        params: s.ChannelParams,
        response: withErrors({ 200: NoBody }),
      },
    },
    async (req, reply) => {
      await channels.deleteChannel(ctx, req.principal.tenantId, req.params.id);
      return reply.status(200).send();
    },
  );

  app.post(
    '/live/v1/channels/:id/start',
    {
      config: write,
      schema: {
        tags,
        summary: 'Start channel',
        description: 'Starts a channel: Starting, then On once a live process has published its first segment. Idempotent while Starting or On.',
        params: s.ChannelParams,
        response: withErrors({ 200: NoBody }),
      },
    },
    async (req, reply) => {
      await channels.startChannel(ctx, req.principal.tenantId, req.params.id);
      return reply.status(200).send();
    },
  );

  app.post(
    '/live/v1/channels/:id/stop',
    {
      config: write,
      schema: {
        tags,
        summary: 'Stop channel',
        description: 'Stops a channel: Stopping, then Off once its live process has stopped it (at once when none holds it). Idempotent while Off.',
        params: s.ChannelParams,
        response: withErrors({ 200: NoBody }),
      },
    },
    async (req, reply) => {
      await channels.stopChannel(ctx, req.principal.tenantId, req.params.id);
      return reply.status(200).send();
    },
  );

  app.post(
    '/live/v1/channels/:id/stream-key/rotate',
    {
      config: write,
      schema: {
        tags,
        summary: 'Rotate channel stream key',
        description: 'Makes a new stream key and answers the new transportPrimaryIngestUrl; an encoder connected with the old key is disconnected.',
        params: s.ChannelParams,
        response: withErrors({ 200: s.StreamKeyRotated }),
      },
    },
    (req) => channels.rotateStreamKey(ctx, req.principal.tenantId, req.params.id),
  );

  app.get(
    '/live/v1/channels/:id/status',
    {
      config: read,
      schema: {
        tags,
        summary: 'Get channel status',
        description: "The channel's status.",
        params: s.ChannelParams,
        response: withErrors({ 200: s.ChannelStatusBody }),
      },
    },
    (req) => channels.channelStatus(ctx, req.principal.tenantId, req.params.id),
  );

  app.get(
    '/live/v1/channels/:id/stats',
    {
      config: read,
      schema: {
        tags,
        summary: 'Get channel statistics',
        description:
          'Per-minute input bitrate, frame rate, dropped frames, segments, connected seconds and viewers, summed or averaged per periodSeconds (a multiple of 60).',
        params: s.ChannelParams,
        querystring: s.StatsQuery,
        response: withErrors({ 200: s.Stats }),
      },
    },
    (req) => channelStats(ctx, req.principal.tenantId, req.params.id, req.query),
  );

  app.get(
    '/live/v1/channels/:id/configuration',
    {
      config: read,
      schema: {
        tags,
        summary: 'Get channel configuration',
        description:
          "The channel's configuration: input with transportPrimaryIngestUrl (stream key masked for read-only keys, mp4 source passwords always masked), ladder, endpoints, restreams.",
        params: s.ChannelParams,
        response: withErrors({ 200: s.Configuration }),
      },
    },
    (req) => channels.channelConfiguration(ctx, reader(req), req.params.id),
  );
};
