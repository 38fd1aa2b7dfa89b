import { execFile } from 'node:child_process';
import { cpSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runFfmpeg } from '../src/media/ffmpeg.ts';
import { protectCmaf, protectDash } from '../src/media/protect.ts';
import { tempDir } from './helpers/media.ts';

const run = promisify(execFile);
const KEY = '00112233445566778899aabbccddeeff';
const KEY_ID = '0123abcd-4567-89ef-0123-456789abcdef';

/** md5 of what ffmpeg decodes from a file (frames or samples), with the key when given. */
async function decodedMd5(file: string, key?: string): Promise<string> {
  const { stdout } = await run('ffmpeg', ['-v', 'error', ...(key ? ['-decryption_key', key] : []), '-i', file, '-f', 'md5', '-']);
  return stdout.trim();
}

/**
 * Our Common Encryption step checked by an outside tool: every segment of a clear DASH output, encrypted with `cenc`
 * and with `cbcs`, decodes under ffmpeg's own CENC decryption to exactly what the clear segment decodes to.
 */
describe('CENC encryption of fragmented MP4', () => {
  const { dir, cleanup } = tempDir('mediaplane-cenc-');
  const clear = join(dir, 'clear');

  beforeAll(async () => {
    await run('mkdir', ['-p', clear]);
    await runFfmpeg([
      ...['-f', 'lavfi', '-i', 'testsrc2=s=320x180:r=15', '-f', 'lavfi', '-i', 'sine=f=440:sample_rate=48000', '-t', '2'],
      ...['-map', '0:v', '-map', '1:a', '-c:v', 'libx264', '-preset', 'ultrafast', '-g', '15', '-c:a', 'aac', '-f', 'dash', '-seg_duration', '1'],
      ...['-init_seg_name', 'init-$RepresentationID$.m4s', '-media_seg_name', 'chunk-$RepresentationID$-$Number%05d$.m4s'],
      // The HLS playlists of CMAF (media_0.m3u8 video, media_1.m3u8 audio) beside the MPD: the SAMPLE-AES case reads them.
      ...['-hls_playlist', '1', '-adaptation_sets', 'id=0,streams=v id=1,streams=a', join(clear, 'manifest.mpd')],
    ]);
  });
  afterAll(() => cleanup());

  for (const scheme of ['cenc', 'cbcs'] as const) {
    it(`${scheme}: each segment decrypts to the clear one, and is not playable without the key`, async () => {
      const out = join(dir, scheme);
      cpSync(clear, out, { recursive: true });
      await protectDash(out, { scheme, key: Buffer.from(KEY, 'hex'), keyId: KEY_ID, keyUrl: 'https://example.test/license', iv: Buffer.alloc(16, 9) });
      const mpd = readFileSync(join(out, 'manifest.mpd'), 'utf8');
      expect(mpd).toContain(`<ContentProtection schemeIdUri="urn:mpeg:dash:mp4protection:2011" value="${scheme}" cenc:default_KID="${KEY_ID}"/>`);
      const chunks = readdirSync(out).filter((f) => f.startsWith('chunk-'));
      expect(chunks.length).toBeGreaterThanOrEqual(4);
      for (const chunk of chunks) {
        const rep = chunk.split('-')[1];
        const join2 = (root: string, name: string) => {
          const file = join(dir, `${scheme}-${name}-${chunk}.mp4`);
          writeFileSync(file, Buffer.concat([readFileSync(join(root, `init-${rep}.m4s`)), readFileSync(join(root, chunk))]));
          return file;
        };
        const encrypted = join2(out, 'enc');
        expect(readFileSync(join(out, chunk)).equals(readFileSync(join(clear, chunk)))).toBe(false);
        expect(await decodedMd5(encrypted, KEY)).toBe(await decodedMd5(join2(clear, 'clear')));
      }
      // Without the key the video does not decode to the same frames.
      const video = join(dir, `${scheme}-nokey.mp4`);
      writeFileSync(video, Buffer.concat([readFileSync(join(out, 'init-0.m4s')), readFileSync(join(out, 'chunk-0-00001.m4s'))]));
      const clearVideo = join(dir, `${scheme}-clearvideo.mp4`);
      writeFileSync(clearVideo, Buffer.concat([readFileSync(join(clear, 'init-0.m4s')), readFileSync(join(clear, 'chunk-0-00001.m4s'))]));
      const without = await decodedMd5(video).catch((e) => String(e));
      expect(without).not.toBe(await decodedMd5(clearVideo));
    });
  }

  it('CMAF cbcs for HLS SAMPLE-AES: each track with its own key, its playlist naming that key, segments decrypting to the clear ones', async () => {
    const out = join(dir, 'cmaf');
    cpSync(clear, out, { recursive: true });
    const AUDIO_KEY = 'ffeeddccbbaa99887766554433221100';
    const AUDIO_KEY_ID = '89abcdef-0123-4567-89ab-cdef01234567';
    await protectCmaf(
      out,
      {
        scheme: 'cbcs',
        key: Buffer.from(KEY, 'hex'),
        keyId: KEY_ID,
        keyUrl: 'https://example.test/license',
        iv: Buffer.alloc(16, 9),
        audio: { key: Buffer.from(AUDIO_KEY, 'hex'), keyId: AUDIO_KEY_ID, keyUrl: 'https://example.test/license', iv: Buffer.alloc(16, 7) },
      },
      [join(out, 'media_0.m3u8')],
      [join(out, 'media_1.m3u8')],
    );
    const keyLines: string[] = [];
    for (const [rep, keyId, key] of [
      ['0', KEY_ID, KEY],
      ['1', AUDIO_KEY_ID, AUDIO_KEY],
    ]) {
      const kid = Buffer.from(keyId.replace(/-/g, ''), 'hex');
      const playlist = readFileSync(join(out, `media_${rep}.m3u8`), 'utf8');
      const keyLine = `#EXT-X-KEY:METHOD=SAMPLE-AES,URI="data:text/plain;base64,${kid.toString('base64')}",KEYID=0x${kid.toString('hex')},KEYFORMAT="org.w3.clearkey",KEYFORMATVERSIONS="1"`;
      expect(playlist.split('\n').filter((l) => l.startsWith('#EXT-X-KEY'))).toEqual([keyLine]);
      keyLines.push(keyLine);
      expect(playlist.indexOf(keyLine)).toBeGreaterThan(playlist.indexOf(`#EXT-X-MAP:URI="init-${rep}.m4s"`));
      const chunks = playlist.split('\n').filter((l) => l.startsWith(`chunk-${rep}-`));
      expect(chunks.length).toBeGreaterThanOrEqual(2);
      for (const chunk of chunks) {
        const file = (root: string, name: string) => {
          const f = join(dir, `cmaf-${name}-${chunk}.mp4`);
          writeFileSync(f, Buffer.concat([readFileSync(join(root, `init-${rep}.m4s`)), readFileSync(join(root, chunk))]));
          return f;
        };
        expect(readFileSync(join(out, chunk)).equals(readFileSync(join(clear, chunk)))).toBe(false);
        expect(await decodedMd5(file(out, 'enc'), key)).toBe(await decodedMd5(file(clear, 'clear')));
      }
    }
    // The master playlist names the same keys, as #EXT-X-SESSION-KEY with the same attributes (RFC 8216bis 4.4.6.5).
    const master = readFileSync(join(out, 'master.m3u8'), 'utf8');
    expect(master.split('\n').filter((l) => l.startsWith('#EXT-X-SESSION-KEY:'))).toEqual(keyLines.map((l) => l.replace('#EXT-X-KEY:', '#EXT-X-SESSION-KEY:')));
    // The MPD of the same segments names each track's key.
    const mpd = readFileSync(join(out, 'manifest.mpd'), 'utf8');
    expect(mpd).toContain(`value="cbcs" cenc:default_KID="${AUDIO_KEY_ID}"`);
  });
});
