/**
 * The live playlists' discontinuity numbers: which a new run gets, and the tags that mark where they change. Every
 * track of a channel follows the same numbers (the packager's media playlists, the caption playlists).
 */

/**
 * The discontinuity number of every segment a new run publishes, the same in every track: the last published
 * segment's, plus one unless the run `continues` the stream (same init segments, its media time starting where the
 * timeline ended), when players see one stream and no tag is written.
 * One number for all tracks because hls.js pairs a separate audio playlist with the video by it: it does not load an
 * audio playlist whose count is ahead of the video's (a player in CI never started). No tag where the stream goes on:
 * a tag at every switch to the slate and back let hls.js start its video on one side of a fresh tag and its audio on
 * the other, each waiting for the other for ever.
 * Counted on published segments, not on runs: a run that published nothing (a slate cut short by the encoder's return,
 * a run killed with its owner) puts no EXT-X-DISCONTINUITY in the playlists, so it must not move
 * EXT-X-DISCONTINUITY-SEQUENCE either, or players see the sequence jump as the window slides.
 */
export function runDiscontinuity(tracks: readonly { segments: readonly { discontinuity: number }[]; discontinuities: number }[], continues: boolean): number {
  const last = tracks.flatMap((t) => t.segments.slice(-1).map((s) => s.discontinuity));
  if (last.length === 0) return Math.max(0, ...tracks.map((t) => t.discontinuities));
  return Math.max(...last) + (continues ? 0 : 1);
}

/**
 * The tags between a segment of discontinuity number `from` and the next one, of `to`: one per step, because a
 * segment's discontinuity number is, by definition, the tags before it plus EXT-X-DISCONTINUITY-SEQUENCE, and a track
 * that published nothing in a run steps by more than one where the others step by one at a time.
 */
export const discontinuityTags = (from: number, to: number): string[] => Array<string>(Math.max(0, to - from)).fill('#EXT-X-DISCONTINUITY');
