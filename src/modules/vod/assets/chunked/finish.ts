import { createWriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { PlatformContext } from '../../../../context.ts';
import { finishChunked, segmentPaths, streamingOf } from '../../../../media/chunkOutput.ts';
import type { TranscodeRequest, TranscodeResult } from '../../../../media/transcode.ts';
import { outputPrefix } from '../../storageKeys.ts';
import { PermanentError, type TranscodeJob } from '../outputs.ts';
import type { vodOutputChunks } from '../tables.ts';
import { partDir } from './parts.ts';

/** Files fetched from the store at once. */
const PARALLEL_GETS = 8;

export async function download(ctx: PlatformContext, key: string, path: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await pipeline(await ctx.store.getStream(key), createWriteStream(path));
}

/**
 * Finishes an output whose chunks wrote its segments (already stored and published): fetches them and the first
 * chunk's captions, then writes the VOD playlists or static MPD, the measured master playlist, the captions and the MP4
 * downloads.
 */
export async function finishChunkedOutput(
  ctx: PlatformContext,
  j: TranscodeJob,
  req: TranscodeRequest,
  parts: (typeof vodOutputChunks.$inferSelect)[],
): Promise<TranscodeResult> {
  const prefix = outputPrefix(j.tenantId, j.assetId, j.outputId);
  const playlists = parts.map((p) => p.segments);
  const files = segmentPaths(playlists);
  for (let i = 0; i < files.length; i += PARALLEL_GETS) {
    await Promise.all(files.slice(i, i + PARALLEL_GETS).map((f) => download(ctx, prefix + f, join(req.outDir, f))));
  }
  const captions = req.tracks.filter((t) => t.type === 'Caption');
  for (const k of captions.keys()) {
    const file = `${streamingOf(req)}/subs/sub_${k}.vtt`;
    await download(ctx, partDir(j, parts[0].index) + file, join(req.outDir, file));
  }
  return finishChunked(req, playlists, { dash: parts[0].dash ?? undefined }).catch((e: Error) => {
    throw new PermanentError(e.message);
  });
}
