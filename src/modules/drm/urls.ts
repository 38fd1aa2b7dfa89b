import type { PlatformContext } from '../../context.ts';

/** Where players fetch keys and licenses: on the platform's public URL, the token in the request (not the URL). */
export const clearKeyLicenseUrl = (ctx: PlatformContext) => `${ctx.config.publicUrl.origin}/drm/v1/licenses/clearkey`;

export const licenseUrls = (ctx: PlatformContext, keyId: string) => ({
  aes128KeyUrl: `${ctx.config.publicUrl.origin}/drm/v1/licenses/aes128/${keyId}`,
  clearKeyLicenseUrl: clearKeyLicenseUrl(ctx),
});
