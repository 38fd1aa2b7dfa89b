import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { PlatformContext } from '../../context.ts';
import { FILE_TYPE_EXTENSIONS } from '../../media/fileTypes.ts';
import { LANGUAGES } from '../../media/languages.ts';
import { MultiDeleteBody, MultiDeleteResult } from '../../platform/multiDelete.ts';
import { absentBodyAsEmpty, OPTIONAL_BODY } from '../../platform/parsing.ts';
import { withErrors } from '../../platform/schemas.ts';
import { importFile } from './files.import.ts';
import { listFiles } from './files.list.ts';
import * as s from './files.schemas.ts';
import * as files from './files.service.ts';

export const fileRoutes: FastifyPluginAsyncTypebox<{ ctx: PlatformContext }> = async (app, { ctx }) => {
  const tags = ['VOD files'];
  const conflict = { 409: Type.Ref('Error') };

  app.post(
    '/vod/v1/files/start',
    {
      config: { access: 'write' },
      schema: {
        tags,
        summary: 'Start file upload',
        description: 'Opens a multipart upload and answers one presigned URL per part.',
        body: s.StartBody,
        response: withErrors({ 200: s.StartResult }),
      },
    },
    (req) => files.startUpload(ctx, req.principal.tenantId, req.body),
  );

  app.post(
    '/vod/v1/files/import',
    {
      config: { access: 'write' },
      schema: {
        tags,
        summary: 'Import file from URL',
        description:
          'Creates a file that the platform fetches from an http or https URL (redirects followed, a dropped connection resumed). The file is Uploading until the fetch ends, then Completed (probed like an upload) or Error with the reason in errorMessage; its progress is in import. Private addresses are refused unless MEDIAPLANE_FETCH_ALLOW_PRIVATE is set.',
        body: s.ImportBody,
        response: withErrors({ 200: s.ImportResult }),
      },
    },
    (req) => importFile(ctx, req.principal.tenantId, req.body),
  );

  app.get(
    '/vod/v1/files/:id/part/:partNumber',
    {
      config: { access: 'write' },
      schema: {
        tags,
        summary: 'Get next part upload URL',
        description: 'Answers a fresh presigned upload URL for one part of an upload in progress.',
        params: s.PartParams,
        response: withErrors({ 200: s.PartUrl, ...conflict }),
      },
    },
    (req) => files.filePartUrl(ctx, req.principal.tenantId, req.params.id, req.params.partNumber),
  );

  app.post(
    '/vod/v1/files/complete',
    {
      config: { access: 'write' },
      schema: {
        tags,
        summary: 'Finish file upload',
        description: 'Assembles the uploaded parts into the file, which is then probed for its media tracks.',
        body: s.CompleteBody,
        response: withErrors({ 200: s.CompleteResult, ...conflict }),
      },
    },
    (req) => files.completeUpload(ctx, req.principal.tenantId, req.body.fileId, req.body.parts),
  );

  app.post(
    '/vod/v1/files/:id/cancel',
    {
      config: { access: 'write' },
      // The body is optional: no body is `{ "delete": false }`.
      preValidation: absentBodyAsEmpty,
      schema: {
        ...OPTIONAL_BODY,
        tags,
        summary: 'Cancel file upload',
        description: 'Stops an upload; the file goes to Error, or is deleted when delete is true. The body is optional.',
        params: s.FileIdParams,
        body: s.CancelBody,
        response: withErrors({ 204: { type: 'null' }, ...conflict }),
      },
    },
    async (req, reply) => {
      await files.cancelUpload(ctx, req.principal.tenantId, req.params.id, req.body.delete === true);
      return reply.status(204).send();
    },
  );

  app.get(
    '/vod/v1/files/:id',
    {
      config: { access: 'read' },
      schema: {
        tags,
        summary: 'Get file',
        description: 'Reads one uploaded file with its status, size and media tracks.',
        params: s.FileIdParams,
        response: withErrors({ 200: s.UploadedFile }),
      },
    },
    (req) => files.getFile(ctx, req.principal.tenantId, req.params.id),
  );

  app.patch(
    '/vod/v1/files/:id',
    {
      config: { access: 'write' },
      schema: {
        tags,
        summary: 'Update file',
        description: "Changes a file's name, friendly name, metadata, tags or attributes.",
        params: s.FileIdParams,
        body: s.PatchBody,
        response: withErrors({ 200: s.FileSummary }),
      },
    },
    (req) => files.updateFile(ctx, req.principal.tenantId, req.params.id, req.body),
  );

  app.delete(
    '/vod/v1/files/:id',
    {
      config: { access: 'write' },
      schema: {
        tags,
        summary: 'Delete file',
        description: 'Deletes a file and its stored object.',
        params: s.FileIdParams,
        response: withErrors({ 200: s.DeleteResult }),
      },
    },
    (req) => files.deleteFile(ctx, req.principal.tenantId, req.params.id),
  );

  app.post(
    '/vod/v1/files/deletemany',
    {
      config: { access: 'write' },
      schema: {
        tags,
        summary: 'Delete multiple files',
        description: 'Deletes several files; answers one result per id and never fails as a whole.',
        body: MultiDeleteBody,
        response: withErrors({ 200: MultiDeleteResult }),
      },
    },
    (req) => files.deleteFiles(ctx, req.principal.tenantId, req.body),
  );

  app.get(
    '/vod/v1/files',
    {
      config: { access: 'read' },
      schema: {
        tags,
        summary: 'List files',
        description: "Lists the tenant's uploaded files, with filters, sorting and text search.",
        querystring: s.FileListQuery,
        response: withErrors({ 200: s.FileList }),
      },
    },
    (req) => listFiles(ctx.db, req.principal.tenantId, req.query),
  );

  app.get(
    '/vod/v1/files/:id/preview',
    {
      config: { access: 'read' },
      schema: {
        tags,
        summary: 'Get file preview URL',
        description: 'Answers a link that downloads the file until it expires.',
        params: s.FileIdParams,
        response: withErrors({ 200: s.Preview, ...conflict }),
      },
    },
    (req) => files.previewLink(ctx, req.principal.tenantId, req.params.id),
  );

  app.post(
    '/vod/v1/files/:id/detect',
    {
      config: { access: 'write' },
      schema: {
        tags,
        summary: 'Detect media tracks',
        description:
          'Probes the file again and answers its video, audio and caption tracks, with what ffprobe reads of each (codec, picture size, frame rate, duration, bit rate, language, audio channels, sample rate) and of the whole file (duration, bit rate, container format). A track can be passed as it is in the transcodingTracks of an asset.',
        params: s.FileIdParams,
        response: withErrors({ 200: s.Tracks, ...conflict }),
      },
    },
    (req) => files.detectTracks(ctx, req.principal.tenantId, req.params.id),
  );

  app.get(
    '/vod/v1/files/:id/duration',
    {
      config: { access: 'read' },
      schema: {
        tags,
        summary: 'Get file duration',
        description: 'Answers the duration of a media file in milliseconds.',
        params: s.FileIdParams,
        response: withErrors({ 200: s.Duration, ...conflict }),
      },
    },
    (req) => files.fileDuration(ctx, req.principal.tenantId, req.params.id),
  );

  app.get(
    '/vod/v1/filetypes',
    {
      config: { access: 'read' },
      schema: {
        tags,
        summary: 'Get file types',
        description: 'Lists the file types and the extensions accepted for each.',
        response: withErrors({ 200: s.FileTypes }),
      },
    },
    async () => ({ fileTypes: FILE_TYPE_EXTENSIONS }),
  );

  app.get(
    '/vod/v1/languages',
    {
      config: { access: 'read' },
      schema: {
        tags,
        summary: 'Get languages',
        description: 'Lists the language codes that tracks can be labelled with.',
        response: withErrors({ 200: s.Languages }),
      },
    },
    async () => ({ languages: LANGUAGES }),
  );
};
