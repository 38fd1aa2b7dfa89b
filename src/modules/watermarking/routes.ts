import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { PlatformContext } from '../../context.ts';
import { withErrors } from '../../platform/schemas.ts';
import * as assets from './assets.service.ts';
import * as s from './schemas.ts';
import * as sessions from './sessions.service.ts';
import * as settings from './settings.service.ts';

/** Prepared assets, settings, sessions and redirector tokens. */
export const watermarkingRoutes: FastifyPluginAsyncTypebox<{ ctx: PlatformContext }> = async (app, { ctx }) => {
  const tags = ['Watermarking'];
  const conflict = { 409: Type.Ref('Error') };

  app.post(
    '/watermarking/v1/assets',
    {
      config: { access: 'write' },
      schema: {
        tags,
        summary: 'Create watermarking asset',
        description:
          "Prepares a VOD asset's source for A/B watermarking: two variants of every segment, differing by an invisible mark. The asset must hold one whole code word: (userNumberBits + 8 CRC bits) × segmentDuration seconds at the tenant's settings (48 s with the defaults), or the answer is 400 watermarking_asset_too_short.",
        body: s.AssetCreate,
        response: withErrors({ 200: s.AssetCreated }),
      },
    },
    (req) => assets.createPreparedAsset(ctx, req.principal.tenantId, req.body),
  );

  app.get(
    '/watermarking/v1/assets',
    {
      config: { access: 'read' },
      schema: {
        tags,
        summary: 'List watermarking assets',
        description: "Lists the tenant's prepared assets with paging, a date range and text search in the metadata.",
        querystring: s.AssetListQuery,
        response: withErrors({ 200: s.AssetList }),
      },
    },
    (req) => assets.listPreparedAssets(ctx.db, req.principal.tenantId, req.query),
  );

  app.get(
    '/watermarking/v1/assets/:id',
    {
      config: { access: 'read' },
      schema: {
        tags,
        summary: 'Get watermarking asset',
        description: 'Reads one prepared asset with its preparation status.',
        params: s.IdParams,
        response: withErrors({ 200: s.Asset }),
      },
    },
    (req) => assets.getPreparedAsset(ctx.db, req.principal.tenantId, req.params.id),
  );

  app.get(
    '/watermarking/v1/settings',
    {
      config: { access: 'read' },
      schema: {
        tags,
        summary: 'Get watermarking settings',
        description: "The tenant's code length, segment duration, mark strength, token lifetime and detection threshold.",
        response: withErrors({ 200: s.Settings }),
      },
    },
    (req) => settings.getSettings(ctx.db, req.principal.tenantId),
  );

  app.patch(
    '/watermarking/v1/settings',
    {
      config: { access: 'manage' },
      schema: {
        tags,
        summary: 'Update watermarking settings',
        description: 'Changes some settings; assets prepared before keep the code and pattern they were prepared with.',
        body: s.SettingsPatch,
        response: withErrors({ 200: s.Settings }),
      },
    },
    (req) => settings.updateSettings(ctx, req.principal.tenantId, req.body),
  );

  app.post(
    '/watermarking/v1/redirector/token',
    {
      config: { access: 'write' },
      schema: {
        tags,
        summary: 'Create redirector token',
        description: 'Opens (or reuses) the session of a user number on a prepared asset and answers a signed token and the playlist URL that plays it.',
        body: s.TokenCreate,
        response: withErrors({ 200: s.TokenCreated, ...conflict }),
      },
    },
    (req) => sessions.createRedirectorToken(ctx, req.principal.tenantId, req.body),
  );

  app.get(
    '/watermarking/v1/sessions',
    {
      config: { access: 'read' },
      schema: {
        tags,
        summary: 'List watermarking sessions',
        description: "Lists the tenant's playback sessions, by asset, user number or revocation.",
        querystring: s.SessionListQuery,
        response: withErrors({ 200: s.SessionList }),
      },
    },
    (req) => sessions.listSessions(ctx.db, req.principal.tenantId, req.query),
  );

  app.get(
    '/watermarking/v1/sessions/:id',
    {
      config: { access: 'read' },
      schema: {
        tags,
        summary: 'Get watermarking session',
        description: 'Reads one playback session.',
        params: s.IdParams,
        response: withErrors({ 200: s.Session }),
      },
    },
    (req) => sessions.getSession(ctx.db, req.principal.tenantId, req.params.id),
  );

  for (const [verb, revoked] of [
    ['revoke', true],
    ['unrevoke', false],
  ] as const) {
    app.post(
      `/watermarking/v1/sessions/:id/${verb}`,
      {
        config: { access: 'write' },
        schema: {
          tags,
          summary: revoked ? 'Revoke watermarking session' : 'Unrevoke watermarking session',
          description: revoked
            ? 'Stops the session at once: its tokens are refused from the next request on, and it gets no new token.'
            : 'Lets a revoked session play again with its tokens.',
          params: s.IdParams,
          response: withErrors({ 200: s.Session }),
        },
      },
      (req) => sessions.setRevoked(ctx, req.principal.tenantId, req.params.id, revoked),
    );
  }
};
