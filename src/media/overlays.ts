/** The spec's Overlay: an image or video burned into the picture for a time window. */
export interface Overlay {
  /** VOD: milliseconds as a string (`"1500"`). Recorder: `HH:MM:SS:FF` or `HH:MM:SS.mmm`. */
  startTime: string;
  /** Milliseconds. */
  duration: number;
  input?: {
    type?: string;
    url?: string;
    s3BucketName?: string;
    s3ObjectKey?: string;
    s3Region?: string;
    s3RoleArn?: string;
    s3ExternalId?: string;
  };
  imageX?: number;
  imageY?: number;
  width: number;
  height: number;
  fadeIn?: number;
  fadeOut?: number;
  /** 0 transparent … 100 opaque; default 100. */
  opacity?: number;
  /** Higher is drawn on top. */
  layer?: number;
}

/** An overlay whose picture the caller has located: a local path or an http(s) URL ffmpeg can read. */
export type PlacedOverlay = Overlay & { source: string };

/** An overlay in the numbers ffmpeg needs, after validation. */
export interface OverlayWindow {
  source: string;
  still: boolean;
  startS: number;
  endS: number;
  x: number;
  y: number;
  width: number;
  height: number;
  fadeInS: number;
  fadeOutS: number;
  opacity: number;
  layer: number;
}

const MAX_SIDE = 8192;

/** Parses `startTime` into milliseconds: `"1500"`, `"00:00:01.500"` or `"00:00:01:15"` (frames at `frameRate`). */
export function parseStartTime(value: string, frameRate = 30): number | undefined {
  const v = value.trim();
  if (/^\d{1,10}$/.test(v)) return Number(v);
  const ms = /^(\d{1,3}):([0-5]\d):([0-5]\d)\.(\d{3})$/.exec(v);
  if (ms) return ((Number(ms[1]) * 60 + Number(ms[2])) * 60 + Number(ms[3])) * 1000 + Number(ms[4]);
  const ff = /^(\d{1,3}):([0-5]\d):([0-5]\d):(\d{2})$/.exec(v);
  if (ff && Number(ff[4]) < Math.ceil(frameRate)) {
    return ((Number(ff[1]) * 60 + Number(ff[2])) * 60 + Number(ff[3])) * 1000 + Math.round((Number(ff[4]) * 1000) / frameRate);
  }
  return undefined;
}

const isInt = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v);

export interface FieldProblem {
  field: string;
  message: string;
}

type Report = (name: string, message: string) => void;

/**
 * What is wrong with these overlays, field by field (`overlays[1].opacity`), so the API can refuse them with 400
 * before any job starts. Empty when they can be burned in.
 */
export function overlayProblems(overlays: Overlay[], field = 'overlays'): FieldProblem[] {
  return collect(overlays, field, (o, at) => {
    checkPlacement(o, at);
    checkInput(o, at);
  });
}

/** The checks on when, where and how an overlay is drawn: everything but its input, which the caller has located. */
export const placementProblems = (overlays: Omit<Overlay, 'input'>[], field = 'overlays'): FieldProblem[] => collect(overlays, field, checkPlacement);

function collect<T>(overlays: T[], field: string, check: (o: T, at: Report) => void): FieldProblem[] {
  const problems: FieldProblem[] = [];
  overlays.forEach((o, i) => check(o, (name, message) => problems.push({ field: `${field}[${i}].${name}`, message })));
  return problems;
}

function checkPlacement(o: Omit<Overlay, 'input'>, at: Report): void {
  if (typeof o.startTime !== 'string' || parseStartTime(o.startTime) === undefined) {
    at('startTime', 'must be a start in milliseconds such as "1500" (or HH:MM:SS.mmm / HH:MM:SS:FF)');
  }
  if (!isInt(o.duration) || o.duration <= 0) at('duration', 'must be a positive number of milliseconds');
  for (const side of ['width', 'height'] as const) {
    if (!isInt(o[side]) || o[side] < 1 || o[side] > MAX_SIDE) at(side, `must be a whole number of pixels from 1 to ${MAX_SIDE}`);
  }
  for (const pos of ['imageX', 'imageY'] as const) {
    if (o[pos] !== undefined && (!isInt(o[pos]) || o[pos]! < 0 || o[pos]! > MAX_SIDE)) at(pos, `must be a whole number of pixels from 0 to ${MAX_SIDE}`);
  }
  for (const fade of ['fadeIn', 'fadeOut'] as const) {
    if (o[fade] !== undefined && (!isInt(o[fade]) || o[fade]! < 0)) at(fade, 'must be a non-negative number of milliseconds');
  }
  if (isInt(o.duration) && (o.fadeIn ?? 0) + (o.fadeOut ?? 0) > o.duration) at('fadeIn', 'fadeIn plus fadeOut must not exceed duration');
  if (o.opacity !== undefined && (!isInt(o.opacity) || o.opacity < 0 || o.opacity > 100)) at('opacity', 'must be a whole number from 0 to 100');
  if (o.layer !== undefined && !isInt(o.layer)) at('layer', 'must be a whole number');
}

function checkInput({ input }: Overlay, at: Report): void {
  const type = (input?.type ?? (input?.url ? 'URL' : input?.s3ObjectKey ? 'S3' : '')).toUpperCase();
  if (!input || !type) at('input', 'is required: { type: "URL", url } or { type: "S3", s3BucketName, s3ObjectKey }');
  else if (type === 'URL') {
    if (!isHttpUrl(input.url)) at('input.url', 'must be an http or https URL');
  } else if (type === 'S3') {
    if (!input.s3BucketName) at('input.s3BucketName', 'is required when input.type is S3');
    if (!input.s3ObjectKey) at('input.s3ObjectKey', 'is required when input.type is S3');
  } else at('input.type', 'must be URL or S3');
}

/** Only http(s): ffmpeg would otherwise read `file:`, `concat:` and other protocols on the server's behalf. */
function isHttpUrl(value: unknown): value is string {
  if (typeof value !== 'string') return false;
  try {
    const u = new URL(value);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}

/** Validated overlays as time windows in seconds, in drawing order: lowest `layer` first, request order among equals. */
export function overlayWindows(overlays: (PlacedOverlay & { still: boolean })[], frameRate = 30): OverlayWindow[] {
  return overlays
    .map((o, i) => ({ o, i }))
    .sort((a, b) => (a.o.layer ?? 0) - (b.o.layer ?? 0) || a.i - b.i)
    .map(({ o }) => {
      const startS = parseStartTime(o.startTime, frameRate)! / 1000;
      return {
        source: o.source,
        still: o.still,
        startS,
        endS: startS + o.duration / 1000,
        x: o.imageX ?? 0,
        y: o.imageY ?? 0,
        width: o.width,
        height: o.height,
        fadeInS: (o.fadeIn ?? 0) / 1000,
        fadeOutS: (o.fadeOut ?? 0) / 1000,
        opacity: o.opacity ?? 100,
        layer: o.layer ?? 0,
      };
    });
}

/** Input options that make the overlay picture exist for exactly its duration: a still image looped, a video repeated. */
export function overlayInputArgs(w: OverlayWindow, frameRate: number): string[] {
  const duration = ['-t', sec(w.endS - w.startS)];
  return w.still
    ? ['-loop', '1', '-framerate', String(Math.round(frameRate) || 30), ...duration, '-i', w.source]
    : ['-stream_loop', '-1', ...duration, '-i', w.source];
}

const sec = (s: number) => String(Math.round(s * 1000) / 1000);

/**
 * The filter graph that burns the overlays into `[base]`: each picture is moved to its start time, sized, given its
 * opacity and alpha fades, then drawn over the result of the one below it. Returns the label of the final picture.
 */
export function overlayFilterGraph(windows: OverlayWindow[], firstInputIndex: number, base: string): { graph: string[]; out: string } {
  const graph: string[] = [];
  let below = base;
  windows.forEach((w, k) => {
    const chain = [`setpts=PTS-STARTPTS+${sec(w.startS)}/TB`, `scale=${w.width}:${w.height}`, 'format=rgba'];
    if (w.opacity < 100) chain.push(`colorchannelmixer=aa=${w.opacity / 100}`);
    if (w.fadeInS > 0) chain.push(`fade=t=in:st=${sec(w.startS)}:d=${sec(w.fadeInS)}:alpha=1`);
    if (w.fadeOutS > 0) chain.push(`fade=t=out:st=${sec(w.endS - w.fadeOutS)}:d=${sec(w.fadeOutS)}:alpha=1`);
    graph.push(`[${firstInputIndex + k}:v:0]${chain.join(',')}[ov${k}]`);
    const out = `ovb${k}`;
    graph.push(`[${below}][ov${k}]overlay=x=${w.x}:y=${w.y}:eof_action=pass:enable='between(t,${sec(w.startS)},${sec(w.endS)})'[${out}]`);
    below = out;
  });
  return { graph, out: below };
}
