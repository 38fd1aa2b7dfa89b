import { mkdir } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { planChunk, type SourceChunk } from './chunks.ts';
import { sideProcess, type ChunkResult, type ChunkSink } from './chunkOutput.ts';
import type { PartPlaylists } from './chunkPlaylists.ts';
import { mediaPlaylists } from './finish.ts';
import { parseMediaPlaylist, readMediaPlaylist } from './hls.ts';
import { captionFile, chunkHlsArgs, fastStartArgs, type EncodeLayout } from './packaging.ts';
import { publishWhileEncoding } from './progressive.ts';
import { encodeBeside, fastStartMaster, type TranscodeRequest } from './transcode.ts';

const toPosix = (p: string) => p.split('\\').join('/');

/**
 * The chunked path of an HLS output published while it encodes (docs/decisions/vod-chunked.md): each chunk writes
 * final HLS segments of its stretch of the source, the first chunk starts fast and makes the audio and captions of the
 * whole source beside its video (the fast start's two processes), and the output's playlists are laid together from
 * what every chunk has stored (`chunkPlaylists.ts`), so a player starts on the first chunk's first second.
 */

/** Encodes one chunk into HLS segments under `<outDir>/hls/`, handing each to `sink` as ffmpeg writes it. */
export async function encodeHlsChunk(req: TranscodeRequest, chunk: SourceChunk, sink: ChunkSink): Promise<ChunkResult> {
  await mkdir(req.outDir, { recursive: true });
  const first = chunk.index === 0;
  const [plan, side] = await Promise.all([planChunk(req, chunk), first ? sideProcess(req, async (l) => (await fastStartArgs(l)).side) : undefined]);
  const layout: EncodeLayout = {
    outDir: req.outDir,
    preset: req.preset,
    renditions: plan.renditions,
    videoMaps: plan.videoMaps,
    audio: plan.audio,
    captions: plan.captions,
  };
  const args = [...plan.head, ...(await chunkHlsArgs(layout, { index: chunk.index }))];
  const master = fastStartMaster(layout);
  const publisher = publishWhileEncoding(layout, {
    putFile: sink.putFile,
    putText: (path, text) => sink.segments({ [path]: parseMediaPlaylist(text).segments }, { master }),
    // The output is playable when its playlists say so, whichever chunk stored what they need (`sink.segments`).
    playable: async () => {},
    failed: sink.failed,
  });
  const redact = { ...plan.sources.redact, ...side?.redact };
  try {
    await encodeBeside({ args, sideArgs: side?.args, redact }, req.signal, (c) => plan.progress.push(c));
  } finally {
    await publisher.stop();
  }
  const { video, audio } = mediaPlaylists(layout, join(req.outDir, 'hls'), false);
  const playlists: PartPlaylists = {};
  for (const playlist of [...video, ...(first ? audio : [])]) {
    const { segments } = await readMediaPlaylist(playlist);
    for (const s of segments) {
      const file = join(dirname(playlist), s.uri);
      const path = toPosix(relative(req.outDir, file));
      if (!publisher.stored.has(path)) await sink.putFile(path, file);
    }
    playlists[toPosix(relative(req.outDir, playlist))] = segments;
  }
  return { playlists, manifests: { master }, captions: first ? plan.captions.map((_, k) => `hls/${captionFile(k)}`) : [] };
}
