import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runFfmpeg } from './ffmpeg.ts';
import { mpdTimelines } from './mpdTimeline.ts';

/**
 * The storyboard of a finished streaming output (docs/decisions/vod-assets.md, "Storyboards"): tiled sprite sheets of
 * the video, one tile per interval, listed where players look for seek previews: an `EXT-X-IMAGE-STREAM-INF` image
 * playlist (`#EXT-X-TILES`) in the HLS master, a thumbnail AdaptationSet (`http://dashif.org/thumbnail_tile`) in the
 * MPD, and a WebVTT of `#xywh` cues for the players that read those. The tiles are the keyframes of the smallest rung:
 * every segment starts with one, on the preset's boundaries, so they are decoded alone, and fast.
 */

export const STORYBOARD_DIR = 'storyboard';
const COLUMNS = 10;
const ROWS = 10;
const TILE_WIDTH = 160;
/** At most this many tiles: a longer video gets a tile every few segments. */
const MAX_TILES = 1000;

export interface Storyboard {
  tileWidth: number;
  tileHeight: number;
  columns: number;
  rows: number;
  intervalS: number;
  /** Sheet files in order, inside the storyboard folder. */
  sheets: string[];
  /** Bits per second the sheets take, for the playlists' BANDWIDTH. */
  bandwidth: number;
  durationS: number;
}

/** One tile every whole number of segments, so that each falls on a keyframe. */
export const storyboardInterval = (durationS: number, segmentSeconds: number) =>
  segmentSeconds * Math.max(1, Math.ceil(durationS / (segmentSeconds * MAX_TILES)));

const time = (s: number) => {
  const ms = Math.round(s * 1000);
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${p(Math.floor(ms / 3600_000))}:${p(Math.floor(ms / 60_000) % 60)}:${p(Math.floor(ms / 1000) % 60)}.${p(ms % 1000, 3)}`;
};

/** The WebVTT of a storyboard: a cue per tile naming its sheet and its place on it. */
export function storyboardVtt(b: Storyboard): string {
  const cues = ['WEBVTT', ''];
  const tiles = Math.ceil(b.durationS / b.intervalS - 1e-6);
  for (let k = 0; k < tiles; k++) {
    const sheet = b.sheets[Math.floor(k / (b.columns * b.rows))];
    if (!sheet) break;
    const at = k % (b.columns * b.rows);
    const x = (at % b.columns) * b.tileWidth;
    const y = Math.floor(at / b.columns) * b.tileHeight;
    cues.push(
      `${time(k * b.intervalS)} --> ${time(Math.min((k + 1) * b.intervalS, b.durationS))}`,
      `${sheet}#xywh=${x},${y},${b.tileWidth},${b.tileHeight}`,
      '',
    );
  }
  return cues.join('\n');
}

/** The image media playlist of a storyboard (Apple's and Roku's `EXT-X-TILES`), one sheet per segment. */
export function storyboardPlaylist(b: Storyboard): string {
  const sheetS = b.intervalS * b.columns * b.rows;
  const lines = [
    '#EXTM3U',
    '#EXT-X-VERSION:7',
    `#EXT-X-TARGETDURATION:${Math.ceil(sheetS)}`,
    '#EXT-X-MEDIA-SEQUENCE:0',
    '#EXT-X-PLAYLIST-TYPE:VOD',
    '#EXT-X-IMAGES-ONLY',
  ];
  b.sheets.forEach((sheet, i) => {
    const d = Math.min(sheetS, b.durationS - i * sheetS);
    lines.push(
      `#EXTINF:${d.toFixed(3)},`,
      `#EXT-X-TILES:RESOLUTION=${b.tileWidth}x${b.tileHeight},LAYOUT=${b.columns}x${b.rows},DURATION=${b.intervalS.toFixed(3)}`,
      sheet,
    );
  });
  return `${[...lines, '#EXT-X-ENDLIST'].join('\n')}\n`;
}

/** The master playlist line of the storyboard's image playlist (`uri` relative to the master). */
export const storyboardStreamInf = (b: Storyboard, uri: string) =>
  `#EXT-X-IMAGE-STREAM-INF:BANDWIDTH=${b.bandwidth},RESOLUTION=${b.tileWidth}x${b.tileHeight},CODECS="jpeg",URI="${uri}"`;

/**
 * The MPD's thumbnail AdaptationSet of the storyboard (`dir`: its folder relative to the MPD). Its id is apart from the
 * encoder's sets (from 0), the uploaded captions' (100 on) and the generated captions' (200): ids are unique in a Period.
 */
export function storyboardAdaptationSet(b: Storyboard, dir: string): string {
  const sheetS = b.intervalS * b.columns * b.rows;
  return [
    `\t\t<AdaptationSet id="300" contentType="image" mimeType="image/jpeg">`,
    `\t\t\t<SegmentTemplate media="${dir}/sheet_$Number%05d$.jpg" timescale="1000" duration="${Math.round(sheetS * 1000)}" startNumber="1" />`,
    `\t\t\t<Representation id="storyboard" bandwidth="${b.bandwidth}" width="${b.tileWidth * b.columns}" height="${b.tileHeight * b.rows}">`,
    `\t\t\t\t<EssentialProperty schemeIdUri="http://dashif.org/thumbnail_tile" value="${b.columns}x${b.rows}" />`,
    `\t\t\t</Representation>`,
    `\t\t</AdaptationSet>`,
  ].join('\n');
}

/** What a storyboard is made of: the smallest rung's HLS media playlist, or its representation in a DASH MPD. */
export type StoryboardVideo = { playlist: string } | { mpd: string; representation: string };

/** The smallest rung as one file ffmpeg reads: an HLS media playlist as it is, a DASH representation laid end to end. */
async function rungFile(video: StoryboardVideo, work: string): Promise<string> {
  if ('playlist' in video) return video.playlist;
  const rep = mpdTimelines(await readFile(video.mpd, 'utf8')).find((r) => r.id === video.representation);
  if (!rep?.init) throw new Error(`the MPD has no representation ${video.representation}`);
  const file = join(work, 'rung.mp4');
  const dir = join(video.mpd, '..');
  const parts = await Promise.all([rep.init, ...rep.segments.map((x) => x.file)].map((f) => readFile(join(dir, f))));
  await writeFile(file, Buffer.concat(parts));
  return file;
}

/**
 * Makes the storyboard of a video into `<dir>/storyboard/`: its sheets, `storyboard.vtt` and `images.m3u8`.
 */
export async function makeStoryboard(
  video: StoryboardVideo,
  dir: string,
  { width, height, durationS, segmentSeconds }: { width: number; height: number; durationS: number; segmentSeconds: number },
  opts: { signal?: AbortSignal; redact: Record<string, string> },
): Promise<Storyboard | undefined> {
  if (!(durationS > 0) || !(width > 0) || !(height > 0)) return undefined;
  const intervalS = storyboardInterval(durationS, segmentSeconds);
  const tileWidth = Math.min(TILE_WIDTH, width - (width % 2));
  const tileHeight = Math.max(2, Math.round((tileWidth * height) / width / 2) * 2);
  const out = join(dir, STORYBOARD_DIR);
  await mkdir(out, { recursive: true });
  const work = await mkdtemp(join(tmpdir(), 'mediaplane-storyboard-'));
  try {
    const input = await rungFile(video, work);
    await runFfmpeg(
      [
        '-y',
        ...(input.endsWith('.m3u8') ? ['-allowed_extensions', 'ALL'] : []),
        '-skip_frame',
        'nokey',
        '-i',
        input,
        '-map',
        '0:v:0',
        '-an',
        '-sn',
        // Tile k is the first keyframe from k intervals on (a segment's keyframe may lie a frame past its boundary; a
        // fast start's half-second keyframes in between are skipped), so the tiles keep to the grid the manifests name.
        '-vf',
        `select='gte(t\\,selected_n*${intervalS}-${Math.min(0.25, intervalS / 4)})',scale=${tileWidth}:${tileHeight},setsar=1,tile=${COLUMNS}x${ROWS}`,
        '-vsync',
        'vfr',
        '-q:v',
        '5',
        '-f',
        'image2',
        join(out, 'sheet_%05d.jpg'),
      ],
      { signal: opts.signal, redact: { ...opts.redact, [work]: 'the storyboard folder' }, background: true },
    );
    const sheets = (await readdir(out)).filter((f) => /^sheet_\d{5}\.jpg$/.test(f)).sort();
    if (sheets.length === 0) return undefined;
    const bytes = (await Promise.all(sheets.map((s) => stat(join(out, s))))).reduce((sum, s) => sum + s.size, 0);
    const board: Storyboard = {
      tileWidth,
      tileHeight,
      columns: COLUMNS,
      rows: ROWS,
      intervalS,
      sheets,
      bandwidth: Math.max(1, Math.round((bytes * 8) / durationS)),
      durationS,
    };
    await writeFile(join(out, 'storyboard.vtt'), storyboardVtt(board));
    await writeFile(join(out, 'images.m3u8'), storyboardPlaylist(board));
    return board;
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
