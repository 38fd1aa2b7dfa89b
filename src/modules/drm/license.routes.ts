import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { PlatformContext } from '../../context.ts';
import { bearerToken } from '../../platform/auth.ts';
import { ApiError } from '../../platform/errors.ts';
import { mediaResponse, withErrors } from '../../platform/schemas.ts';
import { CPIX_MAX_BYTES } from './cpix.ts';
import { issueLicense } from './license.ts';
import * as s from './schemas.ts';
import { answerSpeke } from './speke.ts';

/**
 * CORS of license answers. dash.js sends license requests with credentials, which a `*` origin does not satisfy: the
 * caller's origin is echoed. Safe, because nothing here reads cookies: the DRM token in the request is the credential.
 */
const cors = (req: FastifyRequest) => {
  const origin = req.headers.origin;
  return {
    'access-control-allow-origin': typeof origin === 'string' && origin.length <= 1024 ? origin : '*',
    'access-control-allow-credentials': 'true',
    'access-control-allow-methods': 'GET, POST, OPTIONS',
    'access-control-allow-headers': 'Authorization, Content-Type',
    'access-control-max-age': '86400',
    vary: 'Origin',
  };
};

const tokenOf = (req: FastifyRequest) => bearerToken(req.headers.authorization) ?? (req.query as { token?: string }).token;

const uuidOf = (b64url: string): string => {
  const hex = Buffer.from(b64url, 'base64url').toString('hex');
  return hex.length === 32 ? `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}` : b64url;
};

/**
 * The key server (SPEKE, tenant API key) and the license server (players, DRM token). License answers carry CORS
 * headers, refusals too, so that a player on any origin reads why it was refused.
 */
export const drmLicenseRoutes: FastifyPluginAsyncTypebox<{ ctx: PlatformContext }> = async (app, { ctx }) => {
  const tags = ['DRM'];
  // CPIX is XML; this scope reads XML bodies as text (the platform reads JSON only), up to a size that fits CPIX.
  app.addContentTypeParser(['application/xml', 'text/xml'], { parseAs: 'string', bodyLimit: CPIX_MAX_BYTES }, (_req, body, done) => done(null, body));

  const speke = (version: 1 | 2) =>
    app.post(
      `/drm/v1/speke/v${version}`,
      {
        config: { access: 'manage' },
        bodyLimit: CPIX_MAX_BYTES,
        schema: {
          tags,
          summary: version === 2 ? 'Get content keys (SPEKE 2.0, CPIX 2.3)' : 'Get content keys (SPEKE 1.0)',
          description:
            version === 2
              ? 'SPEKE 2.0: a CPIX 2.3 document asking for content keys of a contentId is answered with the keys and each DRM system filled (PSSH, ContentProtectionData, HLSSignalingData).'
              : 'SPEKE 1.0: a CPIX 2.0 document (id attribute) is answered with the keys, PSSH, ContentProtectionData and URIExtXKey.',
          consumes: ['application/xml', 'text/xml'],
          body: s.CpixBody,
          response: withErrors({ 200: mediaResponse('application/xml', s.CpixAnswer, 'the CPIX document with the keys') }),
        },
      },
      async (req, reply) => {
        const xml = await answerSpeke(ctx, req.principal.tenantId, req.body, version);
        reply.header('content-type', 'application/xml; charset=utf-8');
        if (version === 2) reply.header('x-speke-version', '2.0');
        return reply.send(xml);
      },
    );
  speke(2);
  speke(1);

  // Players add headers of their own to license requests (dash.js, Shaka): whatever the preflight asks for is allowed.
  app.options('/drm/v1/licenses/*', { schema: { hide: true } }, async (req, reply) => {
    const asked = req.headers['access-control-request-headers'];
    return reply
      .headers({ ...cors(req), ...(typeof asked === 'string' && /^[\w\s,-]{1,1024}$/.test(asked) ? { 'access-control-allow-headers': asked } : {}) })
      .status(204)
      .send();
  });

  const withCors = async (req: FastifyRequest, reply: FastifyReply, fn: () => Promise<unknown>) => {
    reply.headers(cors(req));
    return fn();
  };

  app.post(
    '/drm/v1/licenses/clearkey',
    {
      // hls.js posts the CDM's message as it is, with no Content-Type; the W3C ClearKey message is JSON: read it so.
      preParsing: async (req) => {
        if (req.headers['content-type'] === undefined) req.headers['content-type'] = 'application/json';
      },
      schema: {
        tags,
        summary: 'Get ClearKey license',
        description:
          'The W3C ClearKey license of DASH and HLS SAMPLE-AES outputs: EME license request JSON in (a body without Content-Type, as hls.js sends the CDM message, is read as JSON), JSON Web Key set out; needs a DRM token (Authorization: Bearer, or ?token=).',
        querystring: s.LicenseQuery,
        body: s.ClearKeyRequest,
        response: withErrors({ 200: s.ClearKeyLicense }),
      },
    },
    (req, reply) =>
      withCors(req, reply, async () => {
        const type = req.body.type ?? 'temporary';
        if (type !== 'temporary' && type !== 'persistent-license')
          throw new ApiError(400, 'validation_failed', 'type: must be temporary or persistent-license');
        const keyIds = req.body.kids.map(uuidOf);
        const { keys } = await issueLicense(ctx, { type: 'ClearKey', token: tokenOf(req), keyIds, persistent: type === 'persistent-license' });
        // In the order the request named them (the database's order is not the request's).
        const asked = (id: string) => {
          const i = keyIds.findIndex((k) => k.toLowerCase() === id.toLowerCase());
          return i < 0 ? keyIds.length : i;
        };
        keys.sort((a, b) => asked(a.keyId) - asked(b.keyId));
        const b64url = (b: Buffer) => b.toString('base64url');
        return { keys: keys.map((k) => ({ kty: 'oct' as const, kid: b64url(Buffer.from(k.keyId.replace(/-/g, ''), 'hex')), k: b64url(k.key) })), type };
      }),
  );

  app.get(
    '/drm/v1/licenses/aes128/:keyId',
    {
      schema: {
        tags,
        summary: 'Get AES-128 key',
        description: 'The key of HLS AES-128 outputs (16 raw bytes), the URI of their #EXT-X-KEY; needs a DRM token (Authorization: Bearer, or ?token=).',
        params: s.KeyParams,
        querystring: s.LicenseQuery,
        response: withErrors({ 200: mediaResponse('application/octet-stream', Type.Unsafe({ type: 'string', format: 'binary' }), 'the 16-byte key') }),
      },
    },
    (req, reply) =>
      withCors(req, reply, async () => {
        const { keys } = await issueLicense(ctx, { type: 'Aes128', token: tokenOf(req), keyIds: [req.params.keyId] });
        return reply.header('content-type', 'application/octet-stream').header('cache-control', 'no-store').send(keys[0].key);
      }),
  );
};
