import { eq } from 'drizzle-orm';
import { SignJWT } from 'jose';
import type { PlatformContext } from '../../context.ts';
import { tenants } from '../../db/tenants.ts';
import { SYSTEM_IDS } from '../../media/protect.ts';
import { clearKeyLicenseUrl } from '../drm/index.ts';
import { listDomains } from './domains.ts';
import { embedUrl } from './playback.ts';
import { forgetPolicies, signingKeyId, tenantSettings, tenantState } from './settings.ts';
import type { SettingName, SettingState } from './tables.ts';
import { streamingTenantSettings } from './tables.ts';

/** A secret as a caller without the `manage` grant sees it. */
export const MASK = '********';
export const SIGNING_ALGORITHM = 'HS256';
/** The settings key of our player's information (the spec's `<player_vendor>PlayerInfo`). */
export const PLAYER_INFO_KEY = 'mediaplanePlayerInfo';

/**
 * `GET /streaming/v1/settings` (spec part 2, "Get settings"). The signing key is shown to callers that may manage the
 * tenant (Admin keys) and masked for the others: whoever holds it can mint playback tokens.
 */
export async function getSettings(ctx: PlatformContext, tenantId: string, showSecrets: boolean) {
  const [settings, [tenant], allowedDomains] = await Promise.all([
    tenantSettings(ctx.db, tenantId),
    ctx.db.select({ name: tenants.name }).from(tenants).where(eq(tenants.id, tenantId)),
    listDomains(ctx, tenantId),
  ]);
  const key = showSecrets ? settings.signingKey : MASK;
  const enabled = (name: SettingName) => tenantState(settings.defaults, name) === 'Enabled';
  const player = embedUrl(ctx, tenantId);
  const sourceConfigUrl = `${player}/{assetId}/source`;
  const playerConfigInfo = { devToolsAccess: enabled('devToolsAccess'), analytics: enabled('analytics'), codeObfuscation: enabled('codeObfuscation') };
  return {
    tenantId,
    tenantName: tenant?.name ?? null,
    // The player configuration, signed with the tenant key so that a player can trust it came from the platform.
    playerEncryptedData: await new SignJWT({ tenantId, embedUrl: player, playerConfigInfo })
      .setProtectedHeader({ alg: SIGNING_ALGORITHM })
      .setIssuedAt()
      .sign(new TextEncoder().encode(settings.signingKey)),
    contentAcquisitionInfo: {
      acquireContentUrl: sourceConfigUrl,
      sourceConfigUrl,
      authorization: {
        tokenRequiredPolicy: enabled('tokenRequired'),
        signingKey: key,
        signingKeyId: signingKeyId(settings.signingKey),
        signingAlgorithm: SIGNING_ALGORITHM,
      },
    },
    // The DRM module's license server: ClearKey licenses (and AES-128 keys, whose URL each HLS playlist names) for a DRM
    // token from `get DRM token`, which the platform signs: no tenant key to show. Widevine and PlayReady licenses are
    // issued by those vendors' services, not here.
    licenseAcquisitionInfo: {
      enabled: true,
      authorization: { signingKey: null, signingAlgorithm: SIGNING_ALGORITHM },
      endpoints: [{ licenseUrl: clearKeyLicenseUrl(ctx), certificateUrl: null, systemName: 'ClearKey', systemId: SYSTEM_IDS.clearKey }],
    },
    [PLAYER_INFO_KEY]: {
      embedUrl: player,
      sourceConfigUrl,
      // The player is open source and served by the platform itself: no license, no impression quota.
      playerLicense: { key: null, impressions: null, maxImpressions: null, id: null },
      analyticsLicense: { key: null, impressions: null, maxImpressions: null },
    },
    capInfo: { enabled: enabled('cap'), capUrl: `${ctx.config.publicUrl.origin}/media/`, signingKey: key, limit: settings.capLimit },
    allowedDomains,
    playerConfigInfo,
  };
}

/** `PATCH /streaming/v1/settings` (not in the spec; docs/decisions/streaming.md): the tenant defaults and the cap limit. */
export async function updateTenantSettings(
  ctx: PlatformContext,
  tenantId: string,
  patch: Partial<Record<SettingName, SettingState>> & { capLimit?: number },
  showSecrets: boolean,
) {
  const current = await tenantSettings(ctx.db, tenantId);
  const { capLimit, ...states } = patch;
  await ctx.db
    .update(streamingTenantSettings)
    .set({ defaults: { ...current.defaults, ...states }, ...(capLimit !== undefined ? { capLimit } : {}), lastModificationDate: new Date() })
    .where(eq(streamingTenantSettings.tenantId, tenantId));
  forgetPolicies(tenantId);
  return getSettings(ctx, tenantId, showSecrets);
}
