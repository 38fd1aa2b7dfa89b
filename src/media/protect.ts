import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { encryptInit, encryptSegment, psshBox, type CencScheme } from './cenc.ts';

/** DRM system ids as they appear in PSSH boxes, MPDs and CPIX documents. */
export const SYSTEM_IDS = {
  /** W3C "common" system: the PSSH that EME's `cenc` init data and ClearKey read. */
  common: '1077efec-c0b2-4d02-ace3-3c1e52e2fb4b',
  clearKey: 'e2719d58-a985-b3c9-781a-b030af78d30e',
  widevine: 'edef8ba9-79d6-4ace-a3c8-27dcd51d21ed',
  playReady: '9a04f079-9840-4286-ab92-e65be0885f95',
} as const;

/** What an encrypted output is made with: one content key (SingleKey mode). */
export interface OutputEncryption {
  /** `aes-128`: HLS MPEG-TS segments encrypted whole (`#EXT-X-KEY:METHOD=AES-128`); `cenc`/`cbcs`: DASH CMAF. */
  scheme: 'aes-128' | CencScheme;
  /** 16 bytes. */
  key: Buffer;
  /** The key id as a UUID. */
  keyId: string;
  /** HLS: the key URL written into `#EXT-X-KEY`. DASH: the ClearKey license URL written into the MPD. */
  keyUrl: string;
  /** cbcs: the constant IV (16 bytes). */
  iv?: Buffer;
}

const esc = (v: string) => v.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** The `<ContentProtection>` elements of one encrypted adaptation set. */
export function contentProtection(e: OutputEncryption, commonPssh: Buffer): string {
  return [
    `<ContentProtection schemeIdUri="urn:mpeg:dash:mp4protection:2011" value="${e.scheme}" cenc:default_KID="${e.keyId}"/>`,
    `<ContentProtection schemeIdUri="urn:uuid:${SYSTEM_IDS.common}" value="cenc"><cenc:pssh>${commonPssh.toString('base64')}</cenc:pssh></ContentProtection>`,
    `<ContentProtection schemeIdUri="urn:uuid:${SYSTEM_IDS.clearKey}" value="ClearKey1.0"><dashif:Laurl>${esc(e.keyUrl)}</dashif:Laurl></ContentProtection>`,
  ].join('');
}

/**
 * Encrypts a finished clear DASH output directory in place (`init-*.m4s`, `chunk-*.m4s`, `manifest.mpd`): CENC on
 * every audio and video representation with the one key, PSSH boxes in the initialisation segments, and the MPD's
 * audio and video adaptation sets marked with their ContentProtection (captions stay clear).
 */
export async function protectDash(dir: string, e: OutputEncryption): Promise<void> {
  if (e.scheme === 'aes-128') throw new Error('DASH outputs are encrypted with cenc or cbcs');
  const keyId = Buffer.from(e.keyId.replace(/-/g, ''), 'hex');
  const commonPssh = psshBox(SYSTEM_IDS.common, [keyId]);
  const key = { key: e.key, keyId, scheme: e.scheme, constantIv: e.iv, pssh: [commonPssh] };
  const files = await readdir(dir);
  for (const name of files) {
    const m = /^init-(.+)\.m4s$/.exec(name);
    if (!m) continue;
    const { init, tracks } = encryptInit(await readFile(join(dir, name)), key);
    await writeFile(join(dir, name), init);
    for (const seg of files.filter((f) => f.startsWith(`chunk-${m[1]}-`) && f.endsWith('.m4s'))) {
      await writeFile(join(dir, seg), encryptSegment(await readFile(join(dir, seg)), tracks, key));
    }
  }
  const mpdPath = join(dir, 'manifest.mpd');
  let mpd = await readFile(mpdPath, 'utf8');
  mpd = mpd.replace(/<MPD\b/, '<MPD xmlns:cenc="urn:mpeg:cenc:2013" xmlns:dashif="https://dashif.org/CPS"');
  mpd = mpd.replace(/<AdaptationSet\b[^>]*contentType="(?:video|audio)"[^>]*>/g, (open) => `${open}\n\t\t\t${contentProtection(e, commonPssh)}`);
  await writeFile(mpdPath, mpd);
}
