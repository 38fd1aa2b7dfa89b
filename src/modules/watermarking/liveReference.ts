import { appendFile, mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { PlatformContext } from '../../context.ts';
import { readObject } from '../../storage/readObject.ts';
import { forensicRungOf, forensicTrack, isForensicTrack } from '../../media/live/index.ts';
import type { PackagerSnapshot } from '../../media/live/packaging/packager.ts';
import { GRID_CELLS } from '../../media/watermark/pattern.ts';
import { SAMPLE_FPS } from '../../media/watermark/prepare.ts';
import { readGrid } from '../../media/watermark/signature.ts';
import { channelPrefix, checkpointKey } from '../live/index.ts';

export interface LiveReference {
  /** The unmarked pictures on the detection grid, SAMPLE_FPS a second from the first retained segment's start. */
  reference: Buffer;
  /** Per retained segment: its start (seconds after the first's), duration and media sequence number. */
  segmentStarts: number[];
  segmentDurations: number[];
  sequences: number[];
}

/**
 * A live channel's reference, built when a detection needs it rather than kept while the channel runs: the retained
 * segments (the channel's `retentionSeconds`) of both variants of one marked rung (the picture on the detection grid is
 * the same at every rung) are decoded to the grid and averaged, A + B over 2
 * being the unmarked picture (what the encoder did to the mark cancels). The segment list (sequence numbers, decode
 * times, durations) is the packager's saved state, the one a takeover continues from. Undefined when the channel
 * has published nothing (or nothing is retained).
 */
export async function liveReference(
  ctx: PlatformContext,
  tenantId: string,
  channelId: string,
  /** The asset's height: the marked rung of that height is decoded, else the tallest (any rung reads the same on the grid). */
  height: number | null,
  workDir: string,
): Promise<LiveReference | undefined> {
  const saved = await readObject(ctx.store, checkpointKey(tenantId, channelId)).catch(() => undefined);
  if (!saved) return undefined;
  const snapshot = JSON.parse(saved.toString('utf8')) as PackagerSnapshot;
  const marked = snapshot.tracks.filter((t) => isForensicTrack(t.name)).sort((a, b) => (b.height ?? 0) - (a.height ?? 0));
  const track = (marked.find((t) => t.height === height) ?? marked[0])?.name;
  const rung = track && forensicRungOf(track);
  if (!rung) return undefined;
  const tracks = ([0, 1] as const).map((v) => snapshot.tracks.find((t) => t.name === forensicTrack(v, rung)));
  const timescale = tracks[0]?.timescale;
  if (!tracks[0] || !tracks[1] || !timescale) return undefined;
  const inBoth = new Set(tracks[1].segments.map((s) => s.sequence));
  const segments = tracks[0].segments.filter((s) => inBoth.has(s.sequence));
  if (segments.length === 0) return undefined;
  const t0 = segments[0].decodeTime / timescale;
  const last = segments.at(-1)!;
  const frames = Math.round((last.decodeTime / timescale + last.duration - t0) * SAMPLE_FPS);
  const prefix = channelPrefix(tenantId, channelId);
  const sums = new Uint16Array(frames * GRID_CELLS);
  await mkdir(workDir, { recursive: true });
  try {
    for (const track of tracks) {
      const own = track!.segments.filter((s) => inBoth.has(s.sequence));
      // One file per run (one init segment): the decoder reads the run's segments as one fragmented MP4.
      for (let from = 0; from < own.length;) {
        let to = from + 1;
        while (to < own.length && own[to].initKey === own[from].initKey) to++;
        const file = join(workDir, `${track!.name}-${from}.mp4`);
        await writeFile(file, await readObject(ctx.store, prefix + own[from].initKey));
        for (const s of own.slice(from, to)) await appendFile(file, await readObject(ctx.store, `${prefix}${track!.name}/${s.sequence}.m4s`));
        const grid = await readGrid(file);
        const at = Math.round((own[from].decodeTime / timescale - t0) * SAMPLE_FPS) * GRID_CELLS;
        for (let i = 0; i < grid.length && at + i < sums.length; i++) sums[at + i] += grid[i];
        await rm(file, { force: true });
        from = to;
      }
    }
  } finally {
    await rm(workDir, { recursive: true, force: true });
  }
  return {
    reference: Buffer.from(sums.map((v) => Math.round(v / 2))),
    segmentStarts: segments.map((s) => s.decodeTime / timescale - t0),
    segmentDurations: segments.map((s) => s.duration),
    sequences: segments.map((s) => s.sequence),
  };
}
