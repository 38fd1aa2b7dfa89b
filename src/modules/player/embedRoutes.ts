import { createReadStream } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { PlatformContext } from '../../context.ts';
import { ApiError } from '../../platform/errors.ts';
import { isOriginAllowed, originRefused, playbackSource } from '../streaming/index.ts';
import { EmbedQuery, PLAYER_FLAGS, type PlayerFlags } from './embedUrl.ts';
import { playerPage, refusalPage, webFile } from './page.ts';
import { SourceConfig } from './schemas.ts';
import { mediaResponse } from '../../platform/schemas.ts';

/** The player libraries, served from the installed npm packages (no CDN), and the page's own script. */
const LIBRARIES: Record<string, string> = {
  'hls.js': fileURLToPath(new URL('../../../node_modules/hls.js/dist/hls.min.js', import.meta.url)),
  'dash.js': fileURLToPath(new URL('../../../node_modules/dashjs/dist/modern/umd/dash.all.min.js', import.meta.url)),
  'player.js': webFile('player.js'),
};

/** How often a playing page reports the seconds it played. */
const HEARTBEAT_MS = 10_000;

const Html = mediaResponse('text/html', Type.String(), 'an HTML page');
const Params = Type.Object({
  tenantId: Type.String({ format: 'uuid' }),
  assetId: Type.String({ pattern: '^[a-zA-Z0-9_-]{1,128}$' }),
});
const SourceQuery = Type.Object({ token: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })) });
const PageQuery = Type.Object({
  ...EmbedQuery.properties,
  drmToken: Type.Optional(
    Type.String({ minLength: 1, maxLength: 4096, description: "The viewer's DRM token (`POST /drm/v1/tokens`), for DRM-protected assets" }),
  ),
});

/** `GET /player/v1/{tenantId}/{assetId}`: the page an `<iframe>` embeds (docs/decisions/player.md). */
export const embedRoutes: FastifyPluginAsyncTypebox<{ ctx: PlatformContext }> = async (app, { ctx }) => {
  app.get<{ Params: { file: string } }>('/player/v1/lib/:file', { schema: { hide: true } }, async (req, reply) => {
    const path = LIBRARIES[req.params.file];
    if (!path) throw new ApiError(404, 'route_not_found', `No player file ${req.params.file}`);
    return reply.type('text/javascript; charset=utf-8').header('cache-control', 'public, max-age=3600').send(createReadStream(path));
  });

  app.get(
    '/player/v1/:tenantId/:assetId',
    {
      schema: {
        tags: ['Player'],
        summary: 'Get embed page',
        description:
          'The HTML page that plays a streaming asset in an iframe (no API key), with the options Muted, Autoplay, TimeShift, Analytics; `token` for token-protected assets, `drmToken` for DRM-protected ones.',
        security: [],
        params: Params,
        querystring: PageQuery,
        response: { 200: Html, 400: Type.Ref('Error'), 403: Html, 404: Type.Ref('Error') },
      },
    },
    async (req, reply) => {
      const tenantId = req.params.tenantId.toLowerCase();
      const { assetId } = req.params;
      const { token, drmToken } = req.query;
      // An iframe's request names the embedding page in its Referer (the browser's default policy keeps its origin).
      const page = req.headers.referer;
      if (!(await isOriginAllowed(ctx, tenantId, page))) {
        return reply
          .status(403)
          .type('text/html; charset=utf-8')
          .header('cache-control', 'no-store')
          .send(refusalPage(originRefused(page).message));
      }
      const source = await playbackSource(ctx, tenantId, assetId, { token });
      const flags: PlayerFlags = {};
      for (const name of PLAYER_FLAGS) if (req.query[name] !== undefined) flags[name] = req.query[name];
      // Paths on the page's own origin, whatever name the viewer reached the platform by.
      const path = `/player/v1/${tenantId}/${assetId}`;
      const html = playerPage(
        {
          tenantId,
          assetId,
          sourceUrl: `${path}/source${token ? `?token=${encodeURIComponent(token)}` : ''}`,
          beaconUrl: `/player/v1/${tenantId}/beacons`,
          libUrl: '/player/v1/lib',
          heartbeatMs: HEARTBEAT_MS,
          flags,
          // The player sends it with key and license requests only (docs/decisions/player.md).
          ...(drmToken ? { drmToken } : {}),
        },
        source.title ?? 'Video',
      );
      return reply.type('text/html; charset=utf-8').header('cache-control', 'no-store').send(html);
    },
  );

  app.get(
    '/player/v1/:tenantId/:assetId/source',
    {
      schema: {
        tags: ['Player'],
        summary: 'Get player source config',
        description: 'What the embed player plays: manifest URLs (carrying the token given), poster, chapters, type and settings (no API key).',
        security: [],
        params: Params,
        querystring: SourceQuery,
        response: { 200: SourceConfig, 400: Type.Ref('Error'), 403: Type.Ref('Error'), 404: Type.Ref('Error') },
      },
    },
    async (req, reply) => {
      const tenantId = req.params.tenantId.toLowerCase();
      const page = req.headers.origin ?? req.headers.referer;
      if (!(await isOriginAllowed(ctx, tenantId, page))) throw originRefused(page);
      const source = await playbackSource(ctx, tenantId, req.params.assetId, { token: req.query.token });
      return reply.header('access-control-allow-origin', '*').header('cache-control', 'no-store').send(source);
    },
  );
};
