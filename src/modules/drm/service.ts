import { createHmac, X509Certificate } from 'node:crypto';
import { eq } from 'drizzle-orm';
import type { PlatformContext } from '../../context.ts';
import type { OutputEncryption } from '../../media/protect.ts';
import { ApiError, notFound, validationError } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import { recordEvent } from '../../platform/events.ts';
import { DRM_SYSTEMS, systemIdOf, systemSignal, type DrmSystemName } from './drmSystems.ts';
import { CONTENT_ID, contentKeysFor, keysFor, type DrmKeyMode } from './keys.ts';
import { drmSettings } from './tables.ts';
import { licenseUrls } from './urls.ts';

/**
 * What other modules use: the keys of a protected output. SingleKey mode: every track of a content (a VOD asset, a
 * live channel) is encrypted with the content's one key, created on first use; AudioVideoKeys: the audio tracks with
 * a second key.
 */
export async function outputEncryption(
  ctx: PlatformContext,
  tenantId: string,
  contentId: string,
  scheme: OutputEncryption['scheme'],
  mode: DrmKeyMode = 'SingleKey',
): Promise<OutputEncryption> {
  const keys = await contentKeysFor(ctx, tenantId, contentId, mode);
  const of = ({ keyId, key }: { keyId: string; key: Buffer }) => {
    const urls = licenseUrls(ctx, keyId);
    return { key, keyId, keyUrl: scheme === 'aes-128' ? urls.aes128KeyUrl : urls.clearKeyLicenseUrl, iv: scheme === 'cbcs' ? constantIvOf(key) : undefined };
  };
  return { scheme, ...of(keys.video), ...(keys.audio ? { audio: of(keys.audio) } : {}) };
}

/**
 * The cbcs constant IV of a key: derived from it, so that every pipeline of a live channel (restarts, takeovers: the
 * init segments, whose `tenc` carries the IV, are published again byte for byte) and every output of an asset agree
 * without storing it. Unpredictable without the key; cbcs needs no more of a constant IV than that.
 */
export const constantIvOf = (key: Buffer): Buffer => createHmac('sha256', key).update('mediaplane cbcs constant IV').digest().subarray(0, 16);

export interface AneviaKeyRequest {
  contentId: string;
  keyIds?: string[];
  count?: number;
  drmSystems?: DrmSystemName[];
  commonEncryptionScheme?: 'cenc' | 'cbcs';
}

/**
 * The Anevia-style key request: plain JSON for packagers that do not speak CPIX. Asks for the keys of a content id,
 * by key id (existing or new) or by count (new ids), with the signalling of each DRM system asked for.
 */
export async function aneviaKeys(ctx: PlatformContext, tenantId: string, body: AneviaKeyRequest) {
  if (!CONTENT_ID.test(body.contentId)) throw validationError('contentId', 'must be 1 to 256 printable ASCII characters');
  if (body.keyIds && body.count !== undefined) throw validationError('count', 'give keyIds or count, not both');
  const keyIds = body.keyIds ?? Array.from({ length: body.count ?? 1 }, () => newId());
  const keys = await keysFor(ctx, tenantId, body.contentId, keyIds);
  const systems = body.drmSystems ?? (Object.values(DRM_SYSTEMS) as DrmSystemName[]);
  const scheme = body.commonEncryptionScheme ?? 'cenc';
  return {
    contentId: body.contentId,
    keys: keys.map((k) => {
      const urls = licenseUrls(ctx, k.keyId);
      return {
        keyId: k.keyId,
        key: k.key.toString('base64'),
        keyHex: k.key.toString('hex'),
        aes128KeyUrl: urls.aes128KeyUrl,
        clearKeyLicenseUrl: urls.clearKeyLicenseUrl,
        drmSystems: systems.map((name) => {
          const s = systemSignal(systemIdOf(name), k.keyId, body.contentId, scheme, urls)!;
          return { systemId: s.systemId, name: s.name, pssh: s.pssh, contentProtectionData: s.contentProtectionData, hlsSignalingData: s.hlsSignalingData };
        }),
      };
    }),
  };
}

function describeCertificate(pem: string) {
  const c = new X509Certificate(pem);
  return {
    certificate: c.toString(),
    subject: c.subject,
    issuer: c.issuer,
    validFrom: new Date(c.validFrom).toISOString(),
    validTo: new Date(c.validTo).toISOString(),
    fingerprint256: c.fingerprint256,
  };
}

/** The DRM certificate: the packager certificate SPEKE answers are encrypted to; once set, keys never leave in clear. */
export async function getCertificate(ctx: PlatformContext, tenantId: string) {
  const [row] = await ctx.db.select({ certificate: drmSettings.certificate }).from(drmSettings).where(eq(drmSettings.tenantId, tenantId));
  if (!row?.certificate) throw notFound('drm_certificate_not_found', 'DRM certificate of tenant', tenantId);
  return describeCertificate(row.certificate);
}

export async function putCertificate(ctx: PlatformContext, tenantId: string, pem: string | null) {
  if (pem !== null) {
    let c: X509Certificate;
    try {
      c = new X509Certificate(pem);
    } catch {
      throw validationError('certificate', 'must be an X.509 certificate in PEM');
    }
    if (c.publicKey.asymmetricKeyType !== 'rsa')
      throw validationError('certificate', 'must hold an RSA public key (CPIX encrypts the document key with RSA-OAEP)');
    if (new Date(c.validTo) < new Date()) throw new ApiError(400, 'drm_certificate_expired', 'The certificate has expired');
  }
  await ctx.db.transaction(async (tx) => {
    const set = { certificate: pem, lastModificationDate: new Date() };
    await tx
      .insert(drmSettings)
      .values({ tenantId, ...set })
      .onConflictDoUpdate({ target: drmSettings.tenantId, set });
    await recordEvent(tx, tenantId, 'drm.settings.updated', { id: tenantId, certificate: pem === null ? 'removed' : 'set' });
  });
  return pem === null ? null : describeCertificate(pem);
}
