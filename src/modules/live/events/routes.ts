import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { PlatformContext } from '../../../context.ts';
import { MultiDeleteBody, MultiDeleteResult } from '../../../platform/multiDelete.ts';
import { IdResponse, withErrors } from '../../../platform/schemas.ts';
import * as s from './schemas.ts';
import * as events from './service.ts';

/** "200, no body" (spec, Errors §1). */
const NoBody = Type.Unsafe<undefined>({ type: 'null', description: 'no body' });

export const liveEventRoutes: FastifyPluginAsyncTypebox<{ ctx: PlatformContext }> = async (app, { ctx }) => {
  const tags = ['Live events'];
  const read = { access: 'read' as const };
  const write = { access: 'write' as const };
  const conflict = { 409: Type.Ref('Error') };

  app.post(
    '/live/v1/events',
    {
      config: write,
      schema: {
        tags,
        summary: 'Create event',
        description:
          'Schedules an event on a channel of the tenant (end after start). Its status follows the clock: Scheduled, Live from start, Finished from end. ' +
          'With ensureChannel (an EventBased channel) the channel is started before start and stopped after end.',
        body: s.EventCreate,
        response: withErrors({ 200: IdResponse, ...conflict }),
      },
    },
    (req) => events.createEvent(ctx, req.principal.tenantId, req.body),
  );

  app.get(
    '/live/v1/events',
    {
      config: read,
      schema: {
        tags,
        summary: 'List events',
        description:
          "The tenant's events, one page: filtered by channel, time range overlap (searchStart, searchEnd), ids, dates, statuses, tags and attributes; sorted by Start (default), ChannelId, Metadata.Title and more.",
        querystring: s.EventListQuery,
        response: withErrors({ 200: s.EventList }),
      },
    },
    (req) => events.listEvents(ctx, req.principal.tenantId, req.query),
  );

  app.post(
    '/live/v1/events/deletemany',
    {
      config: write,
      schema: {
        tags,
        summary: 'Delete multiple events',
        description: 'Deletes several events; answers one result per id and never fails as a whole.',
        body: MultiDeleteBody,
        response: withErrors({ 200: MultiDeleteResult }),
      },
    },
    (req) => events.deleteEvents(ctx, req.principal.tenantId, req.body),
  );

  app.get(
    '/live/v1/events/:id',
    {
      config: read,
      schema: {
        tags,
        summary: 'Get event details',
        description: 'Reads one event, with its status, catch-up endpoints and distribution.',
        params: s.EventParams,
        response: withErrors({ 200: s.Event }),
      },
    },
    (req) => events.getEvent(ctx, req.principal.tenantId, req.params.id),
  );

  app.patch(
    '/live/v1/events/:id',
    {
      config: write,
      schema: {
        tags,
        summary: 'Update event',
        description:
          'Changes an event: start while it is Scheduled, end until it is Finished, the rest any time; accessPolicyId null removes the policy. Answers the event.',
        params: s.EventParams,
        body: s.EventPatch,
        response: withErrors({ 200: s.Event, ...conflict }),
      },
    },
    (req) => events.updateEvent(ctx, req.principal.tenantId, req.params.id, req.body),
  );

  app.delete(
    '/live/v1/events/:id',
    {
      config: write,
      schema: {
        tags,
        summary: 'Delete event',
        description: 'Deletes an event; a channel it kept on is stopped unless another event of the channel still needs it.',
        params: s.EventParams,
        response: withErrors({ 200: NoBody }),
      },
    },
    async (req, reply) => {
      await events.deleteEvent(ctx, req.principal.tenantId, req.params.id);
      return reply.status(200).send();
    },
  );
};
