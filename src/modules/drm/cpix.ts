import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { ApiError } from '../../platform/errors.ts';
import type { ErrorCode } from '../../platform/errorCodes.ts';
import { isUuid } from '../../platform/ids.ts';

/** The parts of a CPIX request (SPEKE 1.0: CPIX 2.0 with `id`; SPEKE 2.0: CPIX 2.3 with `contentId`) we answer. */
export interface CpixRequest {
  contentId: string;
  version: string | undefined;
  contentKeys: { kid: string; commonEncryptionScheme?: string; explicitIV?: string }[];
  drmSystems: { kid: string; systemId: string; hlsPlaylists: string[] }[];
  /** The recipient's certificate (DER, base64) when the request asks for encrypted keys. */
  deliveryCertificate?: string;
  /** Namespace declarations of the request's root, kept on the answer so echoed elements stay valid. */
  namespaces: Record<string, string>;
  /** Elements echoed as they came (key periods, usage rules). */
  echo: string[];
}

/** CPIX documents are a few kilobytes; the route refuses larger bodies before they are read. */
export const CPIX_MAX_BYTES = 256 * 1024;
const KEYS_MAX = 64;

const bad = (code: ErrorCode, message: string) => new ApiError(400, code, message);

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '@_',
  removeNSPrefix: true,
  // Entities are never expanded: a document that declares any is refused before parsing (no "billion laughs").
  processEntities: false,
  parseTagValue: false,
  parseAttributeValue: false,
  isArray: (name) => ['ContentKey', 'DRMSystem', 'DeliveryData', 'HLSSignalingData'].includes(name),
});

type Node = Record<string, unknown>;
const obj = (v: unknown): Node => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Node) : {});
const arr = (v: unknown): Node[] => (Array.isArray(v) ? v.map(obj) : v === undefined ? [] : [obj(v)]);
const attr = (n: Node, name: string): string | undefined => (typeof n[`@_${name}`] === 'string' ? (n[`@_${name}`] as string) : undefined);

/** Reads a CPIX document; anything that is not one is a 400 that says why. */
export function parseCpix(xml: string): CpixRequest {
  if (typeof xml !== 'string' || xml.trim() === '') throw bad('cpix_malformed', 'The body must be a CPIX XML document');
  if (Buffer.byteLength(xml) > CPIX_MAX_BYTES) throw new ApiError(413, 'payload_too_large', `CPIX documents are at most ${CPIX_MAX_BYTES} bytes`);
  if (/<!DOCTYPE|<!ENTITY/i.test(xml)) throw bad('cpix_doctype_refused', 'CPIX documents must not contain a DOCTYPE or entity declarations');
  const valid = XMLValidator.validate(xml);
  if (valid !== true) throw bad('cpix_malformed', `The CPIX document is not well-formed XML: ${valid.err.msg} (line ${valid.err.line})`);
  let doc: Node;
  try {
    doc = obj(parser.parse(xml));
  } catch (e) {
    throw bad('cpix_malformed', `The CPIX document could not be read: ${(e as Error).message}`);
  }
  const root = obj(doc.CPIX);
  if (!doc.CPIX) throw bad('cpix_malformed', 'The root element must be cpix:CPIX');
  const contentId = attr(root, 'contentId') ?? attr(root, 'id');
  if (!contentId || !/^[\x21-\x7e][\x20-\x7e]{0,255}$/.test(contentId)) {
    throw bad('cpix_malformed', 'CPIX needs a contentId (SPEKE 2.0) or id (SPEKE 1.0) attribute of 1 to 256 printable characters');
  }
  const contentKeys = arr(obj(root.ContentKeyList).ContentKey).map((k) => ({
    kid: attr(k, 'kid') ?? '',
    commonEncryptionScheme: attr(k, 'commonEncryptionScheme'),
    explicitIV: attr(k, 'explicitIV'),
  }));
  if (contentKeys.length === 0) throw bad('cpix_malformed', 'CPIX needs at least one ContentKey');
  if (contentKeys.length > KEYS_MAX) throw bad('cpix_malformed', `CPIX asks for at most ${KEYS_MAX} content keys`);
  const badKid = contentKeys.find((k) => !isUuid(k.kid));
  if (badKid) throw bad('cpix_malformed', `ContentKey kid "${badKid.kid.slice(0, 64)}" is not a UUID`);
  const kids = new Set(contentKeys.map((k) => k.kid.toLowerCase()));
  const drmSystems = arr(obj(root.DRMSystemList).DRMSystem).map((d) => ({
    kid: attr(d, 'kid') ?? '',
    systemId: (attr(d, 'systemId') ?? '').toLowerCase(),
    hlsPlaylists: arr(d.HLSSignalingData).map((h) => attr(h, 'playlist') ?? 'media'),
  }));
  const strayKid = drmSystems.find((d) => !kids.has(d.kid.toLowerCase()));
  if (strayKid) throw bad('cpix_malformed', `DRMSystem kid "${strayKid.kid.slice(0, 64)}" names no ContentKey of the document`);
  if (drmSystems.some((d) => !isUuid(d.systemId))) throw bad('cpix_malformed', 'DRMSystem systemId must be a UUID');
  const delivery = arr(obj(root.DeliveryDataList).DeliveryData)[0];
  const cert = delivery ? obj(obj(obj(delivery.DeliveryKey).X509Data)).X509Certificate : undefined;
  if (delivery && typeof cert !== 'string') throw bad('cpix_malformed', 'DeliveryData needs DeliveryKey/X509Data/X509Certificate');
  const rootTag = /<([A-Za-z_][\w.-]*:)?CPIX\b[^>]*>/.exec(xml)?.[0] ?? '';
  const namespaces = Object.fromEntries([...rootTag.matchAll(/\s(xmlns(?::[\w.-]+)?)\s*=\s*"([^"]*)"/g)].map((m) => [m[1], m[2]]));
  const echo = ['ContentKeyPeriodList', 'ContentKeyUsageRuleList'].flatMap((name) => {
    const m = new RegExp(`<([\\w.-]+:)?${name}\\b[\\s\\S]*?</\\1?${name}>`).exec(xml);
    return m ? [m[0]] : [];
  });
  return {
    contentId,
    version: attr(root, 'version'),
    contentKeys,
    drmSystems,
    deliveryCertificate: typeof cert === 'string' ? cert.replace(/\s+/g, '') : undefined,
    namespaces,
    echo,
  };
}
