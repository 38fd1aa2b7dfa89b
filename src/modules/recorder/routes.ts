import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { PlatformContext } from '../../context.ts';
import { MultiDeleteBody, MultiDeleteResult } from '../../platform/multiDelete.ts';
import { withErrors } from '../../platform/schemas.ts';
import * as s from './schemas.ts';
import * as recordings from './service.ts';

/** "200, no body" (spec, Errors §1). */
const NoBody = Type.Unsafe<undefined>({ type: 'null', description: 'no body' });

export const recordingRoutes: FastifyPluginAsyncTypebox<{ ctx: PlatformContext }> = async (app, { ctx }) => {
  const tags = ['Recorder recordings'];
  const read = { access: 'read' as const };
  const write = { access: 'write' as const };

  app.post(
    '/cvr/v1/recordings',
    {
      config: write,
      schema: {
        tags,
        summary: 'Create recording',
        description:
          "Records a range of a live channel's output: at once when it is past (and still retained), when its time comes when it is in the future, live while it runs. Optional catch-up address, archive and transcoded outputs.",
        body: s.RecordingCreate,
        response: withErrors({ 200: Type.Object({ id: Type.String() }) }),
      },
    },
    (req) => recordings.createRecording(ctx, req.principal.tenantId, req.body),
  );

  app.get(
    '/cvr/v1/recordings',
    {
      config: read,
      schema: {
        tags,
        summary: 'List recordings',
        description: "Lists the tenant's recordings, with filters (range overlap, channels, statuses, dates, tags, attributes), sorting and text search.",
        querystring: s.RecordingListQuery,
        response: withErrors({ 200: s.RecordingList }),
      },
    },
    (req) => recordings.listRecordings(ctx, req.principal.tenantId, req.query),
  );

  app.get(
    '/cvr/v1/recordings/:id',
    {
      config: read,
      schema: {
        tags,
        summary: 'Get recording details',
        description: 'Reads one recording with its catch-up, archive and outputs.',
        params: s.RecordingParams,
        response: withErrors({ 200: s.Recording }),
      },
    },
    (req) => recordings.getRecording(ctx, req.principal.tenantId, req.params.id),
  );

  app.patch(
    '/cvr/v1/recordings/:id',
    {
      config: write,
      schema: {
        tags,
        summary: 'Update recording',
        description: 'Changes the source (only while Pending), catch-up, archive settings, title, metadata, tags or attributes.',
        params: s.RecordingParams,
        body: s.RecordingPatch,
        response: withErrors({ 200: s.RecordingSummary }),
      },
    },
    (req) => recordings.updateRecording(ctx, req.principal.tenantId, req.params.id, req.body),
  );

  app.delete(
    '/cvr/v1/recordings/:id',
    {
      config: write,
      schema: {
        tags,
        summary: 'Delete recording',
        description: 'Deletes a recording with its recorded copy, archive and outputs.',
        params: s.RecordingParams,
        response: withErrors({ 200: NoBody }),
      },
    },
    async (req, reply) => {
      await recordings.deleteRecording(ctx, req.principal.tenantId, req.params.id);
      return reply.status(200).send();
    },
  );

  app.post(
    '/cvr/v1/recordings/deletemany',
    {
      config: write,
      schema: {
        tags,
        summary: 'Delete multiple recordings',
        description: 'Deletes several recordings; answers one result per id and never fails as a whole.',
        body: MultiDeleteBody,
        response: withErrors({ 200: MultiDeleteResult }),
      },
    },
    (req) => recordings.deleteRecordings(ctx, req.principal.tenantId, req.body),
  );

  app.post(
    '/cvr/v1/recordings/outputs/progress',
    {
      config: read,
      schema: {
        tags,
        summary: 'Get multiple recording outputs progress',
        description: 'Answers the transcoding progress of several outputs of several recordings at once.',
        body: s.ProgressManyBody,
        response: withErrors({ 200: s.ProgressMany }),
      },
    },
    (req) => recordings.outputsProgress(ctx, req.principal.tenantId, req.body),
  );

  app.post(
    '/cvr/v1/recordings/:id/outputs',
    {
      config: write,
      schema: {
        tags,
        summary: 'Add output to recording',
        description: 'Adds an output transcoded with a preset (and overlays); it is made once the recording is recorded.',
        params: s.RecordingParams,
        body: s.OutputCreate,
        response: withErrors({ 200: s.OutputIds }),
      },
    },
    (req) => recordings.addOutput(ctx, req.principal.tenantId, req.params.id, req.body),
  );

  app.delete(
    '/cvr/v1/recordings/:recordingId/outputs/:id',
    {
      config: write,
      schema: {
        tags,
        summary: 'Remove output from recording',
        description: 'Removes one output of a recording and its files.',
        params: s.OutputParams,
        response: withErrors({ 200: NoBody }),
      },
    },
    async (req, reply) => {
      await recordings.removeOutput(ctx, req.principal.tenantId, req.params.recordingId, req.params.id);
      return reply.status(200).send();
    },
  );

  app.get(
    '/cvr/v1/recordings/:recordingId/outputs/:outputId/progress',
    {
      config: read,
      schema: {
        tags,
        summary: 'Get recording output progress',
        description: 'Answers how far the transcoding of one output of a recording has come, from 0 to 100.',
        params: s.ProgressParams,
        response: withErrors({ 200: s.Progress }),
      },
    },
    (req) => recordings.outputProgress(ctx, req.principal.tenantId, req.params.recordingId, req.params.outputId),
  );
};
