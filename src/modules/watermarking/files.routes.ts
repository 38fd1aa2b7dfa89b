import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { PlatformContext } from '../../context.ts';
import { withErrors } from '../../platform/schemas.ts';
import * as files from './files.service.ts';
import * as s from './schemas.ts';

/** Suspect files: the presigned multipart upload of VOD files, and detection jobs on them. */
export const watermarkingFileRoutes: FastifyPluginAsyncTypebox<{ ctx: PlatformContext }> = async (app, { ctx }) => {
  const tags = ['Watermarking'];
  const conflict = { 409: Type.Ref('Error') };

  app.post(
    '/watermarking/v1/files/start',
    {
      config: { access: 'write' },
      schema: {
        tags,
        summary: 'Start watermarking file upload',
        description: 'Opens a multipart upload of a suspect file and answers one presigned URL per part.',
        body: s.StartBody,
        response: withErrors({ 200: s.StartResult }),
      },
    },
    (req) => files.startUpload(ctx, req.principal.tenantId, req.body),
  );

  app.get(
    '/watermarking/v1/files/:id/part/:nr',
    {
      config: { access: 'write' },
      schema: {
        tags,
        summary: 'Get watermarking file part upload URL',
        description: 'Answers a fresh presigned upload URL for one part of a suspect file upload in progress.',
        params: s.PartParams,
        response: withErrors({ 200: s.PartUrl, ...conflict }),
      },
    },
    (req) => files.suspectPartUrl(ctx, req.principal.tenantId, req.params.id, req.params.nr),
  );

  app.post(
    '/watermarking/v1/files/complete',
    {
      config: { access: 'write' },
      schema: {
        tags,
        summary: 'Complete watermarking file upload',
        description: 'Assembles the uploaded parts into the suspect file.',
        body: s.CompleteBody,
        response: withErrors({ 200: s.CompleteResult, ...conflict }),
      },
    },
    (req) => files.completeUpload(ctx, req.principal.tenantId, req.body),
  );

  app.get(
    '/watermarking/v1/files',
    {
      config: { access: 'read' },
      schema: {
        tags,
        summary: 'List watermarking files',
        description: 'Lists the suspect files with their upload status and detection result.',
        querystring: s.FileListQuery,
        response: withErrors({ 200: s.FileList }),
      },
    },
    (req) => files.listSuspects(ctx.db, req.principal.tenantId, req.query),
  );

  app.get(
    '/watermarking/v1/files/:id',
    {
      config: { access: 'read' },
      schema: {
        tags,
        summary: 'Get watermarking file',
        description: 'Reads one suspect file with its detection result and progress.',
        params: s.IdParams,
        response: withErrors({ 200: s.SuspectFile }),
      },
    },
    (req) => files.getSuspect(ctx.db, req.principal.tenantId, req.params.id),
  );

  app.post(
    '/watermarking/v1/detectjobs',
    {
      config: { access: 'write' },
      schema: {
        tags,
        summary: 'Create watermarking detection job',
        description: "Reads the marks of a completed suspect file; the result fills the file's detection.",
        body: s.DetectBody,
        response: withErrors({ 200: s.DetectCreated, ...conflict }),
      },
    },
    (req) => files.createDetectJob(ctx, req.principal.tenantId, req.body.fileId),
  );
};
