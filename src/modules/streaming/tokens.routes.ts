import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { PlatformContext } from '../../context.ts';
import { DateTime, withErrors } from '../../platform/schemas.ts';
import { createPlaybackToken, DEFAULT_TOKEN_SECONDS, rotatePlaybackKey } from './playbackTokens.ts';
import { DEFAULT_KEY_OVERLAP_SECONDS, MAX_KEY_OVERLAP_SECONDS } from './settings.ts';

const Url = Type.Union([Type.String(), Type.Null()]);

const TokenRequest = Type.Object({
  assetId: Type.String({ pattern: '^[a-zA-Z0-9_-]{1,128}$', description: 'the streaming asset: a VOD asset, live channel, live event or recording' }),
  expiresInSeconds: Type.Optional(Type.Integer({ minimum: 10, maximum: 86400, description: `lifetime of the token (default ${DEFAULT_TOKEN_SECONDS})` })),
  sessionId: Type.Optional(Type.String({ minLength: 1, maxLength: 256, description: 'the viewing session (`sid`): what cap counts as one session' })),
  viewerId: Type.Optional(
    Type.String({ minLength: 1, maxLength: 256, description: "the viewer (`vid`): cap then counts the viewer's sessions across all of its tokens" }),
  ),
});
const TokenResponse = Type.Object({
  token: Type.String({ description: 'the JWT (HS256): header kid; claims sub, exp, iat, and sid, vid when given' }),
  keyId: Type.String({ description: 'the kid of the key that signed it' }),
  assetId: Type.String(),
  expirationDate: DateTime,
  hlsUrl: Type.Union([Type.String(), Type.Null()], { description: 'the HLS manifest, the token in its path (segments carry it); null without HLS' }),
  dashUrl: Type.Union([Type.String(), Type.Null()], { description: 'the DASH MPD, the token in its path; null without DASH' }),
  embedUrl: Type.String({ description: 'the embed player page with the token: an iframe src' }),
  sourceConfigUrl: Type.String({ description: "the embed player's source config with the token" }),
});
const RotateRequest = Type.Object({
  overlapSeconds: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: MAX_KEY_OVERLAP_SECONDS,
      description: `how long the replaced key still verifies tokens (default ${DEFAULT_KEY_OVERLAP_SECONDS}, 24 h; 0 ends it at once)`,
    }),
  ),
});
const Rotated = Type.Object({
  signingKey: Type.String({ description: 'the new key; tokens are signed with it from now on' }),
  signingKeyId: Type.String({ description: 'its kid' }),
  previousSigningKeyId: Url,
  previousSigningKeyExpirationDate: Type.Union([DateTime, Type.Null()], {
    description: 'until then tokens of the replaced key play too; null without overlap',
  }),
});

/** Playback tokens (docs/decisions/streaming.md, "Playback tokens"): not in the spec, in the style of `POST /drm/v1/tokens`. */
export const tokenRoutes: FastifyPluginAsyncTypebox<{ ctx: PlatformContext }> = async (app, { ctx }) => {
  app.post(
    '/streaming/v1/tokens',
    {
      config: { access: 'write' },
      schema: {
        tags: ['Streaming assets'],
        summary: 'Create playback token',
        description:
          'A playback token for one streaming asset (needed when tokenRequired applies), signed with the tenant signing key, and the URLs that play with it: HLS, DASH, the embed page and its source config. Not in the spec: docs/decisions/streaming.md.',
        body: TokenRequest,
        response: withErrors({ 200: TokenResponse }),
      },
    },
    (req) => createPlaybackToken(ctx, req.principal.tenantId, req.body),
  );

  app.post(
    '/streaming/v1/settings/signing-key/rotate',
    {
      config: { access: 'manage' },
      // The body is optional: without one, the default overlap applies.
      preValidation: async (req) => void (req.body ??= {}),
      schema: {
        tags: ['Streaming settings'],
        summary: 'Rotate playback signing key',
        description:
          'Replaces the playback token signing key and answers the new one with its kid; during the overlap, tokens signed with the replaced key still play. Not in the spec: docs/decisions/streaming.md.',
        body: RotateRequest,
        response: withErrors({ 200: Rotated }),
      },
    },
    (req) => rotatePlaybackKey(ctx, req.principal.tenantId, req.body.overlapSeconds ?? DEFAULT_KEY_OVERLAP_SECONDS),
  );
};
