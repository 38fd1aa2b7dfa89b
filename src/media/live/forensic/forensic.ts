import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { patternFrame, patternValues } from '../../watermark/pattern.ts';
import { audioMedia, type Track } from '../packaging/manifests.ts';
import { rateFilter } from '../rate.ts';
import type { LiveRendition, LiveWatermark } from '../types.ts';

/**
 * A watermarked channel's marked variants: per marked rung, `wmA-<rung>` (pattern added) and `wmB-<rung>` (pattern
 * subtracted), the tracks the watermarking redirector mixes per segment. One name per rung so that every rung of the
 * ladder can be marked and a viewer keeps the adaptive ladder.
 */
export const FORENSIC_VARIANTS = ['wmA', 'wmB'] as const;
export const forensicTrack = (variant: 0 | 1, rung: string) => `${FORENSIC_VARIANTS[variant]}-${rung}`;
const FORENSIC_NAME = /^wm[AB]-/;
export const isForensicTrack = (name: string) => FORENSIC_NAME.test(name);
/** The rung a variant's track marks (`wmB-360p` → `360p`). */
export const forensicRungOf = (name: string) => name.replace(FORENSIC_NAME, '');
/** The multivariant playlist of variant A of every marked rung, published beside the channel's own for the redirector. */
export const FORENSIC_MASTER = 'forensic.m3u8';

/** Variants A and B of each marked rung, in output order after the ladder: the rung's encode, under the variant's name. */
export const forensicVariants = (rungs: LiveRendition[]): LiveRendition[] =>
  rungs.flatMap((rung) => ([0, 1] as const).map((v) => ({ ...rung, name: forensicTrack(v, rung.name) })));

export interface ForensicRung {
  rung: LiveRendition;
  /** One raw yuv420p frame each (`patternFrame`) of the rung's size, blended onto every picture of variant A and of B. */
  patternA: string;
  patternB: string;
}
export interface ForensicArgs {
  rungs: ForensicRung[];
}

/**
 * Writes each marked rung's two pattern frames (A: +, B: -) into the pipeline's directory, once for all its runs. The
 * pattern is the same field at every size (its coordinates are the picture's fractions), so every rung reads back
 * the same on the detection grid.
 */
export async function forensicArgs(w: LiveWatermark, dir: string): Promise<ForensicArgs> {
  const rungs: ForensicRung[] = [];
  for (const r of w.rungs) {
    const values = patternValues(w.seed, r.width, r.height);
    const [patternA, patternB] = [join(dir, `pattern-${r.name}-A.yuv`), join(dir, `pattern-${r.name}-B.yuv`)];
    await writeFile(patternA, patternFrame(values, r.width, r.height, w.strength, 1));
    await writeFile(patternB, patternFrame(values, r.width, r.height, w.strength, -1));
    rungs.push({ rung: r, patternA, patternB });
  }
  return { rungs };
}

/**
 * The filters of the marked variants, as VOD watermarking (media/watermark/prepare.ts): per marked rung one scaled
 * picture, the pattern added (A) and subtracted (B) with grainmerge against a one-frame pattern input that framesync
 * holds for the whole run. `source` is the label of one copy of the decoded picture per marked rung; `firstInput` the
 * index of the first pattern input (`inputs` adds them in that order); outputs `[v<firstOutput + k>]`.
 */
export function forensicFilters(f: ForensicArgs, sources: string[], firstInput: number, firstOutput: number): { inputs: string[]; filters: string[] } {
  const inputs: string[] = [];
  const filters: string[] = [];
  f.rungs.forEach(({ rung: r, patternA, patternB }, k) => {
    const raw = (file: string) => ['-f', 'rawvideo', '-pix_fmt', 'yuv420p', '-video_size', `${r.width}x${r.height}`, '-i', file];
    inputs.push(...raw(patternA), ...raw(patternB));
    const [input, output] = [firstInput + 2 * k, firstOutput + 2 * k];
    filters.push(
      `${sources[k]}${rateFilter(r)}scale=${r.width}:${r.height},setsar=1,format=yuv420p,split=2[wa${k}][wb${k}]`,
      `[wa${k}][${input}:v]blend=all_mode=grainmerge[v${output}]`,
      `[wb${k}][${input + 1}:v]blend=all_mode=grainmerge[v${output + 1}]`,
    );
  });
  return { inputs, filters };
}

/**
 * `forensic.m3u8`: variant A of every marked rung with what a player needs to choose between them (bandwidth,
 * resolution, codecs), tallest first, and the channel's audio track as the channel's own master lists it (an
 * `EXT-X-MEDIA` audio rendition named by every variant, its codec in theirs): audio is not marked, so every viewer
 * gets the channel's. The redirector serves it with every URI rewritten to its own per-rung media playlists.
 */
export function forensicMasterPlaylist(tracks: Track[]): string | undefined {
  const marked = tracks.filter((t) => t.forensic && t.name.startsWith(`${FORENSIC_VARIANTS[0]}-`)).sort((a, b) => b.bandwidth - a.bandwidth);
  if (marked.length === 0) return undefined;
  const audio = tracks.find((t) => t.kind === 'audio');
  const lines = ['#EXTM3U', '#EXT-X-VERSION:7', '#EXT-X-INDEPENDENT-SEGMENTS'];
  if (audio) lines.push(audioMedia(audio));
  for (const t of marked) {
    const codecs = [t.codec, audio?.codec].filter(Boolean).join(',');
    lines.push(
      `#EXT-X-STREAM-INF:BANDWIDTH=${t.bandwidth + (audio?.bandwidth ?? 0)},RESOLUTION=${t.width}x${t.height},FRAME-RATE=${t.frameRate!.toFixed(3)},CODECS="${codecs}"${audio ? ',AUDIO="audio"' : ''}`,
      `${t.name}.m3u8`,
    );
  }
  return `${lines.join('\n')}\n`;
}
