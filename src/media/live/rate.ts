import type { LiveRendition } from './types.ts';

/**
 * How a rendition gets its frame rate and its one key frame per segment. A fixed rate is the `fps` filter's and the
 * GOP a fixed number of frames; a rate that follows the source is capped by `-fpsmax` (the input's rate when lower, so
 * a 25 fps encoder is not padded to 30 with repeated pictures) and its key frames are forced at every segment's
 * start time, whatever the rate turns out to be.
 */
export function rateFilter(r: LiveRendition): string {
  return r.followsSource ? '' : `fps=${r.frameRate},`;
}
export function rateArgs(r: LiveRendition, segmentSeconds: number, stream: string): string[] {
  const gop = String(Math.round(segmentSeconds * r.frameRate));
  const keyFrames = [`-g:${stream}`, gop, `-keyint_min:${stream}`, gop];
  if (!r.followsSource) return keyFrames;
  return [`-fpsmax:${stream}`, String(r.frameRate), `-force_key_frames:${stream}`, `expr:gte(t,n_forced*${segmentSeconds})`, ...keyFrames];
}

/** The slowest frame rate a followed source is planned for (film); a slower one may make a part a frame too long. */
const SLOWEST_FOLLOWED = 24;

/** The lowest rate a rendition may run at: what a chunk's longest frame is planned from. */
export const slowestRate = (r: LiveRendition): number => (r.followsSource ? Math.min(r.frameRate, SLOWEST_FOLLOWED) : r.frameRate);
