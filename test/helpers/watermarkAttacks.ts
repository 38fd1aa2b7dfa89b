import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runFfmpeg } from '../../src/media/ffmpeg.ts';

/**
 * How pirates capture and share a marked video, each attack one ffmpeg process over a viewer's segments (the robustness
 * test and `npm run bench -- watermark` share them). `segments` are the viewer's `.ts` files in order; `out` an mp4.
 * The x264 settings are those of a small shared copy: veryfast, a low bitrate.
 */
export interface Attack {
  name: string;
  make: (segments: string[], out: string, work: string) => Promise<unknown>;
}

const encode = (kbps: number) => ['-c:v', 'libx264', '-preset', 'veryfast', '-b:v', `${kbps}k`, '-maxrate', `${kbps}k`, '-bufsize', `${kbps}k`, '-an'];

/** The segments joined byte for byte (as a player's download is), filtered and re-encoded. */
const filtered =
  (filter: string, kbps = 150, extra: string[] = []) =>
  (segments: string[], out: string) =>
    runFfmpeg(['-y', '-i', `concat:${segments.join('|')}`, '-vf', filter, ...extra, ...encode(kbps), out]);

/** The segments joined with ffmpeg's concat demuxer (each segment its own duration: a gap at every join). */
const demuxed =
  (filter: string, kbps = 150) =>
  async (segments: string[], out: string, work: string) => {
    const list = join(work, `${out.replace(/[^a-z0-9]/gi, '_')}.txt`);
    await writeFile(list, segments.map((s) => `file '${s}'`).join('\n'));
    await runFfmpeg(['-y', '-f', 'concat', '-safe', '0', '-i', list, '-vf', filter, ...encode(kbps), out]);
  };

const attacks = {
  plain: { name: 're-encoded 256x144 at 100 kb/s', make: filtered('scale=256:144', 100) },
  drift: {
    name: '3% slower, 24 fps (dropped and repeated pictures)',
    make: filtered('setpts=PTS*1.03,fps=24,scale=320:180'),
  },
  drift5: {
    name: '5% faster, 12 fps (dropped pictures)',
    make: filtered('setpts=PTS/1.05,fps=12,scale=320:180'),
  },
  concat: { name: 'joined by the concat demuxer (gaps at joins)', make: demuxed('scale=320:180') },
  crop: { name: 'cropped 10% on each side, scaled back', make: filtered('crop=iw*0.8:ih*0.8,scale=320:180') },
  letterbox: { name: 'letterboxed into 4:3', make: filtered('scale=240:136,pad=240:180:0:22,setsar=1') },
  pillarbox: { name: 'pillarboxed (player window 1024x576 in 1280x720)', make: filtered('scale=256:144,pad=320:180:32:18,setsar=1') },
  mirror: { name: 'mirrored', make: filtered('hflip,scale=320:180') },
  rotation: {
    name: 'rotated 3 degrees with a mild perspective',
    make: filtered('rotate=3*PI/180:fillcolor=black,perspective=x0=8:y0=4:x1=W-2:y1=0:x2=0:y2=H:x3=W-10:y3=H-5,scale=320:180'),
  },
  blur: { name: 'noise and blur', make: filtered('noise=alls=10:allf=t,gblur=sigma=2,scale=320:180') },
  brightness: { name: 'brighter and more contrast', make: filtered('eq=brightness=0.06:contrast=1.2,scale=320:180') },
} satisfies Record<string, Attack>;

export const ATTACKS: { [K in keyof typeof attacks]: Attack } = attacks;
