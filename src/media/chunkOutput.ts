import { writeFile } from 'node:fs/promises';
import { join, posix } from 'node:path';
import { sourceLadder } from './chunks.ts';
import { initOfKey, chunkedMpd, representationKey, type DashSkeleton } from './chunkMpd.ts';
import { composeChunkedPlaylists, contiguousSegments, playlistTexts, type ChunkPart, type ChunkTracks, type PartPlaylists } from './chunkPlaylists.ts';
import { finishOutputs } from './finish.ts';
import { packagingOf, type EncodeLayout } from './packaging.ts';
import { pickTracks, Sources } from './plan.ts';
import { fastStartMaster, transcodeResult, type TranscodeRequest, type TranscodeResult } from './transcode.ts';

/**
 * What the chunks of an output that write its segments themselves (HLS `chunkHls.ts`, DASH and CMAF `chunkDash.ts`)
 * share: where they store, what they hand back, and the output's manifests laid together from every chunk's record
 * (docs/decisions/vod-chunked.md).
 */

/** The manifests a chunk's record is read with: the HLS master (HLS, CMAF) and the DASH skeleton (DASH, CMAF). */
export interface ChunkManifests {
  master?: string;
  /** The first chunk's only (its video and audio muxers'); the others' are the same video sets. */
  dash?: DashSkeleton;
}

/** Where a chunk's files go as it writes them: the caller's store, and the record of its segments. */
export interface ChunkSink {
  /** Stores a segment (path inside the output directory): final once written. */
  putFile(path: string, absolutePath: string): Promise<void>;
  /** The chunk's media playlists so far, every segment named already stored; with the output's manifests. */
  segments(playlists: PartPlaylists, manifests: ChunkManifests): Promise<void>;
  /** A pass that failed: the next one, or the chunk's end, stores it. */
  failed(e: Error): void;
}

export interface ChunkResult {
  /** The chunk's media playlists, whole; every segment stored. */
  playlists: PartPlaylists;
  manifests: ChunkManifests;
  /** The caption files the first chunk wrote (paths inside the output directory), for the finishing step. */
  captions: string[];
}

/** The streaming folder of an output whose chunks write its segments: `hls`, `dash` or `cmaf`. */
export const streamingOf = (l: Pick<EncodeLayout, 'preset'>): 'hls' | 'dash' | 'cmaf' => packagingOf(l.preset).streaming ?? 'hls';

/** The HLS master of an output published from its chunks (HLS, CMAF), with the ladder's settings as bandwidths. */
export const chunkedMaster = (layout: EncodeLayout): string | undefined => {
  const streaming = streamingOf(layout);
  return streaming === 'dash' ? undefined : fastStartMaster(layout, streaming);
};

/**
 * The first chunk's second process: the source's audio and captions, whole (`argsOf` gives the muxer's options for
 * them); no arguments when the output has neither.
 */
export async function sideProcess(
  req: TranscodeRequest,
  argsOf: (l: EncodeLayout) => Promise<string[]>,
): Promise<{ args?: string[]; redact: Record<string, string> }> {
  const sources = new Sources(req);
  const { audio, captions } = await pickTracks(req, sources, await sources.main());
  const side = await argsOf({ outDir: req.outDir, preset: req.preset, renditions: [], videoMaps: [], audio, captions });
  return { args: side.length > 0 ? ['-y', ...sources.inputs.args, ...side] : undefined, redact: sources.redact };
}

/** The tracks of a DASH or CMAF output's records: its skeleton's representations. */
const tracksOf = (dir: string, dash: DashSkeleton): ChunkTracks => ({
  video: dash.video.map((id) => representationKey(dir, id)),
  audio: dash.audio.map((id) => representationKey(dir, id)),
});

export interface ComposedOutput {
  /** Manifest texts by path inside the output directory: media playlists and the MPD (not the HLS master). */
  files: Record<string, string>;
  /** Every track has a segment: a player can start. */
  playable: boolean;
  /** What the output's endpoints play once playable. */
  manifests: { format: 'HLS' | 'DASH'; manifest: string }[];
}

/**
 * The output's manifests from its chunks' records (in source order): growing ones of the contiguous prefix while it
 * encodes, VOD ones when `final`. Undefined while the first chunk has not described the output yet (DASH, CMAF).
 */
export function composeChunkedOutput(
  l: Pick<EncodeLayout, 'preset'>,
  manifests: ChunkManifests,
  parts: ChunkPart[],
  { final = false, availabilityStart = new Date() }: { final?: boolean; availabilityStart?: Date } = {},
): ComposedOutput | undefined {
  const streaming = streamingOf(l);
  const segmentSeconds = l.preset.segmentSeconds;
  if (streaming === 'hls') {
    if (!manifests.master) return undefined;
    const { playlists, playable } = composeChunkedPlaylists(manifests.master, 'hls', parts, segmentSeconds, final);
    return { files: playlists, playable, manifests: [{ format: 'HLS', manifest: 'hls/master.m3u8' }] };
  }
  if (!manifests.dash) return undefined;
  const { lists, playable } = contiguousSegments(tracksOf(streaming, manifests.dash), parts, final);
  const mpd = `${streaming}/manifest.mpd`;
  const files: Record<string, string> = {
    ...(streaming === 'cmaf' ? playlistTexts(lists, segmentSeconds, final, initOfKey) : {}),
    [mpd]: chunkedMpd(manifests.dash, streaming, lists, { final, availabilityStart, segmentSeconds }),
  };
  return {
    files,
    playable,
    manifests: [...(streaming === 'cmaf' ? [{ format: 'HLS' as const, manifest: 'cmaf/master.m3u8' }] : []), { format: 'DASH', manifest: mpd }],
  };
}

/** Every file the chunks stored, as paths inside the output directory: segments, and fMP4 initialisation segments. */
export const segmentPaths = (parts: PartPlaylists[]): string[] => [
  ...new Set(
    parts.flatMap((p) =>
      Object.entries(p).flatMap(([playlist, segments]) => {
        const dir = posix.dirname(playlist);
        const init = segments[0]?.t !== undefined ? [posix.join(dir, initOfKey(playlist))] : [];
        return [...init, ...segments.map((s) => posix.join(dir, s.uri))];
      }),
    ),
  ),
];

/**
 * Finishes an output whose chunks are all stored (`parts` in source order, their segments and the first chunk's
 * captions already in `outDir`): VOD playlists and static MPD, then the finishing steps of every output (measured
 * master playlist, captions, MP4 downloads). Nothing is encoded or muxed again.
 */
export async function finishChunked(req: TranscodeRequest, parts: PartPlaylists[], manifests: ChunkManifests): Promise<TranscodeResult> {
  const started = performance.now();
  const { sources, source, audio, captions, renditions } = await sourceLadder(req);
  const layout: EncodeLayout = { outDir: req.outDir, preset: req.preset, renditions, videoMaps: [], audio, captions };
  const composed = composeChunkedOutput(
    layout,
    { ...manifests, master: chunkedMaster(layout) },
    parts.map((playlists) => ({ playlists, done: true })),
    { final: true },
  );
  if (!composed) throw new Error('the first chunk did not describe the output');
  for (const [path, text] of Object.entries(composed.files)) await writeFile(join(req.outDir, path), text);
  const planned = performance.now();
  const endpoints = await finishOutputs({ layout, source, signal: req.signal, redact: sources.redact });
  const finished = performance.now();
  return transcodeResult(layout, endpoints, source.durationMs, [], segmentPaths(parts), [started, planned, planned, finished]);
}
