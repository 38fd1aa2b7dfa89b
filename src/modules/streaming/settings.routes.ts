import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { PlatformContext } from '../../context.ts';
import { ROLES } from '../../platform/roles.ts';
import { withErrors } from '../../platform/schemas.ts';
import { AllowedDomain } from './domains.routes.ts';
import { getSettings, updateTenantSettings } from './settings.service.ts';

const Str = Type.Union([Type.String(), Type.Null()]);
const Int = Type.Union([Type.Integer(), Type.Null()]);
export const SettingState = Type.Union([Type.Literal('Enabled'), Type.Literal('Disabled')]);

const Settings = Type.Object({
  tenantId: Type.String(),
  tenantName: Str,
  playerEncryptedData: Type.String(),
  contentAcquisitionInfo: Type.Object({
    acquireContentUrl: Type.String(),
    sourceConfigUrl: Type.String(),
    authorization: Type.Object({
      tokenRequiredPolicy: Type.Boolean(),
      signingKey: Type.String(),
      signingKeyId: Type.String({ description: 'the `kid` to put in the header of a token signed with signingKey (not in the spec)' }),
      signingAlgorithm: Type.String(),
    }),
  }),
  licenseAcquisitionInfo: Type.Object({
    enabled: Type.Boolean(),
    authorization: Type.Object({ signingKey: Str, signingAlgorithm: Str }),
    endpoints: Type.Array(Type.Object({ licenseUrl: Type.String(), certificateUrl: Str, systemName: Type.String(), systemId: Type.String() })),
  }),
  mediaplanePlayerInfo: Type.Object({
    embedUrl: Type.String(),
    sourceConfigUrl: Type.String(),
    playerLicense: Type.Object({ key: Str, impressions: Int, maxImpressions: Int, id: Str }),
    analyticsLicense: Type.Object({ key: Str, impressions: Int, maxImpressions: Int }),
  }),
  capInfo: Type.Object({ enabled: Type.Boolean(), capUrl: Type.String(), signingKey: Type.String(), limit: Type.Integer() }),
  allowedDomains: Type.Array(AllowedDomain),
  playerConfigInfo: Type.Object({ devToolsAccess: Type.Boolean(), analytics: Type.Boolean(), codeObfuscation: Type.Boolean() }),
});

const SettingsPatch = Type.Object({
  tokenRequired: Type.Optional(SettingState),
  devToolsAccess: Type.Optional(SettingState),
  cap: Type.Optional(SettingState),
  analytics: Type.Optional(SettingState),
  codeObfuscation: Type.Optional(SettingState),
  capLimit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, description: 'simultaneous sessions per token (or viewer) when cap is Enabled' })),
});

export const settingsRoutes: FastifyPluginAsyncTypebox<{ ctx: PlatformContext }> = async (app, { ctx }) => {
  const tags = ['Streaming settings'];
  const manages = (roleType: keyof typeof ROLES) => ROLES[roleType].grants.includes('manage');

  app.get(
    '/streaming/v1/settings',
    {
      config: { access: 'read' },
      schema: {
        tags,
        summary: 'Get settings',
        description:
          "The tenant's player and playback settings: embed and source URLs, the playback token signing key (masked unless the key may manage the tenant), the defaults of the asset settings, allowed domains.",
        response: withErrors({ 200: Settings }),
      },
    },
    (req) => getSettings(ctx, req.principal.tenantId, manages(req.principal.roleType)),
  );

  app.patch(
    '/streaming/v1/settings',
    {
      config: { access: 'manage' },
      schema: {
        tags,
        summary: 'Update tenant streaming settings',
        description:
          'Sets the tenant defaults of the asset settings (`settings.*.tenant`, `tokenRequiredPolicy.tenant`) and the cap limit. Not in the spec: docs/decisions/streaming.md.',
        body: SettingsPatch,
        response: withErrors({ 200: Settings }),
      },
    },
    (req) => updateTenantSettings(ctx, req.principal.tenantId, req.body, true),
  );
};
