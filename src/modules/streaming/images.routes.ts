import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { PlatformContext } from '../../context.ts';
import { MultiDeleteBody, MultiDeleteResult } from '../../platform/multiDelete.ts';
import { withErrors } from '../../platform/schemas.ts';
import { getFrames } from './frames.ts';
import * as images from './images.service.ts';
import * as s from './images.schemas.ts';
import { AssetParams } from './schemas.ts';

export const imageRoutes: FastifyPluginAsyncTypebox<{ ctx: PlatformContext }> = async (app, { ctx }) => {
  const tags = ['Streaming images'];
  const read = { access: 'read' as const };
  const write = { access: 'write' as const };
  const base = '/streaming/v1/assets/:assetId/images';

  app.post(
    `${base}/uploaded/start`,
    {
      config: write,
      schema: {
        tags,
        summary: 'Start image upload',
        description: 'Opens a multipart upload of an image for the asset and answers presigned part URLs (PUT each part, keep its ETag).',
        params: AssetParams,
        body: s.ImageStartBody,
        response: withErrors({ 200: s.ImageStartResult }),
      },
    },
    (req) => images.startImageUpload(ctx, req.principal.tenantId, req.params.assetId, req.body),
  );

  app.get(
    `${base}/uploaded/:fileId/part/:partNumber`,
    {
      config: write,
      schema: {
        tags,
        summary: 'Get next image part upload URL',
        description: 'A fresh presigned URL for one part of an open image upload.',
        params: s.ImagePartParams,
        response: withErrors({ 200: Type.Object({ url: Type.String() }), 409: Type.Ref('Error') }),
      },
    },
    (req) => images.imagePartUrl(ctx, req.principal.tenantId, req.params.assetId, req.params.fileId, req.params.partNumber),
  );

  app.post(
    `${base}/uploaded/complete`,
    {
      config: write,
      schema: {
        tags,
        summary: 'Finish image upload',
        description:
          'Joins the parts (checked against their ETags) and reads the file: only a real image (PNG, JPEG, WebP, GIF, BMP) is kept, as one of the asset images; anything else is 400 `image_not_valid`.',
        body: s.ImageCompleteBody,
        params: AssetParams,
        response: withErrors({ 200: s.ImageCompleteResult, 409: Type.Ref('Error') }),
      },
    },
    (req) => images.completeImageUpload(ctx, req.principal.tenantId, req.params.assetId, req.body),
  );

  app.get(
    `${base}/uploaded`,
    {
      config: read,
      schema: {
        tags,
        summary: 'List images',
        description: 'The images uploaded for the asset, with filters (fileType, status, ids, dates) and paging.',
        params: AssetParams,
        querystring: s.ImageListQuery,
        response: withErrors({ 200: s.ImageList }),
      },
    },
    (req) => images.listImages(ctx, req.principal.tenantId, req.params.assetId, req.query),
  );

  app.get(
    `${base}/uploaded/:fileId`,
    {
      config: read,
      schema: {
        tags,
        summary: 'Get image details',
        description: 'One uploaded image.',
        params: s.ImageParams,
        response: withErrors({ 200: s.UploadedImage }),
      },
    },
    (req) => images.getImage(ctx, req.principal.tenantId, req.params.assetId, req.params.fileId),
  );

  app.delete(
    `${base}/uploaded/:fileId`,
    {
      config: write,
      schema: {
        tags,
        summary: 'Delete uploaded image',
        description: 'Deletes the image from the store and from the asset images.',
        params: s.ImageParams,
        response: withErrors({ 200: s.DeletedFile }),
      },
    },
    (req) => images.deleteImageFile(ctx, req.principal.tenantId, req.params.assetId, req.params.fileId),
  );

  app.post(
    `${base}/uploaded/deletemany`,
    {
      config: write,
      schema: {
        tags,
        summary: 'Delete multiple images',
        description: 'Deletes several uploaded images; one result per id, never a failure as a whole.',
        params: AssetParams,
        body: MultiDeleteBody,
        response: withErrors({ 200: MultiDeleteResult }),
      },
    },
    (req) => images.deleteImageFiles(ctx, req.principal.tenantId, req.params.assetId, req.body),
  );

  app.get(
    `${base}/frames`,
    {
      config: read,
      schema: {
        tags,
        summary: 'Get image frames',
        description: `Stills taken from the asset's video with ffmpeg (one every 10 s from 0 s, and \`poster\`), keyed by frame id. Extracted once, on the first request, which waits for them (202 with {} if that takes over 20 s: ask again).`,
        params: AssetParams,
        response: withErrors({
          200: Type.Record(Type.String(), s.Frame),
          202: Type.Record(Type.String(), s.Frame),
          409: Type.Ref('Error'),
          422: Type.Ref('Error'),
        }),
      },
    },
    async (req, reply) => {
      const { status, frames } = await getFrames(ctx, req.principal.tenantId, req.params.assetId);
      if (status === 202) reply.header('retry-after', '2');
      return reply.status(status).send(frames);
    },
  );
};
