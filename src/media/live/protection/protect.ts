import { createCipheriv } from 'node:crypto';
import type { Logger } from 'pino';
import { encryptInit, encryptSegment, type InitTracks } from '../../cenc.ts';
import {
  cencKeyOf,
  contentProtection,
  encryptionOf,
  hlsKeyLine,
  sampleAesKeyLine,
  withKeyLine,
  withSessionKeys,
  type OutputEncryption,
} from '../../protect.ts';
import { masterTracks } from '../packaging/rangePlaylist.ts';
import { CAPTION_TRACK } from '../captions/subtitles.ts';

/**
 * A live channel's encrypted outputs (docs/decisions/drm.md, "Live channels"): beside the clear files the packager
 * publishes (which the timeline, the Recorder and the other endpoints read), each segment is published again,
 * encrypted, under the prefix of each protected endpoint as it is published. SingleKey: one key for every track.
 */
export interface LiveProtection {
  /** `HlsDrm`: fMP4 segments encrypted whole with AES-128-CBC under `aes128/`, the init segments clear. */
  hls?: OutputEncryption;
  /**
   * `DashDrm`: Common Encryption of every track under `<scheme>/` (`cenc/`, `cbcs/`: a channel may have one endpoint
   * of each), the W3C common PSSH in the init segments.
   */
  dash?: OutputEncryption[];
  /**
   * `HlsDrm` with scheme `cbcs`: HLS playlists with `#EXT-X-KEY:METHOD=SAMPLE-AES` (EME ClearKey) under `cbcs/`, over
   * the same `cbcs` copies of the segments a `DashDrm` `cbcs` endpoint plays (made for it when there is none).
   */
  sampleAes?: OutputEncryption;
}

export const HLS_DRM_PREFIX = 'aes128/';
/** Where a `DashDrm` endpoint of this scheme publishes, under the channel's prefix. */
export const dashDrmPrefix = (scheme: 'cenc' | 'cbcs'): string => `${scheme}/`;

/** Every prefix the protected endpoints publish under. */
export function protectedPrefixes(p: LiveProtection): string[] {
  return [...(p.hls ? [HLS_DRM_PREFIX] : []), ...cencCopies(p).map((d) => dashDrmPrefix(cencScheme(d)))];
}

/** The CENC copies of the segments to make: one per `DashDrm` scheme, and the `cbcs` one SAMPLE-AES plays. */
function cencCopies(p: LiveProtection): OutputEncryption[] {
  const dash = p.dash ?? [];
  return p.sampleAes && !dash.some((d) => d.scheme === 'cbcs') ? [...dash, p.sampleAes] : dash;
}

/**
 * The media playlist of a SAMPLE-AES endpoint: the clear one with the track's key line before its first segment. The
 * `#EXT-X-MAP` initialisation segments are the `cbcs` copies' (sample entries `encv`/`enca`, no media: nothing to
 * decrypt), so one key line covers the whole playlist, across Periods.
 */
export const sampleAesPlaylist = (text: string, e: OutputEncryption): string => withKeyLine(text, sampleAesKeyLine(e));

function cencScheme(e: OutputEncryption): 'cenc' | 'cbcs' {
  if (e.scheme === 'aes-128') throw new Error('DashDrm endpoints are encrypted with cenc or cbcs');
  return e.scheme;
}

/** The packager names the audio track `audio` and each video track by its quality (manifests.ts). */
const kindOf = (track: string): 'video' | 'audio' => (track === 'audio' ? 'audio' : 'video');

type Publish = (key: string, body: Buffer, contentType: string) => Promise<void>;

/**
 * The master playlist of a protected HLS endpoint (the channel's, a range's, a recording's: the same variants), with
 * an `#EXT-X-SESSION-KEY` per key its media playlists name: the video tracks' key, and the audio track's
 * (`AudioVideoKeys`: its own) when the master lists audio. `e` is the endpoint's: AES-128 or SAMPLE-AES.
 */
export function protectedMaster(master: string, e: OutputEncryption): string {
  const tracks = masterTracks(master).filter((t) => t !== CAPTION_TRACK);
  const kinds = (['video', 'audio'] as const).filter((k) => tracks.some((t) => kindOf(t) === k));
  return withSessionKeys(
    master,
    kinds.map((k) => hlsKeyLine(encryptionOf(e, k))),
  );
}

/** The names the packager publishes (manifests.ts, packager.ts): `<track>/init-<run>.mp4`, `<track>/<n>.m4s`, playlists. */
const INIT = /^([^/]+)\/init-\d+\.mp4$/;
const SEGMENT = /^([^/]+)\/(\d+)\.m4s$/;

/** AES-128-CBC of a whole segment with PKCS#7 padding; the IV is the media sequence number (RFC 8216, 5.2). */
function encryptWhole(body: Buffer, key: Buffer, sequence: number): Buffer {
  const iv = Buffer.alloc(16);
  iv.writeBigUInt64BE(BigInt(sequence), 8);
  const cipher = createCipheriv('aes-128-cbc', key, iv);
  return Buffer.concat([cipher.update(body), cipher.final()]);
}

/**
 * The media playlist of the AES-128 endpoint: the clear one with `#EXT-X-KEY` lines. Init segments stay clear (they
 * hold codec parameters, no media), so each `#EXT-X-MAP` is preceded by `METHOD=NONE` and followed by the key again.
 * No IV is written: a segment's IV is its media sequence number, which is the number in its name (the packager
 * numbers a track's segments without gaps, and the playlist lists them in order from EXT-X-MEDIA-SEQUENCE).
 */
export function hlsDrmPlaylist(text: string, keyUrl: string): string {
  const key = `#EXT-X-KEY:METHOD=AES-128,URI="${keyUrl.replace(/["\r\n]/g, '')}"`;
  const out: string[] = [];
  let keyed = false;
  for (const line of text.split('\n')) {
    if (line.startsWith('#EXT-X-MAP:')) {
      out.push('#EXT-X-KEY:METHOD=NONE', line, key);
      keyed = true;
      continue;
    }
    if (line && !line.startsWith('#')) {
      if (!keyed) out.push(key);
      keyed = true;
    }
    out.push(line);
  }
  return out.join('\n');
}

/**
 * `hlsDrmPlaylist` for a playlist whose media sequence numbers are not the segments' (a range of the timeline: it
 * counts from 0, and may skip segments lost to retention): each segment's IV, its number in its name, is written out.
 */
export function hlsDrmRangePlaylist(text: string, keyUrl: string): string {
  const uri = keyUrl.replace(/["\r\n]/g, '');
  const lines = text.split('\n');
  const out: string[] = [];
  let tags: string[] = [];
  for (const line of lines) {
    if (line.startsWith('#EXT-X-MAP:')) {
      out.push(...tags, '#EXT-X-KEY:METHOD=NONE', line);
      tags = [];
    } else if (line.startsWith('#EXT-X-PROGRAM-DATE-TIME:') || line.startsWith('#EXTINF:')) {
      tags.push(line);
    } else if (line && !line.startsWith('#')) {
      const sequence = Number(/(\d+)\.m4s$/.exec(line)?.[1] ?? 0);
      out.push(`#EXT-X-KEY:METHOD=AES-128,URI="${uri}",IV=0x${sequence.toString(16).padStart(32, '0')}`, ...tags, line);
      tags = [];
    } else {
      out.push(...tags, line);
      tags = [];
    }
  }
  return out.join('\n');
}

/** The MPD of the CENC endpoint: the clear one with ContentProtection in each audio and video adaptation set. */
export function dashDrmManifest(mpd: string, e: OutputEncryption): string {
  return mpd
    .replace(/<MPD\b/, '<MPD xmlns:cenc="urn:mpeg:cenc:2013" xmlns:dashif="https://dashif.org/CPS"')
    .replace(/<AdaptationSet\b[^>]*contentType="(video|audio)"[^>]*>/g, (open, kind: 'video' | 'audio') => `${open}\n      ${contentProtection(e, kind)}`);
}

/**
 * Wraps the packager's `publish` and `remove`: every file also goes, encrypted, to each protected endpoint's prefix,
 * after the clear file and before the playlist that lists it (the packager publishes in that order and awaits each).
 * The encrypted copies of expired segments are removed with them.
 */
export function protectedPublisher(p: LiveProtection, publish: Publish, remove: (keys: string[]) => Promise<void>, log: Logger) {
  const dash = cencCopies(p).map((e) => ({ e, prefix: dashDrmPrefix(cencScheme(e)), key: cencKeyOf(e), mpd: (p.dash ?? []).includes(e) }));
  /** Per track, what its current init segment says about its tracks (the CENC of its segments needs it). */
  const initTracks = new Map<string, InitTracks>();
  const prefixes = protectedPrefixes(p);

  async function publishInit(key: string, track: string, body: Buffer, contentType: string): Promise<void> {
    if (p.hls) await publish(HLS_DRM_PREFIX + key, body, contentType);
    for (const d of dash) {
      const { init, tracks } = encryptInit(body, d.key);
      // The track layout does not depend on the scheme: any endpoint's reading of the init segment serves all.
      initTracks.set(track, tracks);
      await publish(d.prefix + key, init, contentType);
    }
  }

  async function protect(key: string, body: Buffer, contentType: string): Promise<void> {
    const init = INIT.exec(key);
    if (init) return publishInit(key, init[1]!, body, contentType);
    const segment = SEGMENT.exec(key);
    if (segment) {
      if (p.hls) await publish(HLS_DRM_PREFIX + key, encryptWhole(body, encryptionOf(p.hls, kindOf(segment[1]!)).key, Number(segment[2])), contentType);
      const tracks = initTracks.get(segment[1]!);
      if (dash.length > 0 && !tracks) log.error({ key }, 'a live segment without a known init segment is left out of the encrypted output');
      if (tracks) for (const d of dash) await publish(d.prefix + key, encryptSegment(body, tracks, d.key), contentType);
      return;
    }
    if (key === 'master.m3u8') {
      if (p.hls) await publish(HLS_DRM_PREFIX + key, Buffer.from(protectedMaster(body.toString('utf8'), p.hls)), contentType);
      if (p.sampleAes) await publish(dashDrmPrefix('cbcs') + key, Buffer.from(protectedMaster(body.toString('utf8'), p.sampleAes)), contentType);
      return;
    }
    if (/^[^/]+\.m3u8$/.test(key) && !key.endsWith('.delta.m3u8')) {
      const kind = kindOf(key.slice(0, -'.m3u8'.length));
      if (p.hls) await publish(HLS_DRM_PREFIX + key, Buffer.from(hlsDrmPlaylist(body.toString('utf8'), encryptionOf(p.hls, kind).keyUrl)), contentType);
      if (p.sampleAes)
        await publish(dashDrmPrefix('cbcs') + key, Buffer.from(sampleAesPlaylist(body.toString('utf8'), encryptionOf(p.sampleAes, kind))), contentType);
      return;
    }
    if (key === 'manifest.mpd')
      for (const d of dash.filter((x) => x.mpd)) await publish(d.prefix + key, Buffer.from(dashDrmManifest(body.toString('utf8'), d.e)), contentType);
    // Anything else (low-latency parts and delta playlists: DRM channels are NormalLatency) has no encrypted form.
  }

  return {
    async publish(key: string, body: Buffer, contentType: string): Promise<void> {
      await publish(key, body, contentType);
      await protect(key, body, contentType);
    },
    async remove(keys: string[]): Promise<void> {
      await remove([...keys, ...prefixes.flatMap((prefix) => keys.map((k) => prefix + k))]);
    },
    /**
     * A pipeline that continues a channel's playlists (a takeover, a restart) may never publish an init segment
     * again (the same Period): the current ones are published to the encrypted prefixes again, which also gives a
     * newly protected endpoint its init segments. Deterministic: the bytes are the same as before.
     */
    async resume(inits: { key: string; track: string; body: Buffer }[]): Promise<void> {
      for (const i of inits) await publishInit(i.key, i.track, i.body, 'video/mp4');
    },
  };
}
