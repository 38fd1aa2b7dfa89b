import { psshBox } from '../../media/cenc.ts';
import { SYSTEM_IDS } from '../../media/protect.ts';

/** The DRM systems the key server describes (CPIX `DRMSystem`), by system id. */
export const DRM_SYSTEMS = {
  [SYSTEM_IDS.clearKey]: 'ClearKey',
  [SYSTEM_IDS.widevine]: 'Widevine',
  [SYSTEM_IDS.playReady]: 'PlayReady',
} as const;
export type DrmSystemName = (typeof DRM_SYSTEMS)[keyof typeof DRM_SYSTEMS];
export const systemIdOf = (name: DrmSystemName) => Object.entries(DRM_SYSTEMS).find(([, n]) => n === name)![0];

export interface SystemSignal {
  systemId: string;
  name: DrmSystemName;
  /** A whole `pssh` box, base64. */
  pssh: string;
  /** What goes inside the MPD's ContentProtection element for this system (XML text). */
  contentProtectionData: string;
  /** An `#EXT-X-KEY` line for HLS playlists. */
  hlsSignalingData: string;
  /** SPEKE 1.0: the key URL of HLS AES-128 (ClearKey only). */
  uriExtXKey?: string;
}

const kidBytes = (keyId: string) => Buffer.from(keyId.replace(/-/g, ''), 'hex');

/** Protocol-buffer bytes of Widevine's WidevinePsshData: key_id (2), content_id (4), protection_scheme (9). */
function widevineData(keyId: string, contentId: string, scheme: string): Buffer {
  const content = Buffer.from(contentId, 'utf8');
  const len = (n: number) => {
    const out: number[] = [];
    do {
      out.push((n & 0x7f) | (n > 0x7f ? 0x80 : 0));
      n >>>= 7;
    } while (n > 0);
    return Buffer.from(out);
  };
  const fourcc = Buffer.from(scheme.padEnd(4).slice(0, 4), 'latin1').readUInt32BE(0);
  return Buffer.concat([Buffer.from([0x12, 16]), kidBytes(keyId), Buffer.from([0x22]), len(content.length), content, Buffer.from([0x48]), len(fourcc)]);
}

/** PlayReady's key id: the GUID's first three fields little-endian, base64. */
const playReadyKid = (keyId: string) => {
  const b = kidBytes(keyId);
  return Buffer.concat([
    Buffer.from(b.subarray(0, 4)).reverse(),
    Buffer.from(b.subarray(4, 6)).reverse(),
    Buffer.from(b.subarray(6, 8)).reverse(),
    b.subarray(8),
  ]).toString('base64');
};

/** A PlayReady Object with one rights-management header (WRMHEADER 4.3, UTF-16LE). */
function playReadyObject(keyId: string, scheme: string): Buffer {
  const alg = scheme === 'cbcs' ? 'AESCBC' : 'AESCTR';
  const xml =
    '<WRMHEADER xmlns="http://schemas.microsoft.com/DRM/2007/03/PlayReadyHeader" version="4.3.0.0"><DATA><PROTECTINFO><KIDS>' +
    `<KID ALGID="${alg}" VALUE="${playReadyKid(keyId)}"></KID></KIDS></PROTECTINFO></DATA></WRMHEADER>`;
  const record = Buffer.from(xml, 'utf16le');
  const head = Buffer.alloc(10);
  head.writeUInt32LE(10 + record.length, 0);
  head.writeUInt16LE(1, 4);
  head.writeUInt16LE(1, 6);
  head.writeUInt16LE(record.length, 8);
  return Buffer.concat([head, record]);
}

export interface SignalUrls {
  /** HLS AES-128 key URL of this key. */
  aes128KeyUrl: string;
  /** DASH ClearKey license URL. */
  clearKeyLicenseUrl: string;
}

/** What one DRM system needs to know about one key: PSSH, MPD and HLS signalling. */
export function systemSignal(systemId: string, keyId: string, contentId: string, scheme: string, urls: SignalUrls): SystemSignal | undefined {
  const name = DRM_SYSTEMS[systemId.toLowerCase() as keyof typeof DRM_SYSTEMS];
  if (!name) return undefined;
  const kid = kidBytes(keyId);
  const hex = kid.toString('hex');
  if (name === 'ClearKey') {
    // EME's ClearKey reads the W3C common PSSH (system 1077efec-...), which lists the key ids.
    const pssh = psshBox('1077efec-c0b2-4d02-ace3-3c1e52e2fb4b', [kid]).toString('base64');
    return {
      systemId,
      name,
      pssh,
      contentProtectionData: `<cenc:pssh>${pssh}</cenc:pssh><dashif:Laurl>${urls.clearKeyLicenseUrl}</dashif:Laurl>`,
      hlsSignalingData: `#EXT-X-KEY:METHOD=AES-128,URI="${urls.aes128KeyUrl}"`,
      uriExtXKey: urls.aes128KeyUrl,
    };
  }
  if (name === 'Widevine') {
    const pssh = psshBox(systemId, [], widevineData(keyId, contentId, scheme)).toString('base64');
    return {
      systemId,
      name,
      pssh,
      contentProtectionData: `<cenc:pssh>${pssh}</cenc:pssh>`,
      hlsSignalingData: `#EXT-X-KEY:METHOD=SAMPLE-AES,URI="data:text/plain;base64,${pssh}",KEYID=0x${hex},KEYFORMAT="urn:uuid:${systemId}",KEYFORMATVERSIONS="1"`,
    };
  }
  const pro = playReadyObject(keyId, scheme);
  const pssh = psshBox(systemId, [], pro).toString('base64');
  return {
    systemId,
    name,
    pssh,
    contentProtectionData: `<mspr:pro>${pro.toString('base64')}</mspr:pro><cenc:pssh>${pssh}</cenc:pssh>`,
    hlsSignalingData: `#EXT-X-KEY:METHOD=SAMPLE-AES,URI="data:text/plain;charset=UTF-16;base64,${pro.toString('base64')}",KEYFORMAT="com.microsoft.playready",KEYFORMATVERSIONS="1"`,
  };
}
