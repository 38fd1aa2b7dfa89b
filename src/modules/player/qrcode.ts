import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import QRCode from 'qrcode';
import { Type } from 'typebox';
import type { PlatformContext } from '../../context.ts';
import { mediaResponse, withErrors } from '../../platform/schemas.ts';
import { checkGivenToken, requirePlayable } from '../streaming/index.ts';
import { EmbedQuery, embedUrlOf } from './embedUrl.ts';

const Png = mediaResponse('image/png', Type.Unsafe<Buffer>({ type: 'string', format: 'binary' }), 'a PNG image of the QR code');

/** `GET /streaming/v1/qrcode/{id}`: a PNG of the asset's embed URL, so that a phone opens the player. */
export const qrCodeRoutes: FastifyPluginAsyncTypebox<{ ctx: PlatformContext }> = async (app, { ctx }) => {
  app.get(
    '/streaming/v1/qrcode/:id',
    {
      config: { access: 'read' },
      schema: {
        tags: ['Streaming'],
        summary: 'Generate QR code',
        description:
          "A PNG QR code of the asset's embed URL, with the boolean options given as its query, and `token` (not in the spec): a playback token of the asset carried by the URL, for an asset that needs one (400 naming `token` when it would be refused). 404 for an asset the tenant does not have.",
        params: Type.Object({ id: Type.String({ pattern: '^[a-zA-Z0-9_-]{1,128}$' }) }),
        querystring: EmbedQuery,
        response: withErrors({ 200: Png }),
      },
    },
    async (req, reply) => {
      // A code of an asset the tenant does not have (another tenant's) would open a page that says so: refused here.
      const asset = await requirePlayable(ctx, req.principal.tenantId, req.params.id);
      const { token, ...flags } = req.query;
      if (token) await checkGivenToken(ctx, req.principal.tenantId, asset.id, token);
      const url = embedUrlOf(ctx.config.publicUrl, req.principal.tenantId, asset.id, flags, token);
      // Medium error correction: a screen or a print with a smudge still scans; 8 px modules are sharp on any screen.
      const png = await QRCode.toBuffer(url, { type: 'png', errorCorrectionLevel: 'M', scale: 8, margin: 4 });
      return reply.type('image/png').header('cache-control', 'private, max-age=3600').send(png);
    },
  );
};
