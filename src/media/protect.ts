import { createCipheriv } from 'node:crypto';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { encryptInit, encryptSegment, psshBox, type CencKey, type CencScheme } from './cenc.ts';
import { mediaPlaylists } from './finish.ts';
import { readMediaPlaylist } from './hls.ts';
import { packagingOf, type EncodeLayout } from './packaging.ts';

/** DRM system ids as they appear in PSSH boxes, MPDs and CPIX documents. */
export const SYSTEM_IDS = {
  /** W3C "common" system: the PSSH that EME's `cenc` init data and ClearKey read. */
  common: '1077efec-c0b2-4d02-ace3-3c1e52e2fb4b',
  clearKey: 'e2719d58-a985-b3c9-781a-b030af78d30e',
  widevine: 'edef8ba9-79d6-4ace-a3c8-27dcd51d21ed',
  playReady: '9a04f079-9840-4286-ab92-e65be0885f95',
} as const;

/** What an encrypted output is made with: one content key (SingleKey mode), or one for video and one for audio. */
export interface OutputEncryption {
  /** `aes-128`: HLS MPEG-TS segments encrypted whole (`#EXT-X-KEY:METHOD=AES-128`); `cenc`/`cbcs`: CMAF fMP4 (DASH; `cbcs` also HLS SAMPLE-AES). */
  scheme: 'aes-128' | CencScheme;
  /** 16 bytes. */
  key: Buffer;
  /** The key id as a UUID. */
  keyId: string;
  /** HLS: the key URL written into `#EXT-X-KEY`. DASH: the ClearKey license URL written into the MPD. */
  keyUrl: string;
  /** cbcs: the constant IV (16 bytes). */
  iv?: Buffer;
  /**
   * drmKeyMode `AudioVideoKeys`: the audio tracks' own key (the fields above are then the video tracks'); its `keyUrl`
   * goes into the audio media playlists.
   */
  audio?: { key: Buffer; keyId: string; keyUrl: string; iv?: Buffer };
}

/** The key of the tracks of one kind. */
export function encryptionOf(e: OutputEncryption, kind: 'video' | 'audio'): OutputEncryption {
  return kind === 'audio' && e.audio ? { ...e, ...e.audio, audio: undefined } : e;
}

const esc = (v: string) => v.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/**
 * The `<ContentProtection>` elements of one encrypted adaptation set: the scheme with the key id, and ClearKey with its
 * license URL. The W3C common PSSH stays in the initialisation segments only: dash.js 5 would send it from the MPD
 * as `keyids` init data, which Chromium refuses; from `cenc:default_KID` it builds proper `keyids`.
 */
export function contentProtection(e: OutputEncryption, kind: 'video' | 'audio' = 'video'): string {
  e = encryptionOf(e, kind);
  return [
    `<ContentProtection schemeIdUri="urn:mpeg:dash:mp4protection:2011" value="${e.scheme}" cenc:default_KID="${e.keyId}"/>`,
    `<ContentProtection schemeIdUri="urn:uuid:${SYSTEM_IDS.clearKey}" value="ClearKey1.0"><dashif:Laurl>${esc(e.keyUrl)}</dashif:Laurl></ContentProtection>`,
  ].join('');
}

/** The CENC key of an output: its key id as bytes, and the W3C common PSSH (what EME's ClearKey reads) to carry. */
export function cencKeyOf(e: OutputEncryption): CencKey {
  if (e.scheme === 'aes-128') throw new Error('DASH outputs are encrypted with cenc or cbcs');
  const kid = (id: string) => Buffer.from(id.replace(/-/g, ''), 'hex');
  const keyId = kid(e.keyId);
  const audio = e.audio ? { key: e.audio.key, keyId: kid(e.audio.keyId), constantIv: e.audio.iv } : undefined;
  // One common PSSH names every key id: a player learns all the keys it needs from any init segment.
  return { key: e.key, keyId, scheme: e.scheme, constantIv: e.iv, pssh: [psshBox(SYSTEM_IDS.common, audio ? [keyId, audio.keyId] : [keyId])], audio };
}

/**
 * Encrypts a finished clear DASH output directory in place (`init-*.m4s`, `chunk-*.m4s`, `manifest.mpd`): CENC on
 * every audio and video representation with the one key, PSSH boxes in the initialisation segments, and the MPD's
 * audio and video adaptation sets marked with their ContentProtection (captions stay clear).
 */
export async function protectDash(dir: string, e: OutputEncryption): Promise<void> {
  if (e.scheme === 'aes-128') throw new Error('DASH outputs are encrypted with cenc or cbcs');
  const key = cencKeyOf(e);
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
  mpd = mpd.replace(
    /<AdaptationSet\b[^>]*contentType="(video|audio)"[^>]*>/g,
    (open, kind: 'video' | 'audio') => `${open}\n\t\t\t${contentProtection(e, kind)}`,
  );
  await writeFile(mpdPath, mpd);
}

/**
 * Encrypts a finished clear HLS output (MPEG-TS segments) in place: every segment whole with AES-128-CBC (PKCS#7), the
 * IV being the segment's media sequence number as the HLS specification defines when a key has no IV attribute, and
 * `#EXT-X-KEY:METHOD=AES-128` with the key URL before the first segment of each media playlist. Done after the
 * finishing steps, which read the clear segments (codecs, measured bandwidth).
 */
export async function protectHls(dir: string, all: OutputEncryption, mediaPlaylists: string[], audioPlaylists: string[] = []): Promise<void> {
  if (all.scheme !== 'aes-128') throw new Error('HLS MPEG-TS outputs are encrypted with aes-128');
  for (const playlist of [...mediaPlaylists, ...audioPlaylists]) {
    const e = encryptionOf(all, audioPlaylists.includes(playlist) ? 'audio' : 'video');
    const keyLine = aes128KeyLine(e);
    const text = await readFile(playlist, 'utf8');
    const first = Number(/#EXT-X-MEDIA-SEQUENCE:(\d+)/.exec(text)?.[1] ?? 0);
    const { segments } = await readMediaPlaylist(playlist);
    for (const [i, seg] of segments.entries()) {
      const file = join(dirname(playlist), seg.uri);
      const iv = Buffer.alloc(16);
      iv.writeBigUInt64BE(BigInt(first + i), 8);
      const cipher = createCipheriv('aes-128-cbc', e.key, iv);
      await writeFile(file, Buffer.concat([cipher.update(await readFile(file)), cipher.final()]));
    }
    await writeFile(playlist, withKeyLine(text, keyLine));
  }
  await addSessionKeys(dir, all, mediaPlaylists, audioPlaylists);
}

/** The output's master playlist (`master.m3u8` beside its media playlists) names the keys they use (`withSessionKeys`). */
async function addSessionKeys(dir: string, all: OutputEncryption, video: string[], audio: string[]): Promise<void> {
  const master = join(dir, 'master.m3u8');
  const kinds = [...(video.length ? ['video' as const] : []), ...(audio.length ? ['audio' as const] : [])];
  const text = await readFile(master, 'utf8').catch(() => undefined);
  if (text !== undefined)
    await writeFile(
      master,
      withSessionKeys(
        text,
        kinds.map((k) => hlsKeyLine(encryptionOf(all, k))),
      ),
    );
}

/** HLS's KEYFORMAT for W3C ClearKey, the one hls.js maps to the `org.w3.clearkey` EME key system. */
export const CLEARKEY_KEYFORMAT = 'org.w3.clearkey';

/**
 * The `#EXT-X-KEY` of `cbcs` fMP4 segments played through EME ClearKey: `METHOD=SAMPLE-AES` (HLS's name for `cbcs` in
 * fMP4), the key id as `KEYID` and as the URI's data, `KEYFORMAT="org.w3.clearkey"`. hls.js reads the key id from the
 * data URI (for ClearKey it takes the data's 16 bytes as the key id) and keys its EME sessions by the URI, so each key
 * id gets a URI of its own; the license URL is the player's configuration (`drmSystems['org.w3.clearkey'].licenseUrl`
 * in hls.js), as for Widevine, and the streaming settings name it.
 */
export function sampleAesKeyLine(e: OutputEncryption): string {
  if (e.scheme !== 'cbcs') throw new Error('SAMPLE-AES is the cbcs scheme');
  const kid = Buffer.from(e.keyId.replace(/-/g, ''), 'hex');
  return `#EXT-X-KEY:METHOD=SAMPLE-AES,URI="data:text/plain;base64,${kid.toString('base64')}",KEYID=0x${kid.toString('hex')},KEYFORMAT="${CLEARKEY_KEYFORMAT}",KEYFORMATVERSIONS="1"`;
}

/** The `#EXT-X-KEY` of HLS AES-128 segments: the key's URL (quotes and line breaks cannot be in it). */
export const aes128KeyLine = (e: OutputEncryption): string => `#EXT-X-KEY:METHOD=AES-128,URI="${e.keyUrl.replace(/["\r\n]/g, '')}"`;

/** The key line of a track's media playlists: AES-128, or SAMPLE-AES (`cbcs`) for EME ClearKey. */
export const hlsKeyLine = (e: OutputEncryption): string => (e.scheme === 'aes-128' ? aes128KeyLine(e) : sampleAesKeyLine(e));

const SESSION_KEY = '#EXT-X-SESSION-KEY:';

/**
 * A master playlist with an `#EXT-X-SESSION-KEY` (RFC 8216bis 4.4.6.5) per key its media playlists use, with their
 * `#EXT-X-KEY`'s METHOD, URI, KEYFORMAT (and KEYID, KEYFORMATVERSIONS) and no IV (an IV is a segment's, not a key's),
 * so that a player can fetch the key or choose its key system (hls.js with EME) before it loads a media playlist.
 * `keyLines` are the media playlists' key lines, one per track kind; the same key twice is named once. Any session key
 * the master had is replaced. After `#EXT-X-VERSION` (or `#EXTM3U`).
 */
export function withSessionKeys(master: string, keyLines: string[]): string {
  const session = [...new Set(keyLines.map((l) => SESSION_KEY + l.slice(l.indexOf(':') + 1).replace(/,IV=0x[0-9a-fA-F]+/, '')))];
  const lines = master.split('\n').filter((l) => !l.startsWith(SESSION_KEY));
  const version = lines.findIndex((l) => l.startsWith('#EXT-X-VERSION:'));
  const at = version >= 0 ? version + 1 : lines[0]?.startsWith('#EXTM3U') ? 1 : 0;
  lines.splice(at, 0, ...session);
  return lines.join('\n');
}

/** Puts a key line before a media playlist's first segment (after its `#EXT-X-MAP`: the initialisation segment is clear). */
export function withKeyLine(playlist: string, keyLine: string): string {
  const lines = playlist.split('\n');
  const at = lines.findIndex((l) => l.startsWith('#EXTINF:'));
  if (at >= 0) lines.splice(at, 0, keyLine);
  return lines.join('\n');
}

/**
 * Encrypts a finished clear CMAF output (one set of fMP4 segments, an MPD and HLS media playlists) in place with
 * `cbcs`: the segments and the MPD as `protectDash` does, and each HLS media playlist gets the SAMPLE-AES key line of
 * its track's key. One set of encrypted segments then plays as DASH (ContentProtection) and as HLS (SAMPLE-AES).
 */
export async function protectCmaf(dir: string, all: OutputEncryption, mediaPlaylists: string[], audioPlaylists: string[] = []): Promise<void> {
  if (all.scheme !== 'cbcs') throw new Error('CMAF outputs are encrypted with cbcs (HLS SAMPLE-AES)');
  await protectDash(dir, all);
  for (const playlist of [...mediaPlaylists, ...audioPlaylists]) {
    const e = encryptionOf(all, audioPlaylists.includes(playlist) ? 'audio' : 'video');
    await writeFile(playlist, withKeyLine(await readFile(playlist, 'utf8'), sampleAesKeyLine(e)));
  }
  await addSessionKeys(dir, all, mediaPlaylists, audioPlaylists);
}

/** Encrypts the streaming packaging of a finished output directory as its preset says. */
export async function protectOutput(layout: EncodeLayout, e: OutputEncryption): Promise<void> {
  const { streaming } = packagingOf(layout.preset);
  if (streaming === 'hls' && e.scheme === 'aes-128') {
    const dir = join(layout.outDir, 'hls');
    const { video, audio } = mediaPlaylists(layout, dir, false);
    return protectHls(dir, e, video, audio);
  }
  if (streaming === 'dash' && e.scheme !== 'aes-128') return protectDash(join(layout.outDir, 'dash'), e);
  if (streaming === 'cmaf' && e.scheme === 'cbcs') {
    const dir = join(layout.outDir, 'cmaf');
    const { video, audio } = mediaPlaylists(layout, dir, true);
    return protectCmaf(dir, e, video, audio);
  }
  throw new Error(
    `preset ${layout.preset.id}: ${e.scheme} encryption of ${streaming ?? 'mp4'} packaging is not made (aes-128: hls; cenc: dash; cbcs: dash, cmaf)`,
  );
}
