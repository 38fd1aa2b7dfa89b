import { mkdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { planChunk, type SourceChunk } from './chunks.ts';
import { chunkTimelines, dashInitName, dashSegmentName, dashSkeleton, representationKey } from './chunkMpd.ts';
import { chunkedMaster, sideProcess, streamingOf, type ChunkResult, type ChunkSink } from './chunkOutput.ts';
import type { PartPlaylists } from './chunkPlaylists.ts';
import type { RepresentationTimeline } from './mpdTimeline.ts';
import { captionFile, chunkDashArgs, dashChunkNames, type EncodeLayout } from './packaging.ts';
import { runPasses } from './progressive.ts';
import { encodeBeside, type TranscodeRequest } from './transcode.ts';

/**
 * The chunked path of a DASH or CMAF output published while it encodes (docs/decisions/vod-chunked.md): each chunk's
 * muxer writes fragmented MP4 segments of its stretch with the source's decode times, the first chunk starts fast and
 * makes the audio and captions of the whole source beside its video, and every segment is stored under its start time
 * (`chunkMpd.ts`), so that the output's MPD (and CMAF's playlists) are laid together from what the chunks stored.
 */

/** An MPD ffmpeg has finished writing (it writes a new one after each segment), or undefined. */
const readMpd = async (path: string) => {
  const text = await readFile(path, 'utf8').catch(() => undefined);
  return text?.includes('</MPD>') ? text : undefined;
};

const isFile = async (path: string) => (await stat(path).catch(() => undefined))?.isFile() === true;

/** Encodes one chunk into fMP4 segments under `<outDir>/<dash|cmaf>/`, storing each under its time as ffmpeg writes it. */
export async function encodeDashChunk(req: TranscodeRequest, chunk: SourceChunk, sink: ChunkSink): Promise<ChunkResult> {
  await mkdir(req.outDir, { recursive: true });
  const first = chunk.index === 0;
  const [plan, side] = await Promise.all([planChunk(req, chunk), first ? sideProcess(req, (l) => chunkDashArgs(l, { part: 'audio' })) : undefined]);
  const layout: EncodeLayout = {
    outDir: req.outDir,
    preset: req.preset,
    renditions: plan.renditions,
    videoMaps: plan.videoMaps,
    audio: plan.audio,
    captions: plan.captions,
  };
  const streaming = streamingOf(layout);
  const dir = join(req.outDir, streaming);
  const args = [...plan.head, ...(await chunkDashArgs(layout, { part: 'video', index: chunk.index }))];
  const videoMpd = join(dir, dashChunkNames({ part: 'video', index: chunk.index }).manifest);
  const audioMpd = first && layout.audio.length > 0 ? join(dir, dashChunkNames({ part: 'audio' }).manifest) : undefined;
  const master = chunkedMaster(layout);
  const stored = new Set<string>();
  const playlists: PartPlaylists = {};

  /** Stores what the muxers have listed (an init segment only from the first chunk) and records it; the output's MPD follows. */
  const pass = async () => {
    const [video, audio] = await Promise.all([readMpd(videoMpd), audioMpd ? readMpd(audioMpd) : undefined]);
    if (!video || (audioMpd && !audio)) return;
    const reps = [...chunkTimelines(video), ...(audio ? chunkTimelines(audio, layout.renditions.length) : [])];
    let grew = false;
    for (const rep of reps) grew = (await storeListed(rep)) || grew;
    if (grew) await sink.segments({ ...playlists }, { master, ...(first ? { dash: dashSkeleton(video, audio) } : {}) });
  };
  /** Stores a representation's files in order, as far as they are there; true when its record grew. */
  const storeListed = async (rep: RepresentationTimeline): Promise<boolean> => {
    const key = representationKey(streaming, rep.id);
    const files = [...(first && rep.init ? [{ local: rep.init, path: `${streaming}/${dashInitName(rep.id)}` }] : [])];
    for (const s of rep.segments) files.push({ local: s.file, path: `${streaming}/${dashSegmentName(rep.id, s.t)}` });
    for (const f of files) {
      if (stored.has(f.path)) continue;
      if (!(await isFile(join(dir, f.local)))) break;
      await sink.putFile(f.path, join(dir, f.local));
      stored.add(f.path);
    }
    const listed = rep.segments
      .filter((s) => stored.has(`${streaming}/${dashSegmentName(rep.id, s.t)}`))
      .map((s) => ({ uri: dashSegmentName(rep.id, s.t), durationS: s.d / rep.timescale, t: s.t, d: s.d }));
    if (listed.length === (playlists[key]?.length ?? 0)) return false;
    playlists[key] = listed;
    return true;
  };

  await mkdir(dir, { recursive: true });
  const passes = runPasses([dir], pass, sink.failed);
  const redact = { ...plan.sources.redact, ...side?.redact };
  try {
    await encodeBeside({ args, sideArgs: side?.args, redact }, req.signal, (c) => plan.progress.push(c));
  } finally {
    await passes.stop();
  }
  // The muxers' last MPDs list every segment: what the passes did not store yet is stored and recorded now.
  await pass();
  const [video, audio] = await Promise.all([readMpd(videoMpd), audioMpd ? readMpd(audioMpd) : undefined]);
  if (!video) throw new Error('the chunk muxer wrote no MPD');
  return {
    playlists,
    manifests: { master, ...(first ? { dash: dashSkeleton(video, audio) } : {}) },
    captions: first ? plan.captions.map((_, k) => `${streaming}/${captionFile(k)}`) : [],
  };
}
