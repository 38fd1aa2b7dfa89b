import type { Preset, Rendition } from './preset.ts';

/** A rung as it will be encoded for one source: frame size and bitrate after orientation and the no-upscale rule. */
export interface PlannedRendition {
  name: string;
  width: number;
  height: number;
  /** The picture inside the frame; smaller than the frame only when a vertical preset pads a landscape source. */
  pictureWidth: number;
  pictureHeight: number;
  videoBitrateKbps: number;
  maxrateKbps: number;
  profile: Rendition['profile'];
}

const even = (n: number) => Math.max(2, Math.round(n / 2) * 2);

/**
 * The rungs of `preset` for a source of `width`×`height` as displayed. Each rung is a box the picture is fitted into
 * without distortion. A landscape preset turns its boxes for a portrait source (a phone video stays upright and sharp);
 * a vertical preset keeps its portrait boxes and pads a landscape picture into them. Rungs that would enlarge the
 * picture are dropped; when every rung would, the smallest one is kept, shrunk to the source's own size.
 */
export function planRenditions(preset: Preset, width: number, height: number): PlannedRendition[] {
  const portraitSource = height > width;
  const planned = preset.ladder.map((rung) => {
    const turn = !preset.hasVerticalOrientation && portraitSource && rung.width > rung.height;
    const boxW = turn ? rung.height : rung.width;
    const boxH = turn ? rung.width : rung.height;
    return { rung, boxW, boxH, scale: Math.min(boxW / width, boxH / height) };
  });
  let kept = planned.filter((p) => p.scale <= 1).map((p) => ({ ...p, shrunk: false }));
  if (kept.length === 0 && planned.length > 0) {
    const smallest = planned.reduce((a, b) => (b.boxW * b.boxH < a.boxW * a.boxH ? b : a));
    // Shrink the box by the same factor as the picture, so the rung keeps its shape (a vertical frame stays vertical).
    kept = [{ ...smallest, boxW: smallest.boxW / smallest.scale, boxH: smallest.boxH / smallest.scale, scale: 1, shrunk: true }];
  }
  return kept.map(({ rung, boxW, boxH, scale, shrunk }) => {
    const pictureWidth = even(width * scale);
    const pictureHeight = even(height * scale);
    const frameW = preset.hasVerticalOrientation ? even(boxW) : pictureWidth;
    const frameH = preset.hasVerticalOrientation ? even(boxH) : pictureHeight;
    // Fewer pixels than the rung was sized for need fewer bits: scale the bitrate with the area, within reason.
    const area = Math.min(1, (pictureWidth * pictureHeight) / (rung.width * rung.height));
    const factor = Math.max(0.25, area);
    return {
      // A rung shrunk to the source is named for what it is (`180p`), as the catalogue names rungs by their short side.
      name: shrunk ? `${Math.min(frameW, frameH)}p` : rung.name,
      width: frameW,
      height: frameH,
      pictureWidth,
      pictureHeight,
      videoBitrateKbps: Math.round(rung.videoBitrateKbps * factor),
      maxrateKbps: Math.round(rung.maxrateKbps * factor),
      profile: rung.profile,
    };
  });
}

/**
 * One chain per rung from the (overlaid) source picture `[input]`: split, scale, pad when vertical, 4:2:0. Every rung
 * gets the top rung's display aspect ratio: even-pixel sizes make 854x480 next to 1280x720, whose square-pixel aspect
 * differs by a hair, and ffmpeg's DASH muxer refuses an adaptation set whose rungs disagree on it.
 */
export function scaleGraph(input: string, renditions: PlannedRendition[]): { graph: string[]; outputs: string[] } {
  const dar = renditions.length ? `${renditions[0].width}/${renditions[0].height}` : '1';
  const outputs = renditions.map((_, i) => `v${i}`);
  const branches = renditions.length > 1 ? renditions.map((_, i) => `split${i}`) : [input];
  const graph = renditions.length > 1 ? [`[${input}]split=${renditions.length}${branches.map((b) => `[${b}]`).join('')}`] : [];
  renditions.forEach((r, i) => {
    const chain = [`scale=${r.pictureWidth}:${r.pictureHeight}`];
    if (r.pictureWidth !== r.width || r.pictureHeight !== r.height) chain.push(`pad=${r.width}:${r.height}:(ow-iw)/2:(oh-ih)/2:black`);
    chain.push(`setdar=${dar}`, 'format=yuv420p');
    graph.push(`[${branches[i]}]${chain.join(',')}[${outputs[i]}]`);
  });
  return { graph, outputs };
}

/** Where an output's keyframes fall beyond every segment boundary (see `videoEncoderArgs`). */
export interface Keyframes {
  /** The chunked path: a chunk's first frame lies this far (seconds) past its segment boundary. */
  shiftS?: number;
  /** Fast start: the first segment's time is cut into segments of this many seconds (a keyframe on each). */
  fastStartS?: number;
}

/**
 * H.264 options for the video streams of one output, in the order of its rungs. Keyframes are forced on every
 * segment boundary (and scene cuts may not add others), so every rung can be cut at the same instants and players
 * switch rungs cleanly. The chunked path gives `shiftS` so that its chunks cut where one pass would; fast start gives
 * `fastStartS`, a keyframe every `fastStartS` within the first segment and on every boundary after it.
 */
export function videoEncoderArgs(preset: Preset, renditions: PlannedRendition[], { shiftS = 0, fastStartS }: Keyframes = {}): string[] {
  const s = preset.segmentSeconds;
  // ffmpeg counts `t` from the first frame it encodes; a chunk's first frame lies `shiftS` past its segment boundary.
  const shift = shiftS > 0 ? `-${shiftS.toFixed(6)}` : '';
  // n_forced counts the keyframes forced so far: the first segment holds s / fastStartS of them.
  const head = fastStartS ? s / fastStartS : 0;
  const forced = head ? `expr:if(lt(t,${s}-0.001),gte(t,n_forced*${fastStartS}),gte(t,${s}*(n_forced-${head - 1})))` : `expr:gte(t,n_forced*${s}${shift})`;
  const args = ['-c:v', 'libx264', '-preset', preset.x264Preset, '-sc_threshold', '0', '-force_key_frames', forced];
  renditions.forEach((r, i) => {
    const v = `v:${i}`;
    args.push(`-b:${v}`, `${r.videoBitrateKbps}k`, `-maxrate:${v}`, `${r.maxrateKbps}k`, `-bufsize:${v}`, `${r.maxrateKbps * 2}k`, `-profile:${v}`, r.profile);
  });
  return args;
}

/** AAC for every audio stream of one output. */
export function audioEncoderArgs(preset: Preset): string[] {
  const a = preset.audio;
  return ['-c:a', 'aac', '-b:a', `${a.bitrateKbps}k`, '-ac', String(a.channels), '-ar', String(a.sampleRate)];
}
