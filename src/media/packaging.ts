import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Packaging, Preset } from './preset.ts';
import { audioEncoderArgs, videoEncoderArgs, type Keyframes, type PlannedRendition } from './ladder.ts';

/** An audio or caption track as the outputs carry it: where ffmpeg reads it (`-map` spec) and how players label it. */
export interface OutputTrack {
  map: string;
  name: string;
  language?: string;
}

/** Everything an output's muxers need: the encoded picture per rung (filter labels, or the source stream when copying). */
export interface EncodeLayout {
  outDir: string;
  preset: Preset;
  renditions: PlannedRendition[];
  /** `-map` target per rendition: `[v0]` filter outputs, or `0:0` when the preset copies the source. */
  videoMaps: string[];
  audio: OutputTrack[];
  captions: OutputTrack[];
  /** The streams are encoded already (the chunked path's stitch, `chunks.ts`): muxed as they are. */
  copy?: boolean;
}

/**
 * The streaming packaging of a preset (at most one), and whether MP4 downloads come with it. Each packaging writes into
 * the output directory's folder of its own name (`hls/`, `dash/`, `cmaf/`, `mp4/`).
 */
export function packagingOf(preset: Preset): { streaming?: Exclude<Packaging, 'mp4'>; mp4: boolean } {
  const streaming = preset.packaging.filter((p): p is Exclude<Packaging, 'mp4'> => p !== 'mp4');
  if (streaming.length > 1) throw new Error(`preset ${preset.id}: at most one of hls, dash, cmaf (cmaf serves both HLS and DASH)`);
  const mp4 = preset.packaging.includes('mp4');
  if (mp4 && streaming[0] === 'dash') throw new Error(`preset ${preset.id}: MP4 downloads come with hls or cmaf, not dash`);
  return { streaming: streaming[0], mp4 };
}

/** Names that go into paths and ffmpeg's var_stream_map: letters, digits, `_` and `-` only. */
export const safeName = (name: string) => name.replace(/[^A-Za-z0-9_-]/g, '_') || 'x';

export const audioName = (k: number) => `audio_${k}`;
export const captionFile = (k: number) => `subs/sub_${k}.vtt`;

const LANGUAGE = /^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$/;
export const validLanguage = (l?: string) => (l && LANGUAGE.test(l) ? l : undefined);

/** `-metadata:s:a:0 language=eng …` for the audio (`a`) or subtitle (`s`) streams of one output, in order. */
const languageTags = (kind: 'a' | 's', tracks: OutputTrack[]) =>
  tracks.flatMap((t, k) => (validLanguage(t.language) ? [`-metadata:s:${kind}:${k}`, `language=${t.language}`] : []));

/** Encoder (or copy) options of one output holding these rungs and these audio tracks, languages tagged. */
function codecArgs(l: EncodeLayout, renditions: PlannedRendition[], audio = l.audio, keyframes?: Keyframes): string[] {
  const copy = l.preset.noTranscoding || l.copy;
  const args = copy ? ['-c:v', 'copy'] : renditions.length > 0 ? videoEncoderArgs(l.preset, renditions, keyframes) : [];
  if (audio.length > 0) args.push(...(copy ? ['-c:a', 'copy'] : audioEncoderArgs(l.preset)));
  return [...args, ...languageTags('a', audio)];
}

const maps = (targets: string[]) => targets.flatMap((m) => ['-map', m]);

/** Fast start: the first segment's time in segments of this many seconds (docs/decisions/vod-assets.md). */
export const FAST_START_SEGMENT_S = 0.5;

/**
 * The segment duration a fast start gives the DASH muxer's video set. It cuts at the first keyframe at least this long
 * after its last cut, while the keyframes are forced on the first frame at or past each half second: at 25 fps they fall
 * 0.52 s and then 0.48 s apart, and with half a second the muxer skipped every other one (0.52, 1, 1, 1, 4.48). One
 * tenth of a second less than the grid lets it cut at each for every rate of 10 fps and up.
 */
const FAST_START_DASH_SEGMENT_S = FAST_START_SEGMENT_S - 0.1;

/**
 * Where both processes of a fast start put the source's zero on the MPEG-TS clock, ahead of the muxer's own 1.4 s:
 * far enough that no stream's first decode time is negative, which each muxer would otherwise shift away by its own
 * stream's amount (the video's B-frame delay, the audio's AAC priming), and the two would drift apart by the difference.
 */
const FAST_START_TS_OFFSET_S = 1;

/**
 * Whether an output starts fast: a streaming ladder encoded here and published while it encodes, whose video rungs
 * begin with half-second segments, so that a player waits for half a second of the ladder rather than one whole segment.
 * An HLS output's audio and captions are made by a second process that runs ahead of the video (`fastStartArgs`); a
 * DASH or CMAF one stays one process, its video adaptation set given half-second segments (`dashArgs`), which the audio's
 * follow until the video's segments are the preset's. Encrypted outputs are never published while encoding; a copy
 * cannot place keyframes.
 */
export const startsFast = (l: EncodeLayout): boolean =>
  packagingOf(l.preset).streaming !== undefined &&
  !l.preset.protection &&
  !l.preset.noTranscoding &&
  !l.copy &&
  l.renditions.length > 0 &&
  l.preset.segmentSeconds > FAST_START_SEGMENT_S;

/**
 * One video chunk of the chunked path written as HLS (`chunkHlsArgs`): its segments are named by the chunk, so that no
 * two chunks' names meet whatever their segment counts, and only the first chunk starts fast. The HLS muxer counts
 * segment times from a chunk's first frame, so the keyframes are forced from it too: a chunk's segments are the
 * preset's from its first frame, which lies less than a frame past its boundary (the last one of a chunk ends where
 * the next chunk's first frame is).
 */
export interface HlsChunk {
  index: number;
}

/** A chunk's segment names: `c0003_00000.ts` is the first segment of the fourth chunk. */
const chunkSegmentName = (index: number) => `c${String(index).padStart(4, '0')}_%05d.ts`;

/** The HLS muxer over the video rungs and audio tracks given (a fast start muxes them in two processes). */
function hlsArgs(l: EncodeLayout, dir: string, part: 'all' | 'video' | 'audio' = 'all', chunk?: HlsChunk): string[] {
  const renditions = part === 'audio' ? [] : l.renditions;
  const audio = part === 'video' ? [] : l.audio;
  const groups = part === 'all' && l.audio.length > 0 ? ',agroup:audio' : '';
  const streamMap = [
    ...renditions.map((r, i) => `v:${i}${groups},name:${safeName(r.name)}`),
    ...audio.map((_, k) => `a:${k}${groups},name:${audioName(k)}${k === 0 && groups ? ',default:yes' : ''}`),
  ].join(' ');
  const fast = part !== 'all';
  // A chunk after the first cuts the preset's segments from its first frame on.
  const head = fast && (chunk === undefined || chunk.index === 0);
  return [
    ...maps([...(part === 'audio' ? [] : l.videoMaps), ...audio.map((a) => a.map)]),
    ...codecArgs(l, renditions, audio, head ? { fastStartS: FAST_START_SEGMENT_S } : undefined),
    ...(fast ? ['-output_ts_offset', String(FAST_START_TS_OFFSET_S)] : []),
    '-f',
    'hls',
    '-hls_time',
    String(l.preset.segmentSeconds),
    // With an unbounded playlist ffmpeg cuts every segment at this time, so only the video gets it: its keyframes (the
    // only places a video segment can end) fall every half second in the first segment and on the boundaries after it.
    ...(part === 'video' && head ? ['-hls_init_time', String(FAST_START_SEGMENT_S)] : []),
    // EVENT playlists are rewritten after every segment, so the output plays while it is encoded (VOD ones only at the
    // end); the finishing step marks them VOD.
    '-hls_playlist_type',
    'event',
    '-hls_flags',
    'independent_segments',
    '-hls_segment_type',
    'mpegts',
    '-hls_segment_filename',
    join(dir, '%v', chunk ? chunkSegmentName(chunk.index) : 'seg_%05d.ts'),
    // ffmpeg's own master playlist makes the output playable while it is being written; ours replaces it at the end.
    // A fast start's two processes each see half of it: the caller writes one (`fastStartMaster`).
    ...(fast ? [] : ['-master_pl_name', 'master.m3u8']),
    '-var_stream_map',
    streamMap,
    join(dir, '%v', 'index.m3u8'),
  ];
}

/**
 * One process of the chunked path's DASH or CMAF (docs/decisions/vod-chunked.md): a chunk's video rungs (`video`), or
 * the whole source's audio tracks and captions beside the first chunk (`audio`). Each writes its own MPD and files
 * under names no other process of the output uses; the segments are stored under names of the output's own (their
 * times, `chunkDash.ts`). A chunk's fragments keep the source's decode times (`frag_discont`, with the input's
 * `-copyts`), so that every chunk's segments play after the first chunk's initialisation segment.
 */
export type DashChunk = { part: 'video'; index: number } | { part: 'audio' };

/** The MPD and file names of one process of the chunked path's DASH (`DashChunk`). */
export function dashChunkNames(chunk: DashChunk): { manifest: string; init: string; media: string } {
  if (chunk.part === 'audio') return { manifest: 'audio.mpd', init: 'init-a$RepresentationID$.m4s', media: 'a-$RepresentationID$-$Number%05d$.m4s' };
  const c = `c${String(chunk.index).padStart(4, '0')}`;
  return { manifest: `${c}.mpd`, init: `${c}-init-v$RepresentationID$.m4s`, media: `${c}-v$RepresentationID$-$Number%05d$.m4s` };
}

function dashArgs(
  l: EncodeLayout,
  dir: string,
  { alsoHls = false, fast = false, chunk }: { alsoHls?: boolean; fast?: boolean; chunk?: DashChunk } = {},
): string[] {
  const renditions = chunk?.part === 'audio' ? [] : l.renditions;
  const audio = chunk?.part === 'video' ? [] : l.audio;
  const videoMaps = renditions.length > 0 ? l.videoMaps : [];
  const n = renditions.length;
  // One adaptation set for the video rungs, one per audio track: each language is its own choice, not a rung. A fast
  // start gives the video's set half-second segments, which can end only on its keyframes: every half second in the
  // first segment's time, then on the preset's boundaries. The muxer cuts the audio where the video's segments end meanwhile.
  const video = fast ? `id=0,seg_duration=${FAST_START_DASH_SEGMENT_S},streams=v` : 'id=0,streams=v';
  // The muxer numbers its sets from 0 (the chunked path's audio muxer too: its sets are numbered again in `chunkMpd.ts`).
  const first = n > 0 ? 1 : 0;
  const sets = [...(n > 0 ? [video] : []), ...audio.map((_, k) => `id=${first + k},streams=${n + k}`)].join(' ');
  const names = chunk
    ? dashChunkNames(chunk)
    : { manifest: 'manifest.mpd', init: 'init-$RepresentationID$.m4s', media: 'chunk-$RepresentationID$-$Number%05d$.m4s' };
  return [
    ...maps([...videoMaps, ...audio.map((a) => a.map)]),
    ...codecArgs(l, renditions, audio, fast ? { fastStartS: FAST_START_SEGMENT_S } : undefined),
    '-f',
    'dash',
    '-seg_duration',
    String(l.preset.segmentSeconds),
    '-use_template',
    '1',
    '-use_timeline',
    '1',
    '-init_seg_name',
    names.init,
    '-media_seg_name',
    names.media,
    '-adaptation_sets',
    sets,
    ...(chunk?.part === 'video' ? ['-format_options', 'movflags=+frag_discont'] : []),
    ...(alsoHls ? ['-hls_playlist', '1', '-hls_master_name', 'master.m3u8'] : []),
    join(dir, names.manifest),
  ];
}

/** MP4 downloads encoded directly (presets with no streaming packaging): one file per rung, or per audio track. */
function mp4Args(l: EncodeLayout, dir: string): string[] {
  const subs = l.captions.flatMap((c) => ['-map', c.map]);
  const subCodec = l.captions.length > 0 ? ['-c:s', 'mov_text', ...languageTags('s', l.captions)] : [];
  if (l.renditions.length === 0) {
    return l.audio.flatMap((a, k) => [
      '-map',
      a.map,
      ...(l.preset.noTranscoding ? ['-c:a', 'copy'] : audioEncoderArgs(l.preset)),
      ...languageTags('a', [a]),
      '-movflags',
      '+faststart',
      join(dir, `${audioName(k)}.m4a`),
    ]);
  }
  return l.renditions.flatMap((r, i) => [
    ...maps([l.videoMaps[i], ...l.audio.map((a) => a.map)]),
    ...subs,
    ...codecArgs(l, [r]),
    ...subCodec,
    '-max_muxing_queue_size',
    '4096',
    '-movflags',
    '+faststart',
    join(dir, `${safeName(r.name)}.mp4`),
  ]);
}

/** Captions as WebVTT files beside the streaming manifests. */
function captionArgs(l: EncodeLayout, dir: string): string[] {
  return l.captions.flatMap((c, k) => ['-map', c.map, '-c:s', 'webvtt', '-f', 'webvtt', join(dir, captionFile(k))]);
}

/**
 * Output options of the one encoding process: the streaming packaging (or the MP4 files) and the caption files.
 * `fast`: a DASH or CMAF output that starts fast (`startsFast`).
 */
export async function outputArgs(l: EncodeLayout, { fast = false }: { fast?: boolean } = {}): Promise<string[]> {
  const { streaming } = packagingOf(l.preset);
  if (!streaming) {
    const dir = join(l.outDir, 'mp4');
    await mkdir(dir, { recursive: true });
    return mp4Args(l, dir);
  }
  const dir = await streamingDir(l, streaming);
  const muxer = streaming === 'hls' ? hlsArgs(l, dir) : dashArgs(l, dir, { alsoHls: streaming === 'cmaf', fast });
  return [...muxer, ...captionArgs(l, dir)];
}

/**
 * Output options of a fast start's two processes (`startsFast`): the video rungs in one, the audio tracks and the
 * captions in the other (empty when the output has neither).
 */
export async function fastStartArgs(l: EncodeLayout): Promise<{ video: string[]; side: string[] }> {
  const dir = await streamingDir(l, 'hls');
  const side = [...(l.audio.length > 0 ? hlsArgs(l, dir, 'audio') : []), ...captionArgs(l, dir)];
  return { video: hlsArgs(l, dir, 'video'), side };
}

/**
 * The chunked path's HLS (docs/decisions/vod-chunked.md): one chunk's video rungs, muxed as the fast start's video
 * process muxes them (its clock, its playlists), each chunk into segments of its own names; the first chunk starts
 * fast. The audio and captions are the fast start's second process (`fastStartArgs`), over the whole source.
 */
export async function chunkHlsArgs(l: EncodeLayout, chunk: HlsChunk): Promise<string[]> {
  return hlsArgs(l, await streamingDir(l, 'hls'), 'video', chunk);
}

/**
 * The chunked path's DASH and CMAF: one chunk's video rungs (the first chunk starts fast), or, beside the first chunk,
 * the whole source's audio tracks and its captions (`DashChunk`).
 */
export async function chunkDashArgs(l: EncodeLayout, chunk: DashChunk): Promise<string[]> {
  const streaming = packagingOf(l.preset).streaming === 'cmaf' ? 'cmaf' : 'dash';
  const dir = await streamingDir(l, streaming);
  if (chunk.part === 'audio') return [...(l.audio.length > 0 ? dashArgs(l, dir, { chunk }) : []), ...captionArgs(l, dir)];
  return dashArgs(l, dir, { chunk, fast: chunk.index === 0 && startsFast(l) });
}

async function streamingDir(l: EncodeLayout, streaming: Exclude<Packaging, 'mp4'>): Promise<string> {
  const dir = join(l.outDir, streaming);
  await mkdir(l.captions.length > 0 ? join(dir, 'subs') : dir, { recursive: true });
  return dir;
}

/** Adds the caption files to an MPD as side-loaded WebVTT adaptation sets (dash.js and Shaka read them). */
export async function addCaptionsToMpd(mpdPath: string, captions: OutputTrack[]): Promise<void> {
  if (captions.length === 0) return;
  const xml = await readFile(mpdPath, 'utf8');
  await writeFile(
    mpdPath,
    mpdWithCaptions(
      xml,
      captions.map((c, k) => ({ id: 100 + k, representation: `sub_${k}`, name: c.name, language: c.language, file: captionFile(k) })),
    ),
  );
}

/** An MPD with WebVTT files (`file` relative to it) as side-loaded text adaptation sets; a file it names already is skipped. */
export function mpdWithCaptions(xml: string, captions: { id: number; representation: string; name: string; language?: string; file: string }[]): string {
  const esc = (v: string) => v.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
  const sets = captions
    .filter((c) => !xml.includes(`<BaseURL>${esc(c.file)}</BaseURL>`))
    .map((c) => {
      const lang = validLanguage(c.language) ? ` lang="${c.language}"` : '';
      return [
        `\t\t<AdaptationSet id="${c.id}" contentType="text" mimeType="text/vtt"${lang}>`,
        `\t\t\t<Label>${esc(c.name)}</Label>`,
        `\t\t\t<Role schemeIdUri="urn:mpeg:dash:role:2011" value="subtitle" />`,
        `\t\t\t<Representation id="${c.representation}" bandwidth="256">`,
        `\t\t\t\t<BaseURL>${esc(c.file)}</BaseURL>`,
        `\t\t\t</Representation>`,
        `\t\t</AdaptationSet>`,
      ].join('\n');
    });
  if (sets.length === 0) return xml;
  const at = xml.lastIndexOf('</Period>');
  if (at < 0) throw new Error('manifest.mpd has no Period');
  return `${xml.slice(0, at)}${sets.join('\n')}\n\t${xml.slice(at)}`;
}

/**
 * MP4 downloads cut from the finished HLS/CMAF renditions by stream copy: the ladder is encoded once, and each rung
 * becomes one file with every audio track and the captions (as mov_text). `-copyts` keeps audio and video on their
 * common clock, moved so that the output's zero (`captionOffsetS`: where the muxer put it) is 0.
 */
export function remuxArgs(playlists: { video: string[]; audio: string[]; captions: string[]; captionOffsetS: number }, l: EncodeLayout, dir: string): string[] {
  const { video: videoPlaylists, audio: audioPlaylists, captions: captionFiles } = playlists;
  // Cue times count from the output's zero, segment times from where the muxer put it (1.4 s into MPEG-TS).
  const inputs = [
    ...[...videoPlaylists, ...audioPlaylists].flatMap((p) => ['-i', p]),
    ...captionFiles.flatMap((p) => ['-itsoffset', playlists.captionOffsetS.toFixed(6), '-i', p]),
  ];
  const audioIn = audioPlaylists.map((_, k) => videoPlaylists.length + k);
  const subIn = captionFiles.map((_, k) => videoPlaylists.length + audioPlaylists.length + k);
  // The segments' times are kept (-copyts: the tracks are separate inputs and stay in sync), then moved so that the
  // output's zero is 0 and nothing is shifted again: `-avoid_negative_ts make_zero` moved the first decode time (a
  // B-frame stream's is before its first picture) to 0, which began every track of the MP4 0.13 s late and made it that
  // much longer than the stream it was cut from.
  const common = ['-copyts', ...inputs];
  // An output option: given to each output.
  const zero = ['-output_ts_offset', (-playlists.captionOffsetS).toFixed(6)];
  if (videoPlaylists.length === 0) {
    return [
      ...common,
      ...audioIn.flatMap((input, k) => [
        '-map',
        `${input}:a:0`,
        '-c',
        'copy',
        ...languageTags('a', [l.audio[k]]),
        ...zero,
        '-avoid_negative_ts',
        'disabled',
        '-movflags',
        '+faststart',
        join(dir, `${audioName(k)}.m4a`),
      ]),
    ];
  }
  return [
    ...common,
    ...videoPlaylists.flatMap((_, i) => [
      '-map',
      `${i}:v:0`,
      ...audioIn.flatMap((input) => ['-map', `${input}:a:0`]),
      ...subIn.flatMap((input) => ['-map', `${input}:s:0`]),
      '-c:v',
      'copy',
      '-c:a',
      'copy',
      '-c:s',
      'mov_text',
      ...languageTags('a', l.audio),
      ...languageTags('s', l.captions),
      '-max_muxing_queue_size',
      '4096',
      ...zero,
      '-avoid_negative_ts',
      'disabled',
      '-movflags',
      '+faststart',
      join(dir, `${safeName(l.renditions[i].name)}.mp4`),
    ]),
  ];
}
