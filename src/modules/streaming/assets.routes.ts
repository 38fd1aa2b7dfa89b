import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';
import type { PlatformContext } from '../../context.ts';
import { withErrors } from '../../platform/schemas.ts';
import * as assets from './assets.service.ts';
import { getStreamingAsset } from './catalogue.ts';
import { listStreamingAssets } from './list.ts';
import * as s from './schemas.ts';

/** "200, no body" (spec, Errors §1). */
const NoBody = Type.Unsafe<undefined>({ type: 'null', description: 'no body' });

export const streamingAssetRoutes: FastifyPluginAsyncTypebox<{ ctx: PlatformContext }> = async (app, { ctx }) => {
  const tags = ['Streaming assets'];
  const read = { access: 'read' as const };
  const write = { access: 'write' as const };
  const done = async (reply: FastifyReply, work: Promise<unknown>) => {
    await work;
    return reply.status(200).send();
  };

  app.get(
    '/streaming/v1/assets',
    {
      config: read,
      schema: {
        tags,
        summary: 'List assets',
        description:
          'Every playable thing of the tenant (VOD assets, live channels, and the kinds other modules register) as streaming assets, with filters, sorting and text search.',
        querystring: s.StreamingAssetListQuery,
        response: withErrors({ 200: s.StreamingAssetList }),
      },
    },
    (req) => listStreamingAssets(ctx, req.principal.tenantId, req.query),
  );

  app.get(
    '/streaming/v1/assets/:assetId',
    {
      config: read,
      schema: {
        tags,
        summary: 'Get asset details',
        description: 'One streaming asset: its outputs and endpoints, title, description, tags, images, chapters and settings.',
        params: s.AssetParams,
        response: withErrors({ 200: s.StreamingAsset }),
      },
    },
    (req) => getStreamingAsset(ctx, req.principal.tenantId, req.params.assetId),
  );

  app.patch(
    '/streaming/v1/assets/:assetId',
    {
      config: write,
      schema: {
        tags,
        summary: 'Update asset',
        description:
          "The spec's update_asset: sets the streaming title, description, metadata (over the module's own) and tags (replacing them). Omitted fields are kept; null clears title or description.",
        params: s.AssetParams,
        body: s.StreamingAssetPatch,
        response: withErrors({ 200: s.StreamingAsset }),
      },
    },
    (req) => assets.updateStreamingAsset(ctx, req.principal.tenantId, req.params.assetId, req.body),
  );

  app.patch(
    '/streaming/v1/assets/:assetId/settings',
    {
      config: write,
      schema: {
        tags,
        summary: 'Update asset settings',
        description:
          "Sets the asset's own states of tokenRequired, devToolsAccess, cap, analytics and codeObfuscation, over the tenant defaults; `null` (not in the spec) takes the asset's own state away, so the tenant's default applies again.",
        params: s.AssetParams,
        body: s.SettingsPatch,
        response: withErrors({ 200: s.StreamingAsset }),
      },
    },
    (req) => assets.updateAssetSettings(ctx, req.principal.tenantId, req.params.assetId, req.body),
  );

  app.post(
    '/streaming/v1/assets/:assetId/chapters',
    {
      config: write,
      schema: {
        tags,
        summary: 'Create asset chapters',
        description:
          'Adds chapters; each is given an id. A chapter must end after it starts and not past the asset, and may not overlap another (400 naming it).',
        params: s.AssetParams,
        body: s.ChaptersBody,
        response: withErrors({ 200: NoBody }),
      },
    },
    (req, reply) => done(reply, assets.addChapters(ctx, req.principal.tenantId, req.params.assetId, req.body)),
  );

  app.delete(
    '/streaming/v1/assets/:assetId/chapters/:chapterId',
    {
      config: write,
      schema: {
        tags,
        summary: 'Delete asset chapter',
        description: 'Removes one chapter.',
        params: Type.Object({ assetId: s.AssetId, chapterId: Type.String({ minLength: 1, maxLength: 64 }) }),
        response: withErrors({ 200: NoBody }),
      },
    },
    (req, reply) => done(reply, assets.deleteChapter(ctx, req.principal.tenantId, req.params.assetId, req.params.chapterId)),
  );

  app.post(
    '/streaming/v1/assets/:assetId/tags',
    {
      config: write,
      schema: {
        tags,
        summary: 'Create asset tags',
        description: 'Adds tags by name; a name the asset already has (in any case) is kept once.',
        params: s.AssetParams,
        body: s.TagsBody,
        response: withErrors({ 200: NoBody }),
      },
    },
    (req, reply) => done(reply, assets.addTags(ctx, req.principal.tenantId, req.params.assetId, req.body)),
  );

  app.delete(
    '/streaming/v1/assets/:assetId/tags/:tag',
    {
      config: write,
      schema: {
        tags,
        summary: 'Delete asset tag',
        description: 'Removes a tag, named by its id or its name.',
        params: Type.Object({ assetId: s.AssetId, tag: Type.String({ minLength: 1, maxLength: 256 }) }),
        response: withErrors({ 200: NoBody }),
      },
    },
    (req, reply) => done(reply, assets.deleteTag(ctx, req.principal.tenantId, req.params.assetId, req.params.tag)),
  );

  app.post(
    '/streaming/v1/assets/:assetId/images',
    {
      config: write,
      schema: {
        tags,
        summary: 'Create asset images',
        description: 'Adds or replaces images by key, each an http(s) URL with an optional Id and Name.',
        params: s.AssetParams,
        body: s.ImagesBody,
        response: withErrors({ 200: NoBody }),
      },
    },
    (req, reply) => done(reply, assets.addImages(ctx, req.principal.tenantId, req.params.assetId, req.body)),
  );

  app.delete(
    '/streaming/v1/assets/:assetId/images/:imageKey',
    {
      config: write,
      schema: {
        tags,
        summary: 'Delete asset image',
        description: 'Removes the image of that key.',
        params: Type.Object({ assetId: s.AssetId, imageKey: Type.String({ minLength: 1, maxLength: 128 }) }),
        response: withErrors({ 200: NoBody }),
      },
    },
    (req, reply) => done(reply, assets.deleteImage(ctx, req.principal.tenantId, req.params.assetId, req.params.imageKey)),
  );
};
