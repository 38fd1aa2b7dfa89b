import { AUDIO_EXTENSIONS, VIDEO_EXTENSIONS } from '../../media/fileTypes.ts';
import type { Preset, Rendition } from '../../media/preset.ts';

export type { Preset, Rendition } from '../../media/preset.ts';

const r = (name: string, width: number, height: number, kbps: number, profile: Rendition['profile'] = 'high'): Rendition => ({
  name,
  width,
  height,
  videoBitrateKbps: kbps,
  maxrateKbps: Math.round(kbps * 1.5),
  profile,
});

const LANDSCAPE = [r('1080p', 1920, 1080, 5000), r('720p', 1280, 720, 2800), r('480p', 854, 480, 1200, 'main'), r('360p', 640, 360, 700, 'main')];
const PORTRAIT = [r('1080p', 1080, 1920, 5000), r('720p', 720, 1280, 2800), r('480p', 480, 854, 1200, 'main')];
const STEREO_128 = { codec: 'aac', bitrateKbps: 128, channels: 2, sampleRate: 48000 } as const;

const base = {
  audio: STEREO_128,
  segmentSeconds: 4,
  x264Preset: 'veryfast' as const,
  createsDownload: false,
  noTranscoding: false,
  hasVerticalOrientation: false,
};

/** The built-in catalogue. Presets are data: the pipeline reads these fields, it never branches on an id. */
export const PRESETS: readonly Preset[] = [
  {
    ...base,
    id: 'hls-h264-ladder',
    name: 'HLS H.264 ladder',
    description: 'Adaptive HLS (MPEG-TS segments): 1080p, 720p, 480p and 360p H.264 with AAC stereo',
    mediaType: 'video',
    packaging: ['hls'],
    ladder: LANDSCAPE,
    allowedExtensionsFile: VIDEO_EXTENSIONS,
  },
  {
    ...base,
    id: 'dash-h264-ladder',
    name: 'DASH H.264 ladder',
    description: 'Adaptive MPEG-DASH (fMP4 segments): 1080p, 720p, 480p and 360p H.264 with AAC stereo',
    mediaType: 'video',
    packaging: ['dash'],
    ladder: LANDSCAPE,
    allowedExtensionsFile: VIDEO_EXTENSIONS,
  },
  {
    ...base,
    id: 'cmaf-h264-ladder',
    name: 'HLS + DASH (CMAF) H.264 ladder',
    description: 'One set of fMP4 (CMAF) segments served as both HLS and MPEG-DASH: 1080p, 720p, 480p, 360p',
    mediaType: 'video',
    packaging: ['cmaf'],
    ladder: LANDSCAPE,
    allowedExtensionsFile: VIDEO_EXTENSIONS,
  },
  {
    ...base,
    id: 'hls-h264-ladder-download',
    name: 'HLS H.264 ladder with MP4 downloads',
    description: 'Adaptive HLS as hls-h264-ladder, plus a progressive MP4 download of every rendition',
    mediaType: 'video',
    packaging: ['hls', 'mp4'],
    ladder: LANDSCAPE,
    createsDownload: true,
    allowedExtensionsFile: VIDEO_EXTENSIONS,
  },
  {
    ...base,
    id: 'mp4-h264-download',
    name: 'MP4 downloads',
    description: 'Progressive MP4 files (fast start) at 1080p and 720p, H.264 with AAC stereo',
    mediaType: 'video',
    packaging: ['mp4'],
    ladder: LANDSCAPE.slice(0, 2),
    createsDownload: true,
    allowedExtensionsFile: VIDEO_EXTENSIONS,
  },
  {
    ...base,
    id: 'hls-h264-vertical',
    name: 'HLS H.264 vertical ladder',
    description: 'Adaptive HLS for portrait (9:16) video: 1080x1920, 720x1280 and 480x854',
    mediaType: 'video',
    packaging: ['hls'],
    ladder: PORTRAIT,
    hasVerticalOrientation: true,
    allowedExtensionsFile: VIDEO_EXTENSIONS,
  },
  {
    ...base,
    id: 'audio-aac',
    name: 'Audio only (AAC)',
    description: 'AAC stereo 128 kb/s as HLS audio and an M4A download; video is dropped',
    mediaType: 'audio',
    packaging: ['hls', 'mp4'],
    ladder: [],
    createsDownload: true,
    allowedExtensionsFile: [...AUDIO_EXTENSIONS, ...VIDEO_EXTENSIONS],
  },
  {
    ...base,
    id: 'remux-hls-mp4',
    name: 'Remux only (no transcoding)',
    description: 'Copies the H.264/AAC source streams as they are into HLS and an MP4 download; fastest, no quality loss',
    mediaType: 'video',
    packaging: ['hls', 'mp4'],
    ladder: [],
    noTranscoding: true,
    createsDownload: true,
    allowedExtensionsFile: ['.mp4', '.m4v', '.mov', '.mkv', '.ts', '.flv'],
  },
  {
    ...base,
    id: 'hls-h264-ladder-aes128',
    name: 'HLS H.264 ladder, AES-128 encrypted (HlsDrm)',
    description: 'Adaptive HLS as hls-h264-ladder, every segment encrypted with AES-128; players fetch the key with a DRM token',
    mediaType: 'video',
    packaging: ['hls'],
    ladder: LANDSCAPE,
    allowedExtensionsFile: VIDEO_EXTENSIONS,
    protection: { endpointType: 'HlsDrm', scheme: 'aes-128' },
  },
  {
    ...base,
    id: 'dash-h264-ladder-cenc',
    name: 'DASH H.264 ladder, CENC cenc (DashDrm)',
    description: 'Adaptive MPEG-DASH as dash-h264-ladder, Common Encryption (AES-CTR, cenc); ClearKey licenses with a DRM token',
    mediaType: 'video',
    packaging: ['dash'],
    ladder: LANDSCAPE,
    allowedExtensionsFile: VIDEO_EXTENSIONS,
    protection: { endpointType: 'DashDrm', scheme: 'cenc' },
  },
  {
    ...base,
    id: 'dash-h264-ladder-cbcs',
    name: 'DASH H.264 ladder, CENC cbcs (DashDrm)',
    description: 'Adaptive MPEG-DASH as dash-h264-ladder, Common Encryption (AES-CBC 1:9 pattern, cbcs); ClearKey licenses with a DRM token',
    mediaType: 'video',
    packaging: ['dash'],
    ladder: LANDSCAPE,
    allowedExtensionsFile: VIDEO_EXTENSIONS,
    protection: { endpointType: 'DashDrm', scheme: 'cbcs' },
  },
  {
    ...base,
    id: 'cmaf-h264-ladder-cbcs',
    name: 'HLS + DASH (CMAF) H.264 ladder, cbcs: HLS SAMPLE-AES (HlsDrm) and DASH (DashDrm)',
    description:
      'One set of fMP4 (CMAF) segments as cmaf-h264-ladder, Common Encryption cbcs: HLS with SAMPLE-AES and DASH, both through EME ClearKey; licenses with a DRM token',
    mediaType: 'video',
    packaging: ['cmaf'],
    ladder: LANDSCAPE,
    allowedExtensionsFile: VIDEO_EXTENSIONS,
    protection: { endpointType: 'HlsDrm', scheme: 'cbcs' },
  },
];

export const presetById = (id: string): Preset | undefined => PRESETS.find((p) => p.id === id);
