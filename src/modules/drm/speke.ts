import { constants, createCipheriv, createHmac, publicEncrypt, randomBytes, X509Certificate } from 'node:crypto';
import { eq } from 'drizzle-orm';
import type { PlatformContext } from '../../context.ts';
import { ApiError } from '../../platform/errors.ts';
import { parseCpix, type CpixRequest } from './cpix.ts';
import { systemSignal } from './drmSystems.ts';
import { keysFor, type ContentKey } from './keys.ts';
import { drmSettings } from './tables.ts';
import { licenseUrls } from './urls.ts';

const esc = (v: string) => v.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');

const NS: Record<string, string> = {
  'xmlns:cpix': 'urn:dashif:org:cpix',
  'xmlns:pskc': 'urn:ietf:params:xml:ns:keyprov:pskc',
  'xmlns:speke': 'urn:aws:amazon:com:speke',
  'xmlns:ds': 'http://www.w3.org/2000/09/xmldsig#',
  'xmlns:enc': 'http://www.w3.org/2001/04/xmlenc#',
};
const AES256_CBC = 'http://www.w3.org/2001/04/xmlenc#aes256-cbc';

/** Encrypted key delivery (CPIX 2.3 §4): a document key for the recipient's RSA key, keys under it, each with a MAC. */
interface Delivery {
  certificate: string;
  documentKey: Buffer;
  macKey: Buffer;
}

function delivery(certificateB64: string): Delivery {
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(Buffer.from(certificateB64, 'base64'));
  } catch {
    throw new ApiError(400, 'cpix_malformed', 'DeliveryKey X509Certificate is not a DER certificate');
  }
  if (cert.publicKey.asymmetricKeyType !== 'rsa') throw new ApiError(400, 'cpix_malformed', 'DeliveryKey must be an RSA certificate');
  return { certificate: certificateB64, documentKey: randomBytes(32), macKey: randomBytes(64) };
}

const aesCbc = (key: Buffer, data: Buffer) => {
  const iv = randomBytes(16);
  const c = createCipheriv('aes-256-cbc', key, iv);
  return Buffer.concat([iv, c.update(data), c.final()]);
};

const encryptedValue = (cipher: Buffer, algorithm = AES256_CBC) =>
  `<pskc:EncryptedValue><enc:EncryptionMethod Algorithm="${algorithm}"/><enc:CipherData><enc:CipherValue>${cipher.toString('base64')}</enc:CipherValue></enc:CipherData></pskc:EncryptedValue>`;

function keyData(key: Buffer, d: Delivery | undefined): string {
  if (!d) return `<pskc:Secret><pskc:PlainValue>${key.toString('base64')}</pskc:PlainValue></pskc:Secret>`;
  const cipher = aesCbc(d.documentKey, key);
  const mac = createHmac('sha512', d.macKey).update(cipher).digest('base64');
  return `<pskc:Secret>${encryptedValue(cipher)}<pskc:ValueMAC>${mac}</pskc:ValueMAC></pskc:Secret>`;
}

function deliveryList(d: Delivery): string {
  const cert = new X509Certificate(Buffer.from(d.certificate, 'base64'));
  const docKey = publicEncrypt({ key: cert.publicKey, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha1' }, d.documentKey);
  return (
    `<cpix:DeliveryDataList><cpix:DeliveryData><cpix:DeliveryKey><ds:X509Data><ds:X509Certificate>${d.certificate}</ds:X509Certificate></ds:X509Data></cpix:DeliveryKey>` +
    `<cpix:DocumentKey Algorithm="${AES256_CBC}"><cpix:Data><pskc:Secret>${encryptedValue(docKey, 'http://www.w3.org/2001/04/xmlenc#rsa-oaep-mgf1p')}</pskc:Secret></cpix:Data></cpix:DocumentKey>` +
    `<cpix:MACMethod Algorithm="http://www.w3.org/2001/04/xmldsig-more#hmac-sha512"><cpix:Key>${encryptedValue(aesCbc(d.documentKey, d.macKey))}</cpix:Key></cpix:MACMethod>` +
    `</cpix:DeliveryData></cpix:DeliveryDataList>`
  );
}

/** The tenant's DRM certificate, when set, is the only recipient SPEKE answers go to (encrypted). */
async function checkRecipient(ctx: PlatformContext, tenantId: string, req: CpixRequest): Promise<void> {
  const [row] = await ctx.db.select({ certificate: drmSettings.certificate }).from(drmSettings).where(eq(drmSettings.tenantId, tenantId));
  if (!row?.certificate) return;
  if (!req.deliveryCertificate) throw new ApiError(403, 'drm_encrypted_delivery_required', "The tenant's DRM certificate is set: ask for keys encrypted to it");
  const pinned = new X509Certificate(row.certificate).fingerprint256;
  if (new X509Certificate(Buffer.from(req.deliveryCertificate, 'base64')).fingerprint256 !== pinned) {
    throw new ApiError(403, 'drm_certificate_mismatch', "DeliveryKey is not the tenant's DRM certificate");
  }
}

/**
 * Answers a SPEKE request: the same CPIX document with every ContentKey's key (clear, or encrypted when the request
 * carries DeliveryData) and every DRMSystem filled for its key. `speke` 2 answers CPIX 2.3 (ContentProtectionData,
 * HLSSignalingData), 1 answers CPIX 2.0 as SPEKE 1.0 does (URIExtXKey, KeyFormat, ProtectionHeader).
 */
export async function answerSpeke(ctx: PlatformContext, tenantId: string, xml: string, speke: 1 | 2): Promise<string> {
  const req = parseCpix(xml);
  // The certificate is read (a 400 when it is not one) before it is compared with the tenant's.
  const d = req.deliveryCertificate ? delivery(req.deliveryCertificate) : undefined;
  await checkRecipient(ctx, tenantId, req);
  const keys = await keysFor(
    ctx,
    tenantId,
    req.contentId,
    req.contentKeys.map((k) => k.kid),
  );
  const byKid = new Map<string, ContentKey>(keys.map((k) => [k.keyId, k]));
  const urls = (keyId: string) => licenseUrls(ctx, keyId);
  const contentKeys = req.contentKeys.map((k) => {
    const key = byKid.get(k.kid.toLowerCase())!;
    const attrs = [`kid="${esc(k.kid)}"`];
    if (k.commonEncryptionScheme) attrs.push(`commonEncryptionScheme="${esc(k.commonEncryptionScheme)}"`);
    if (k.explicitIV) attrs.push(`explicitIV="${esc(k.explicitIV)}"`);
    return `<cpix:ContentKey ${attrs.join(' ')}><cpix:Data>${keyData(key.key, d)}</cpix:Data></cpix:ContentKey>`;
  });
  const schemeOf = (kid: string) => req.contentKeys.find((k) => k.kid.toLowerCase() === kid.toLowerCase())?.commonEncryptionScheme ?? 'cenc';
  const systems = req.drmSystems.map((s) => {
    const signal = systemSignal(s.systemId, s.kid.toLowerCase(), req.contentId, schemeOf(s.kid), urls(s.kid.toLowerCase()));
    if (!signal) throw new ApiError(400, 'drm_system_unsupported', `DRM system ${s.systemId} is not supported (ClearKey, Widevine, PlayReady are)`);
    const parts = [`<cpix:PSSH>${signal.pssh}</cpix:PSSH>`, `<cpix:ContentProtectionData>${b64(signal.contentProtectionData)}</cpix:ContentProtectionData>`];
    if (speke === 2) {
      const playlists = s.hlsPlaylists.length ? s.hlsPlaylists : ['media'];
      for (const p of playlists) parts.push(`<cpix:HLSSignalingData playlist="${esc(p)}">${b64(signal.hlsSignalingData)}</cpix:HLSSignalingData>`);
    } else {
      if (signal.uriExtXKey) parts.push(`<cpix:URIExtXKey>${b64(signal.uriExtXKey)}</cpix:URIExtXKey>`);
      if (signal.name === 'PlayReady') {
        parts.push(`<speke:ProtectionHeader>${b64(signal.contentProtectionData)}</speke:ProtectionHeader>`);
      }
      if (signal.name === 'ClearKey')
        parts.push(`<speke:KeyFormat>${b64('identity')}</speke:KeyFormat><speke:KeyFormatVersions>${b64('1')}</speke:KeyFormatVersions>`);
    }
    return `<cpix:DRMSystem kid="${esc(s.kid)}" systemId="${esc(s.systemId)}">${parts.join('')}</cpix:DRMSystem>`;
  });
  const ns = { ...req.namespaces, ...NS };
  const rootAttrs = [
    ...Object.entries(ns).map(([k, v]) => `${k}="${esc(v)}"`),
    speke === 2 ? `contentId="${esc(req.contentId)}" version="${esc(req.version ?? '2.3')}"` : `id="${esc(req.contentId)}"`,
  ].join(' ');
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<cpix:CPIX ${rootAttrs}>`,
    d ? deliveryList(d) : '',
    `<cpix:ContentKeyList>${contentKeys.join('')}</cpix:ContentKeyList>`,
    `<cpix:DRMSystemList>${systems.join('')}</cpix:DRMSystemList>`,
    ...req.echo,
    '</cpix:CPIX>',
  ].join('');
}
