import { and, countDistinct, eq, gte, min, ne } from 'drizzle-orm';
import type { PlatformContext } from '../../context.ts';
import { ApiError } from '../../platform/errors.ts';
import type { ErrorCode } from '../../platform/errorCodes.ts';
import { isUuid } from '../../platform/ids.ts';
import { keysById, type ContentKey } from './keys.ts';
import { BUILT_IN_POLICY, getSettings, type LicenseType, type PolicyFields } from './policies.ts';
import { drmLicenseLog, drmPolicies } from './tables.ts';
import { TokenRefused, verifyToken, type DrmClaims } from './tokens.ts';

export interface LicenseRequest {
  type: LicenseType;
  token: string | undefined;
  keyIds: string[];
  /** ClearKey `persistent-license` sessions. */
  persistent?: boolean;
}

const refuse = (code: ErrorCode, message: string) => new ApiError(403, code, message);

async function policyOf(ctx: PlatformContext, claims: DrmClaims): Promise<PolicyFields & { id: string | null }> {
  const id = claims.policyId ?? (await getSettings(ctx.db, claims.tenantId)).defaultPolicyId;
  if (!id) return BUILT_IN_POLICY;
  const [row] = await ctx.db
    .select()
    .from(drmPolicies)
    .where(and(eq(drmPolicies.tenantId, claims.tenantId), eq(drmPolicies.id, id)));
  if (!row) throw refuse('drm_policy_not_found', 'The policy of this DRM token no longer exists');
  return { ...row, allowedOutputs: row.allowedOutputs as LicenseType[] };
}

const viewer = (claims: DrmClaims) => (claims.userId === null ? eq(drmLicenseLog.tokenId, claims.tokenId) : eq(drmLicenseLog.userId, claims.userId));

/** The policy's rules that depend on what was licensed before, read from the license log. */
async function checkPolicy(ctx: PlatformContext, claims: DrmClaims, policy: PolicyFields, req: LicenseRequest): Promise<void> {
  if (!policy.allowedOutputs.includes(req.type)) throw refuse('drm_output_not_allowed', `The policy does not allow ${req.type} licenses`);
  if (req.persistent && !policy.persistent) throw refuse('drm_persistence_not_allowed', 'The policy does not allow persistent licenses');
  const granted = and(eq(drmLicenseLog.tenantId, claims.tenantId), eq(drmLicenseLog.granted, true));
  const now = Date.now();
  if (policy.rentalWindowSeconds !== null) {
    const [{ first }] = await ctx.db
      .select({ first: min(drmLicenseLog.time) })
      .from(drmLicenseLog)
      .where(and(granted, eq(drmLicenseLog.contentId, claims.contentId), viewer(claims)));
    if (first && now > first.getTime() + policy.rentalWindowSeconds * 1000) throw refuse('drm_rental_expired', 'The rental window has ended');
  }
  if (policy.playbackDurationSeconds !== null) {
    const [{ first }] = await ctx.db
      .select({ first: min(drmLicenseLog.time) })
      .from(drmLicenseLog)
      .where(and(granted, eq(drmLicenseLog.tokenId, claims.tokenId)));
    if (first && now > first.getTime() + policy.playbackDurationSeconds * 1000) throw refuse('drm_playback_expired', 'The playback duration has ended');
  }
  if (policy.concurrentStreams !== null && claims.userId !== null) {
    // A stream is a token that obtained a license within the license duration; this token's own renewals are free.
    const [{ streams }] = await ctx.db
      .select({ streams: countDistinct(drmLicenseLog.tokenId) })
      .from(drmLicenseLog)
      .where(
        and(
          granted,
          eq(drmLicenseLog.userId, claims.userId),
          ne(drmLicenseLog.tokenId, claims.tokenId),
          gte(drmLicenseLog.time, new Date(now - policy.licenseDurationSeconds * 1000)),
        ),
      );
    if (streams >= policy.concurrentStreams) throw refuse('drm_concurrent_streams_exceeded', `The policy allows ${policy.concurrentStreams} streams at once`);
  }
}

/**
 * Checks a license request against its token and policy and answers the keys; every request, granted or refused, is
 * written to the license log (when the token names a tenant we can trust: its signature is good).
 */
export async function issueLicense(ctx: PlatformContext, req: LicenseRequest): Promise<{ keys: ContentKey[]; claims: DrmClaims; persistent: boolean }> {
  let claims: DrmClaims | undefined;
  let policyId: string | null = null;
  try {
    claims = await verifyToken(ctx, req.token);
    const policy = await policyOf(ctx, claims);
    policyId = policy.id;
    await checkPolicy(ctx, claims, policy, req);
    const asked = [...new Set(req.keyIds.map((k) => k.toLowerCase()))];
    const ids = asked.filter(isUuid);
    const keys = (await keysById(ctx, claims.tenantId, ids)).filter((k) => k.contentId === claims!.contentId);
    if (keys.length === 0 || keys.length !== asked.length) {
      throw refuse('drm_key_not_allowed', 'The DRM token does not grant the requested key ids');
    }
    await log(ctx, claims, req, policyId, 200, null);
    return { keys, claims, persistent: Boolean(req.persistent) };
  } catch (e) {
    const c = claims ?? (e instanceof TokenRefused ? e.claims : undefined);
    if (c && e instanceof ApiError) await log(ctx, c, req, policyId, e.httpStatus, e.code);
    throw e;
  }
}

async function log(ctx: PlatformContext, c: DrmClaims, req: LicenseRequest, policyId: string | null, httpStatus: number, errorCode: string | null) {
  const row = {
    tenantId: c.tenantId,
    type: req.type,
    contentId: c.contentId,
    keyIds: req.keyIds.slice(0, 16).map((k) => k.slice(0, 64)),
    policyId,
    userId: c.userId,
    tokenId: c.tokenId,
    granted: errorCode === null,
    errorCode,
    httpStatus,
  };
  // The answer does not wait on the log's fate: a tenant deleted meanwhile has nothing left to count.
  await ctx.db
    .insert(drmLicenseLog)
    .values(row)
    .catch((e: Error) => ctx.log.warn({ err: e.message }, 'license log write failed'));
}
