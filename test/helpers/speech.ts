import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { runFfmpeg } from '../../src/media/ffmpeg.ts';

/** What the captions tests' clip says (twice, with a pause). */
export const SPOKEN = 'hello world. this is a test of live captions.';

/** A small test picture with `SPOKEN` spoken twice by espeak-ng (scripts/ensure-system-deps.sh espeak): an MP4 to loop. */
export async function spokenClip(dir: string): Promise<string> {
  const wav = join(dir, 'speech.wav');
  await new Promise<void>((resolve, reject) => {
    const espeak = spawn('espeak-ng', ['-v', 'en-us', '-s', '140', '-w', wav, `${SPOKEN} ${SPOKEN}`], { stdio: 'ignore' });
    espeak.on('error', reject);
    espeak.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`espeak-ng exited with ${code}`))));
  });
  const clip = join(dir, 'clip.mp4');
  await runFfmpeg([
    '-f',
    'lavfi',
    '-i',
    'testsrc=size=320x180:rate=25',
    '-i',
    wav,
    '-filter_complex',
    '[1:a]apad=pad_dur=1,aresample=48000[a]',
    '-map',
    '0:v',
    '-map',
    '[a]',
    '-shortest',
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-g',
    '25',
    '-pix_fmt',
    'yuv420p',
    '-c:a',
    'aac',
    '-ac',
    '2',
    '-y',
    clip,
  ]);
  return clip;
}
