/**
 * What the media pipeline reads from a preset. The catalogue itself (the data) is the transcoder module's
 * (`modules/transcoder/presets.ts`); the pipeline depends only on these shapes.
 */

/** One rung of a ladder: the media pipeline turns this into one ffmpeg output stream. */
export interface Rendition {
  name: string;
  width: number;
  height: number;
  videoBitrateKbps: number;
  maxrateKbps: number;
  profile: 'baseline' | 'main' | 'high';
}

/**
 * How an output is packaged: `hls` (MPEG-TS segments), `dash` (fMP4), `cmaf` (one set of fMP4 segments
 * referenced by both an HLS playlist and a DASH MPD), `mp4` (progressive download per rendition).
 */
export type Packaging = 'hls' | 'dash' | 'cmaf' | 'mp4';

export interface Preset {
  id: string;
  name: string;
  description: string;
  mediaType: 'video' | 'audio';
  packaging: Packaging[];
  /** Empty for audio-only presets and for `noTranscoding`. */
  ladder: Rendition[];
  audio: { codec: 'aac'; bitrateKbps: number; channels: number; sampleRate: number };
  segmentSeconds: number;
  /** libx264 speed/quality trade-off for every rung (see BENCHMARKS.md for what `veryfast` costs on a 1080p ladder). */
  x264Preset: 'ultrafast' | 'superfast' | 'veryfast' | 'faster' | 'fast' | 'medium' | 'slow';
  createsDownload: boolean;
  noTranscoding: boolean;
  hasVerticalOrientation: boolean;
  allowedExtensionsFile: readonly string[];
  /**
   * Encrypted output (a DRM endpoint): `HlsDrm` is HLS with AES-128 segments, `DashDrm` DASH with CENC (`cenc` or
   * `cbcs`), with the content's keys (its asset's drmKeyMode). A `cmaf` output is `cbcs` and has both endpoints from one
   * set of segments: HLS with SAMPLE-AES (`HlsDrm`, named here) and DASH (`DashDrm`). Absent: clear output.
   */
  protection?: { endpointType: 'HlsDrm' | 'DashDrm'; scheme: 'aes-128' | 'cenc' | 'cbcs' };
}
