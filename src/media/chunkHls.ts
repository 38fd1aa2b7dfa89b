import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join, posix, relative } from 'node:path';
import { sourceLadder, planChunk, type SourceChunk } from './chunks.ts';
import { composeChunkedPlaylists, type PartPlaylists } from './chunkPlaylists.ts';
import { finishOutputs, mediaPlaylists } from './finish.ts';
import { parseMediaPlaylist, readMediaPlaylist } from './hls.ts';
import { captionFile, chunkHlsArgs, fastStartArgs, type EncodeLayout } from './packaging.ts';
import { pickTracks, Sources } from './plan.ts';
import { publishWhileEncoding } from './progressive.ts';
import { encodeBeside, fastStartMaster, transcodeResult, type TranscodeRequest, type TranscodeResult } from './transcode.ts';

/**
 * The chunked path of an HLS output published while it encodes (docs/decisions/vod-chunked.md): each chunk writes
 * final HLS segments of its stretch of the source, the first chunk starts fast and makes the audio and captions of the
 * whole source beside its video (the fast start's two processes), and the output's playlists are laid together from
 * what every chunk has stored (`chunkPlaylists.ts`), so a player starts on the first chunk's first second.
 */

/** Where a chunk's files go as it writes them: the caller's store, and the record of its segments. */
export interface ChunkSink {
  /** Stores a segment (path inside the output directory): final once written. */
  putFile(path: string, absolutePath: string): Promise<void>;
  /** The chunk's media playlists so far, every segment named already stored; with the output's growing master. */
  segments(playlists: PartPlaylists, master: string): Promise<void>;
  /** A pass that failed: the next one, or the chunk's end, stores it. */
  failed(e: Error): void;
}

export interface HlsChunkResult {
  /** The chunk's media playlists, whole; every segment stored. */
  playlists: PartPlaylists;
  master: string;
  /** The caption files the first chunk wrote (paths inside the output directory), for the finishing step. */
  captions: string[];
}

const toPosix = (p: string) => p.split('\\').join('/');

/** The first chunk's second process: the source's audio and captions, whole, as a fast start's second process. */
async function audioAndCaptions(req: TranscodeRequest): Promise<{ args?: string[]; redact: Record<string, string> }> {
  const sources = new Sources(req);
  const { audio, captions } = await pickTracks(req, sources, await sources.main());
  const { side } = await fastStartArgs({ outDir: req.outDir, preset: req.preset, renditions: [], videoMaps: [], audio, captions });
  return { args: side.length > 0 ? ['-y', ...sources.inputs.args, ...side] : undefined, redact: sources.redact };
}

/** Encodes one chunk into HLS segments under `<outDir>/hls/`, handing each to `sink` as ffmpeg writes it. */
export async function encodeHlsChunk(req: TranscodeRequest, chunk: SourceChunk, sink: ChunkSink): Promise<HlsChunkResult> {
  await mkdir(req.outDir, { recursive: true });
  const first = chunk.index === 0;
  const [plan, side] = await Promise.all([planChunk(req, chunk), first ? audioAndCaptions(req) : undefined]);
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
    putText: (path, text) => sink.segments({ [path]: parseMediaPlaylist(text).segments }, master),
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
  return { playlists, master, captions: first ? plan.captions.map((_, k) => `hls/${captionFile(k)}`) : [] };
}

/** Every segment file the chunks stored, as paths inside the output directory. */
export const segmentPaths = (parts: PartPlaylists[]): string[] =>
  parts.flatMap((p) => Object.entries(p).flatMap(([playlist, segments]) => segments.map((s) => posix.join(posix.dirname(playlist), s.uri))));

/**
 * Finishes an output whose chunks are all stored (`parts` in source order, their segments and the first chunk's
 * captions already in `outDir`): VOD playlists, then the finishing steps of every output (measured master playlist,
 * captions, MP4 downloads). Nothing is encoded or muxed again.
 */
export async function finishChunkedHls(req: TranscodeRequest, parts: PartPlaylists[]): Promise<TranscodeResult> {
  const started = performance.now();
  const { sources, source, audio, captions, renditions } = await sourceLadder(req);
  const layout: EncodeLayout = { outDir: req.outDir, preset: req.preset, renditions, videoMaps: [], audio, captions };
  const composed = composeChunkedPlaylists(
    fastStartMaster(layout),
    'hls',
    parts.map((playlists) => ({ playlists, done: true })),
    req.preset.segmentSeconds,
    true,
  );
  for (const [path, text] of Object.entries(composed.playlists)) await writeFile(join(req.outDir, path), text);
  const planned = performance.now();
  const endpoints = await finishOutputs({ layout, source, signal: req.signal, redact: sources.redact });
  const finished = performance.now();
  return transcodeResult(layout, endpoints, source.durationMs, [], segmentPaths(parts), [started, planned, planned, finished]);
}
