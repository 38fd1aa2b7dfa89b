import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { PlatformContext } from '../../../context.ts';
import { MultiDeleteBody, MultiDeleteResult } from '../../../platform/multiDelete.ts';
import { withErrors } from '../../../platform/schemas.ts';
import * as s from './schemas.ts';
import * as assets from './service.ts';

/** "200, no body" (spec, Errors §1). */
const NoBody = Type.Unsafe<undefined>({ type: 'null', description: 'no body' });

export const vodAssetRoutes: FastifyPluginAsyncTypebox<{ ctx: PlatformContext }> = async (app, { ctx }) => {
  const tags = ['VOD assets'];
  const { db } = ctx;
  const read = { access: 'read' as const };
  const write = { access: 'write' as const };

  app.post(
    '/vod/v1/assets',
    {
      config: write,
      schema: {
        tags,
        summary: 'Create VOD asset',
        description: 'Creates an asset from uploaded files and starts transcoding them with the preset.',
        body: s.VodAssetCreate,
        response: withErrors({ 200: Type.Object({ id: Type.String() }) }),
      },
    },
    (req) => assets.createAsset(ctx, req.principal.tenantId, req.body),
  );

  app.get(
    '/vod/v1/assets',
    {
      config: read,
      schema: {
        tags,
        summary: 'List VOD assets',
        description: "Lists the tenant's VOD assets, with filters, sorting and text search.",
        querystring: s.VodAssetListQuery,
        response: withErrors({ 200: s.VodAssetList }),
      },
    },
    (req) => assets.listAssets(db, req.principal.tenantId, req.query),
  );

  app.get(
    '/vod/v1/assets/:id',
    {
      config: read,
      schema: {
        tags,
        summary: 'Get VOD asset',
        description: 'Reads one VOD asset with its sources, outputs and playback endpoints.',
        params: s.AssetParams,
        response: withErrors({ 200: s.VodAsset }),
      },
    },
    (req) => assets.getAsset(db, req.principal.tenantId, req.params.id),
  );

  app.patch(
    '/vod/v1/assets/:id',
    {
      config: write,
      schema: {
        tags,
        summary: 'Update VOD asset',
        description: "Changes an asset's title, metadata, tags, attributes or access policy.",
        params: s.AssetParams,
        body: s.VodAssetPatch,
        response: withErrors({ 200: s.VodAsset }),
      },
    },
    (req) => assets.updateAsset(db, req.principal.tenantId, req.params.id, req.body),
  );

  app.delete(
    '/vod/v1/assets/:id',
    {
      config: write,
      schema: {
        tags,
        summary: 'Delete VOD asset',
        description: 'Deletes an asset with all its outputs.',
        params: s.AssetParams,
        response: withErrors({ 200: NoBody }),
      },
    },
    async (req, reply) => {
      await assets.deleteAsset(ctx, req.principal.tenantId, req.params.id);
      return reply.status(200).send();
    },
  );

  app.post(
    '/vod/v1/assets/deletemany',
    {
      config: write,
      schema: {
        tags,
        summary: 'Delete multiple VOD assets',
        description: 'Deletes several assets; answers one result per id and never fails as a whole.',
        body: MultiDeleteBody,
        response: withErrors({ 200: MultiDeleteResult }),
      },
    },
    (req) => assets.deleteAssets(ctx, req.principal.tenantId, req.body),
  );

  app.post(
    '/vod/v1/assets/:id/outputs',
    {
      config: write,
      schema: {
        tags,
        summary: 'Add output to VOD asset',
        description: 'Adds an output made with another preset (and overlays) to an existing asset.',
        params: s.AssetParams,
        body: s.OutputCreate,
        response: withErrors({ 200: Type.Object({ outputId: Type.String() }) }),
      },
    },
    (req) => assets.addOutput(ctx, req.principal.tenantId, req.params.id, req.body),
  );

  app.delete(
    '/vod/v1/assets/:id/outputs/:outputId',
    {
      config: write,
      schema: {
        tags,
        summary: 'Remove output from VOD asset',
        description: 'Removes one output of an asset and its stored files.',
        params: s.OutputParams,
        response: withErrors({ 200: NoBody }),
      },
    },
    async (req, reply) => {
      await assets.removeOutput(ctx, req.principal.tenantId, req.params.id, req.params.outputId);
      return reply.status(200).send();
    },
  );

  app.get(
    '/vod/v1/assets/:assetId/outputs/:outputId/progress',
    {
      config: read,
      schema: {
        tags,
        summary: 'Get VOD output progress',
        description: 'Answers how far the transcoding of one output has come, from 0 to 100.',
        params: s.ProgressParams,
        response: withErrors({ 200: s.Progress }),
      },
    },
    (req) => assets.outputProgress(db, req.principal.tenantId, req.params.assetId, req.params.outputId),
  );

  app.post(
    '/vod/v1/assets/outputs/progress',
    {
      config: read,
      schema: {
        tags,
        summary: 'Get multiple VOD output progress',
        description: 'Answers the transcoding progress of several outputs of several assets at once.',
        body: s.ProgressManyBody,
        response: withErrors({ 200: s.ProgressMany }),
      },
    },
    (req) => assets.outputsProgress(db, req.principal.tenantId, req.body),
  );
};
