import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { runFfmpeg } from './ffmpeg.ts';
import { directorySize } from './files.ts';
import { addTimestampMap, codecString, markVod, readMediaPlaylist, writeMasterPlaylist, writeSubtitlePlaylist, type MasterRendition } from './hls.ts';
import { inspect, type MediaInfo } from './inspect.ts';
import { makeStoryboard, STORYBOARD_DIR, storyboardAdaptationSet, storyboardStreamInf, type StoryboardVideo } from './storyboard.ts';
import { addCaptionsToMpd, audioName, captionFile, packagingOf, remuxArgs, safeName, validLanguage, type EncodeLayout } from './packaging.ts';

export interface TranscodeEndpoint {
  format: 'HLS' | 'DASH' | 'MP4';
  /** Path of the manifest (or MP4 file) inside the output directory, `/`-separated. */
  manifest: string;
  durationMilliseconds: number;
  /** Bytes of every file the endpoint plays (HLS and DASH of a CMAF output share their segments). */
  size: number;
  hasVerticalOrientation: boolean;
  /** MP4 downloads: the rung (`720p`) or audio track (`audio_0`) the file holds. */
  rendition?: string;
}

interface Context {
  layout: EncodeLayout;
  source: MediaInfo;
  signal?: AbortSignal;
  redact: Record<string, string>;
}

const rel = (l: EncodeLayout, path: string) => relative(l.outDir, path).split('\\').join('/');

/**
 * Turns what the encoding process wrote into finished outputs: master playlists with measured bandwidth and codecs,
 * caption playlists, captions in the MPD, MP4 downloads cut from the encoded rungs. Returns the endpoints.
 */
export async function finishOutputs(ctx: Context): Promise<TranscodeEndpoint[]> {
  const { layout } = ctx;
  const { streaming, mp4 } = packagingOf(layout.preset);
  const vertical = layout.preset.hasVerticalOrientation;
  const endpoints: TranscodeEndpoint[] = [];
  let hlsPlaylists: Awaited<ReturnType<typeof finishHls>> | undefined;

  if (streaming === 'hls' || streaming === 'cmaf') {
    const dir = join(layout.outDir, streaming);
    hlsPlaylists = await finishHls(ctx, dir, streaming === 'cmaf');
    const durationS = await longest([...hlsPlaylists.video, ...hlsPlaylists.audio]);
    endpoints.push({
      format: 'HLS',
      manifest: rel(layout, join(dir, 'master.m3u8')),
      durationMilliseconds: Math.round(durationS * 1000),
      size: 0,
      hasVerticalOrientation: vertical,
    });
  }
  if (streaming === 'dash' || streaming === 'cmaf') {
    const dir = join(layout.outDir, streaming);
    const mpd = join(dir, 'manifest.mpd');
    await addCaptionsToMpd(mpd, layout.captions);
    const durationMs = await exactMpdDuration(mpd);
    endpoints.push({ format: 'DASH', manifest: rel(layout, mpd), durationMilliseconds: durationMs, size: 0, hasVerticalOrientation: vertical });
  }
  if (streaming) await addStoryboard(ctx, streaming, endpoints);
  if (streaming) {
    const size = await directorySize(join(layout.outDir, streaming));
    for (const e of endpoints) e.size = size;
  }

  if (mp4) {
    const dir = join(layout.outDir, 'mp4');
    await mkdir(dir, { recursive: true });
    if (hlsPlaylists) {
      await runFfmpeg(['-y', ...remuxArgs(hlsPlaylists, layout, dir)], { signal: ctx.signal, redact: ctx.redact, background: true });
    }
    const files =
      layout.renditions.length > 0
        ? layout.renditions.map((r) => ({ name: safeName(r.name), file: join(dir, `${safeName(r.name)}.mp4`) }))
        : layout.audio.map((_, k) => ({ name: audioName(k), file: join(dir, `${audioName(k)}.m4a`) }));
    for (const f of files) {
      const info = await inspect(f.file, { signal: ctx.signal });
      endpoints.push({
        format: 'MP4',
        manifest: rel(layout, f.file),
        durationMilliseconds: info.durationMs,
        size: (await stat(f.file)).size,
        hasVerticalOrientation: vertical,
        rendition: f.name,
      });
    }
  }
  return endpoints;
}

/**
 * The storyboard of an encoded streaming output, listed in its master playlist and its MPD (`storyboard.ts`). A copy
 * of the source's streams has no keyframes of ours to take tiles from, and gets none.
 */
async function addStoryboard(ctx: Context, streaming: 'hls' | 'dash' | 'cmaf', endpoints: TranscodeEndpoint[]): Promise<void> {
  const { layout } = ctx;
  const smallest = layout.renditions.at(-1);
  if (!smallest || layout.preset.noTranscoding) return;
  const dir = join(layout.outDir, streaming);
  const n = layout.renditions.length;
  const video: StoryboardVideo =
    streaming === 'dash'
      ? { mpd: join(dir, 'manifest.mpd'), representation: String(n - 1) }
      : { playlist: mediaPlaylists(layout, dir, streaming === 'cmaf').video[n - 1] };
  const durationS = Math.max(0, ...endpoints.map((e) => e.durationMilliseconds)) / 1000;
  const board = await makeStoryboard(
    video,
    dir,
    { width: smallest.width, height: smallest.height, durationS, segmentSeconds: layout.preset.segmentSeconds },
    { signal: ctx.signal, redact: ctx.redact },
  );
  if (!board) return;
  if (streaming !== 'dash') {
    const master = join(dir, 'master.m3u8');
    const text = await readFile(master, 'utf8');
    await writeFile(master, `${text.trimEnd()}\n${storyboardStreamInf(board, `${STORYBOARD_DIR}/images.m3u8`)}\n`);
  }
  if (streaming !== 'hls') {
    const mpd = join(dir, 'manifest.mpd');
    const xml = await readFile(mpd, 'utf8');
    const at = xml.lastIndexOf('</Period>');
    if (at >= 0) await writeFile(mpd, `${xml.slice(0, at)}${storyboardAdaptationSet(board, STORYBOARD_DIR)}\n\t${xml.slice(at)}`);
  }
}

const longest = async (playlists: string[]) => Math.max(0, ...(await Promise.all(playlists.map(async (p) => (await readMediaPlaylist(p)).durationS))));

/**
 * The end of the longest SegmentTimeline of an MPD, in seconds (presentationTimeOffset taken off); undefined when it has
 * none. ffmpeg writes `mediaPresentationDuration` to a tenth of a second, cut down (`PT5.5S` for 5.547 s): more than a
 * frame short of the media it lists.
 */
export function timelineEndS(xml: string): number | undefined {
  let end: number | undefined;
  for (const m of xml.matchAll(/<SegmentTemplate\b([^>]*)>\s*<SegmentTimeline>([\s\S]*?)<\/SegmentTimeline>/g)) {
    const attr = (name: string, from: string) => Number(new RegExp(`\\b${name}="(\\d+)"`).exec(from)?.[1] ?? Number.NaN);
    const timescale = attr('timescale', m[1]!);
    if (!(timescale > 0)) continue;
    const offset = attr('presentationTimeOffset', m[1]!) || 0;
    let at = 0;
    for (const s of m[2]!.matchAll(/<S\b([^>]*)\/?>/g)) {
      const t = attr('t', s[1]!);
      if (Number.isFinite(t)) at = t;
      at += attr('d', s[1]!) * ((attr('r', s[1]!) || 0) + 1);
    }
    end = Math.max(end ?? 0, (at - offset) / timescale);
  }
  return end;
}

/** Sets an MPD's `mediaPresentationDuration` to the end of its media, to the millisecond; answers it in ms. */
async function exactMpdDuration(mpd: string): Promise<number> {
  const xml = await readFile(mpd, 'utf8');
  const end = timelineEndS(xml);
  if (end === undefined) return mpdDurationMs(xml);
  await writeFile(mpd, xml.replace(/mediaPresentationDuration="[^"]*"/, `mediaPresentationDuration="PT${end.toFixed(3)}S"`));
  return Math.round(end * 1000);
}

/** `PT1M4.5S` → 64500. */
export function mpdDurationMs(xml: string): number {
  const m = /mediaPresentationDuration="PT(?:(\d+(?:\.\d+)?)H)?(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)S)?"/.exec(xml);
  if (!m) return 0;
  return Math.round(((Number(m[1] ?? 0) * 60 + Number(m[2] ?? 0)) * 60 + Number(m[3] ?? 0)) * 1000);
}

/**
 * Media playlists as ffmpeg wrote them: `<rung>/index.m3u8` and `audio_<k>/index.m3u8` from the HLS muxer,
 * `media_<n>.m3u8` (video rungs first, then audio) from the DASH muxer's CMAF playlists.
 */
export function mediaPlaylists(l: EncodeLayout, dir: string, cmaf: boolean) {
  const n = l.renditions.length;
  return {
    video: l.renditions.map((r, i) => (cmaf ? join(dir, `media_${i}.m3u8`) : join(dir, safeName(r.name), 'index.m3u8'))),
    audio: l.audio.map((_, k) => (cmaf ? join(dir, `media_${n + k}.m3u8`) : join(dir, audioName(k), 'index.m3u8'))),
  };
}

async function finishHls(ctx: Context, dir: string, cmaf: boolean) {
  const { layout, source } = ctx;
  const { video, audio } = mediaPlaylists(layout, dir, cmaf);
  await Promise.all([...video, ...audio].map(markVod));
  const probe = async (playlist: string) => {
    const first = (await readMediaPlaylist(playlist)).segments[0];
    // A TS segment describes itself; an fMP4 one needs its init segment, which the playlist names.
    return inspect(cmaf || !first ? playlist : join(playlist, '..', first.uri), { signal: ctx.signal });
  };
  const videoInfo = await Promise.all(video.map(probe));
  const audioInfo = await Promise.all(audio.map(probe));

  const captions = layout.captions.map((_, k) => join(dir, captionFile(k)));
  const durationS = await longest([...video, ...audio]);
  const zero = cmaf ? 0 : mpegtsZero(source, videoInfo[0] ?? audioInfo[0]);
  const subtitles: MasterRendition[] = [];
  for (const [k, vtt] of captions.entries()) {
    if (!cmaf) await addTimestampMap(vtt, zero);
    subtitles.push({
      playlist: await writeSubtitlePlaylist(vtt, durationS),
      name: layout.captions[k].name,
      language: validLanguage(layout.captions[k].language),
    });
  }

  await writeMasterPlaylist(join(dir, 'master.m3u8'), {
    variants: layout.renditions.map((r, i) => {
      const v = videoInfo[i].streams.find((s) => s.type === 'video');
      return { playlist: video[i], width: v?.width ?? r.width, height: v?.height ?? r.height, frameRate: v?.frameRate, codecs: v && codecString(v) };
    }),
    audio: layout.audio.map((a, k) => {
      const s = audioInfo[k].streams.find((s) => s.type === 'audio');
      return { playlist: audio[k], name: a.name, language: validLanguage(a.language), codecs: s && codecString(s) };
    }),
    subtitles,
  });
  return { video, audio, captions, captionOffsetS: zero / 90000 };
}

/**
 * The MPEG-TS time (90 kHz) at which the output's clock reads zero: the first segment's start, less how far into the
 * source that stream began. Caption cue times count from that same zero.
 */
export function mpegtsZero(source: MediaInfo, firstSegment: MediaInfo | undefined): number {
  const stream = firstSegment?.streams.find((s) => s.type === 'video') ?? firstSegment?.streams[0];
  if (!stream || stream.startTime === undefined) return 0;
  const sourceStream = source.streams.find((s) => s.type === stream.type);
  const intoSource = Math.max(0, (sourceStream?.startTime ?? source.startTime) - source.startTime);
  return (stream.startTime - intoSource) * 90000;
}
