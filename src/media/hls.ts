import { readFile, stat, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import type { StreamInfo } from './inspect.ts';

export interface MediaPlaylist {
  segments: { uri: string; durationS: number }[];
  durationS: number;
}

export async function readMediaPlaylist(path: string): Promise<MediaPlaylist> {
  return parseMediaPlaylist(await readFile(path, 'utf8'));
}

export function parseMediaPlaylist(text: string): MediaPlaylist {
  const lines = text.split(/\r?\n/).map((l) => l.trim());
  const segments: MediaPlaylist['segments'] = [];
  let pending: number | undefined;
  for (const line of lines) {
    if (line.startsWith('#EXTINF:')) pending = Number.parseFloat(line.slice(8));
    else if (line && !line.startsWith('#') && pending !== undefined) {
      segments.push({ uri: line, durationS: pending });
      pending = undefined;
    }
  }
  return { segments, durationS: segments.reduce((sum, s) => sum + s.durationS, 0) };
}

/** Peak (the highest segment) and average bit rates of a media playlist, measured on the segment files themselves. */
async function measuredBitrates(playlistPath: string): Promise<{ peak: number; average: number; durationS: number }> {
  const playlist = await readMediaPlaylist(playlistPath);
  let peak = 0;
  let bytes = 0;
  for (const seg of playlist.segments) {
    const size = (await stat(join(dirname(playlistPath), seg.uri))).size;
    bytes += size;
    // Very short trailing segments would overstate the peak; rate them over at least one second.
    peak = Math.max(peak, (size * 8) / Math.max(seg.durationS, 1));
  }
  const average = playlist.durationS > 0 ? (bytes * 8) / playlist.durationS : 0;
  return { peak: Math.round(peak), average: Math.round(average), durationS: playlist.durationS };
}

const H264_PROFILES: Record<string, string> = {
  'Constrained Baseline': '42C0',
  Baseline: '4200',
  Main: '4D40',
  Extended: '5800',
  High: '6400',
  'High 10': '6E00',
  'High 4:2:2': '7A00',
  'High 4:4:4 Predictive': 'F400',
};

const AAC_PROFILES: Record<string, string> = { LC: 'mp4a.40.2', 'HE-AAC': 'mp4a.40.5', 'HE-AACv2': 'mp4a.40.29' };

/** The RFC 6381 codec name a player checks before it fetches a rendition (`avc1.64001f`, `mp4a.40.2`). */
export function codecString(s: StreamInfo): string | undefined {
  switch (s.codec) {
    case 'h264': {
      const profile = H264_PROFILES[s.profile ?? ''];
      return profile && s.level ? `avc1.${profile}${s.level.toString(16).padStart(2, '0').toUpperCase()}`.toLowerCase() : undefined;
    }
    case 'hevc':
      return s.level ? `hvc1.${s.profile === 'Main 10' ? '2.4' : '1.6'}.L${s.level}.B0` : undefined;
    case 'aac':
      return AAC_PROFILES[s.profile ?? 'LC'] ?? 'mp4a.40.2';
    case 'mp3':
      return 'mp4a.40.34';
    case 'ac3':
      return 'ac-3';
    case 'eac3':
      return 'ec-3';
    default:
      return undefined;
  }
}

export interface MasterVariant {
  /** Media playlist path, absolute. */
  playlist: string;
  width: number;
  height: number;
  frameRate?: number;
  codecs?: string;
}

export interface MasterRendition {
  playlist: string;
  name: string;
  language?: string;
  codecs?: string;
}

const quote = (v: string) => `"${v.replace(/["\r\n]/g, '')}"`;

/** An audio track's `EXT-X-MEDIA` line in the one AUDIO group (the first is the default). */
function audioRendition(a: MasterRendition, i: number, uri?: string): string {
  const attrs = ['TYPE=AUDIO', 'GROUP-ID="audio"', `NAME=${quote(a.name)}`, `DEFAULT=${i === 0 ? 'YES' : 'NO'}`, 'AUTOSELECT=YES'];
  if (a.language) attrs.push(`LANGUAGE=${quote(a.language)}`);
  if (uri !== undefined) attrs.push(`URI=${quote(uri)}`);
  return `#EXT-X-MEDIA:${attrs.join(',')}`;
}

/**
 * Writes the master playlist: one STREAM-INF per video rung with BANDWIDTH/AVERAGE-BANDWIDTH measured on its
 * segments (plus the largest audio rendition), RESOLUTION and CODECS; audio tracks as one AUDIO group (the first is
 * the default), captions as one SUBTITLES group. Without video the default audio track is the variant.
 */
export async function writeMasterPlaylist(
  path: string,
  { variants, audio, subtitles }: { variants: MasterVariant[]; audio: MasterRendition[]; subtitles: MasterRendition[] },
): Promise<void> {
  const dir = dirname(path);
  const uri = (p: string) => relative(dir, p).split('\\').join('/');
  const lines = ['#EXTM3U', '#EXT-X-VERSION:6', '#EXT-X-INDEPENDENT-SEGMENTS'];
  const audioRates = await Promise.all(audio.map((a) => measuredBitrates(a.playlist)));
  const audioPeak = Math.max(0, ...audioRates.map((r) => r.peak));
  const audioAverage = Math.max(0, ...audioRates.map((r) => r.average));
  const audioCodecs = audio.find((a) => a.codecs)?.codecs;
  const groups = (audio.length > 0 ? ',AUDIO="audio"' : '') + (subtitles.length > 0 ? ',SUBTITLES="subs"' : '');

  // Audio-only: the default track is the variant itself, so its rendition has no URI of its own.
  audio.forEach((a, i) => lines.push(audioRendition(a, i, variants.length > 0 || i > 0 ? uri(a.playlist) : undefined)));
  subtitles.forEach((s, i) => {
    const attrs = ['TYPE=SUBTITLES', 'GROUP-ID="subs"', `NAME=${quote(s.name)}`, `DEFAULT=NO`, `AUTOSELECT=${i === 0 ? 'YES' : 'NO'}`];
    if (s.language) attrs.push(`LANGUAGE=${quote(s.language)}`);
    attrs.push(`URI=${quote(uri(s.playlist))}`);
    lines.push(`#EXT-X-MEDIA:${attrs.join(',')}`);
  });

  for (const v of variants) {
    const rate = await measuredBitrates(v.playlist);
    const codecs = [v.codecs, audioCodecs].filter(Boolean);
    const allKnown = v.codecs !== undefined && (audio.length === 0 || audioCodecs !== undefined);
    const attrs = [`BANDWIDTH=${rate.peak + audioPeak}`, `AVERAGE-BANDWIDTH=${rate.average + audioAverage}`, `RESOLUTION=${v.width}x${v.height}`];
    if (allKnown) attrs.push(`CODECS=${quote(codecs.join(','))}`);
    if (v.frameRate) attrs.push(`FRAME-RATE=${v.frameRate.toFixed(3)}`);
    lines.push(`#EXT-X-STREAM-INF:${attrs.join(',')}${groups}`, uri(v.playlist));
  }
  if (variants.length === 0 && audio.length > 0) {
    const attrs = [`BANDWIDTH=${audioRates[0].peak}`, `AVERAGE-BANDWIDTH=${audioRates[0].average}`];
    if (audioCodecs) attrs.push(`CODECS=${quote(audioCodecs)}`);
    lines.push(`#EXT-X-STREAM-INF:${attrs.join(',')}${groups}`, uri(audio[0].playlist));
  }
  await writeFile(path, `${lines.join('\n')}\n`);
}

export interface GrowingLadder {
  variants: (MasterVariant & { peakKbps: number; averageKbps: number })[];
  audio: (MasterRendition & { kbps: number })[];
}

/**
 * The master playlist (in `dir`) of an output still encoding, before any segment exists to measure: bandwidths from
 * the ladder's settings (the peak is the rung's maxrate), the audio as one group. `writeMasterPlaylist` replaces it
 * when the output is finished.
 */
export function growingMasterText(dir: string, { variants, audio }: GrowingLadder): string {
  const uri = (p: string) => relative(dir, p).split('\\').join('/');
  const audioKbps = Math.max(0, ...audio.map((a) => a.kbps));
  const lines = ['#EXTM3U', '#EXT-X-VERSION:6', '#EXT-X-INDEPENDENT-SEGMENTS'];
  audio.forEach((a, i) => lines.push(audioRendition(a, i, uri(a.playlist))));
  for (const v of variants) {
    const attrs = [
      `BANDWIDTH=${(v.peakKbps + audioKbps) * 1000}`,
      `AVERAGE-BANDWIDTH=${(v.averageKbps + audioKbps) * 1000}`,
      `RESOLUTION=${v.width}x${v.height}`,
    ];
    lines.push(`#EXT-X-STREAM-INF:${attrs.join(',')}${audio.length > 0 ? ',AUDIO="audio"' : ''}`, uri(v.playlist));
  }
  return `${lines.join('\n')}\n`;
}

/** Declares a finished media playlist VOD (players may then cache it and show the whole timeline). */
export async function markVod(path: string): Promise<void> {
  const lines = (await readFile(path, 'utf8')).split('\n').filter((l) => !l.startsWith('#EXT-X-PLAYLIST-TYPE:'));
  const at = lines.findIndex((l) => l.startsWith('#EXT-X-TARGETDURATION:'));
  lines.splice(Math.max(at, 0) + 1, 0, '#EXT-X-PLAYLIST-TYPE:VOD');
  await writeFile(path, lines.join('\n'));
}

/** A WebVTT file as a one-segment subtitle playlist next to it. */
export async function writeSubtitlePlaylist(vttPath: string, durationS: number): Promise<string> {
  const playlist = vttPath.replace(/\.vtt$/, '.m3u8');
  await writeFile(playlist, subtitlePlaylistText(relative(dirname(playlist), vttPath), durationS));
  return playlist;
}

/** The text of a one-segment subtitle playlist naming `vtt` (relative to it), which lasts `durationS`. */
export function subtitlePlaylistText(vtt: string, durationS: number): string {
  const d = Math.max(durationS, 0.001);
  const lines = [
    '#EXTM3U',
    '#EXT-X-VERSION:3',
    `#EXT-X-TARGETDURATION:${Math.ceil(d)}`,
    '#EXT-X-MEDIA-SEQUENCE:0',
    '#EXT-X-PLAYLIST-TYPE:VOD',
    `#EXTINF:${d.toFixed(3)},`,
    vtt,
    '#EXT-X-ENDLIST',
  ];
  return `${lines.join('\n')}\n`;
}

/**
 * A finished master playlist with one more captions rendition (`uri` relative to it) in its SUBTITLES group, which
 * every variant then names; unchanged when it lists `uri` already.
 */
export function withSubtitleRendition(master: string, s: { uri: string; name: string; language?: string }): string {
  if (master.includes(`URI=${quote(s.uri)}`)) return master;
  const attrs = ['TYPE=SUBTITLES', 'GROUP-ID="subs"', `NAME=${quote(s.name)}`, 'DEFAULT=NO', 'AUTOSELECT=YES'];
  if (s.language) attrs.push(`LANGUAGE=${quote(s.language)}`);
  attrs.push(`URI=${quote(s.uri)}`);
  const lines = master.replace(/\n+$/, '').split('\n');
  const at = Math.max(...lines.map((l, i) => (l.startsWith('#EXT-X-MEDIA:') || /^#EXT(M3U|-X-VERSION|-X-INDEPENDENT-SEGMENTS)/.test(l) ? i : -1)));
  lines.splice(at + 1, 0, `#EXT-X-MEDIA:${attrs.join(',')}`);
  return `${lines.map((l) => (l.startsWith('#EXT-X-STREAM-INF:') && !l.includes('SUBTITLES=') ? `${l},SUBTITLES="subs"` : l)).join('\n')}\n`;
}

/**
 * Tells players which MPEG-TS time the cue times count from (HLS requires it for TS; without it Safari shows the
 * captions 1.4 s late, the offset ffmpeg's TS muxer adds).
 */
export async function addTimestampMap(vttPath: string, mpegtsZero: number): Promise<void> {
  await writeFile(vttPath, withTimestampMap(await readFile(vttPath, 'utf8'), mpegtsZero));
}

/** `addTimestampMap` on a WebVTT text. */
export function withTimestampMap(text: string, mpegtsZero: number): string {
  if (text.includes('X-TIMESTAMP-MAP')) return text;
  const [header, ...rest] = text.split('\n');
  return [header, `X-TIMESTAMP-MAP=MPEGTS:${Math.max(0, Math.round(mpegtsZero))},LOCAL:00:00:00.000`, ...rest].join('\n');
}
