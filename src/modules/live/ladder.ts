import type { LiveRendition } from './media.ts';
import type { QualityRow } from './tables.ts';

/** The ladder a channel gets when its create body names no `qualities` (each at the encoder's own frame rate). */
export const DEFAULT_QUALITIES: Pick<QualityRow, 'resolution' | 'frameRate'>[] = [{ resolution: '720p' }, { resolution: '480p' }, { resolution: '360p' }];

/**
 * The spec's default frame rate, 30, is the most a quality without `frameRate` is encoded at: below it the encoder's
 * own rate is kept (25 stays 25, not 30 with every fifth picture repeated); above it, 30.
 */
export const DEFAULT_FRAME_RATE = 30;

export const MIN_HEIGHT = 144;
export const MAX_HEIGHT = 2160;

/** The height a quality names: `720p` → 720, `{ intValue: 720 }` → 720; undefined when it names none we encode. */
export function qualityHeight(resolution: QualityRow['resolution']): number | undefined {
  const h = typeof resolution === 'string' ? Number(/^(\d{3,4})p$/i.exec(resolution.trim())?.[1]) : resolution.intValue;
  return Number.isInteger(h) && h >= MIN_HEIGHT && h <= MAX_HEIGHT ? h : undefined;
}

export const qualityLabel = (q: Pick<QualityRow, 'height'>): string => `${q.height}p`;

const even = (n: number) => Math.max(2, Math.round(n / 2) * 2);

/**
 * Video bitrate of a rung, kbps: about 0.1 bit per pixel per frame at 30 fps, the usual H.264 ladder figures
 * (720p30 ≈ 2800, 1080p30 ≈ 5000 with the square-root curve), scaled with the frame rate.
 */
function bitrateKbps(width: number, height: number, frameRate: number): number {
  const base = Math.round((width * height) ** 0.75 * 0.075);
  return Math.max(200, Math.round(base * Math.min(2, frameRate / 30)));
}

/**
 * The renditions the media layer encodes, tallest first. A quality is its frame's short side: 16:9 landscape, or 9:16
 * when the channel's endpoints are vertical. The media layer never upscales (docs/decisions/live.md); the names stay stable.
 */
export function renditionsOf(qualities: QualityRow[], vertical: boolean): LiveRendition[] {
  const seen = new Set<number>();
  return [...qualities]
    .sort((a, b) => b.height - a.height)
    .filter((q) => !seen.has(q.height) && seen.add(q.height))
    .map((q) => {
      const long = even((q.height * 16) / 9);
      const width = vertical ? q.height : long;
      const height = vertical ? long : q.height;
      const frameRate = q.frameRate ?? DEFAULT_FRAME_RATE;
      const rendition = { name: qualityLabel(q), width, height, videoBitrate: bitrateKbps(width, height, frameRate) * 1000, frameRate };
      return q.frameRate === undefined ? { ...rendition, followsSource: true } : rendition;
    });
}
