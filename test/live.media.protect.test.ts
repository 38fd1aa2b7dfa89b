import { execFile } from 'node:child_process';
import { createDecipheriv } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runFfmpeg } from '../src/media/ffmpeg.ts';
import { hlsDrmRangePlaylist, protectedPublisher, type LiveProtection } from '../src/media/live/protection/protect.ts';
import { quietLog } from './helpers/live.ts';
import { tempDir } from './helpers/media.ts';

const run = promisify(execFile);
const KEY = Buffer.from('00112233445566778899aabbccddeeff', 'hex');
const KEY_ID = '0123abcd-4567-89ef-0123-456789abcdef';
const PROTECTION: LiveProtection = {
  hls: { scheme: 'aes-128', key: KEY, keyId: KEY_ID, keyUrl: 'https://drm.example/aes128/k' },
  dash: [
    { scheme: 'cenc', key: KEY, keyId: KEY_ID, keyUrl: 'https://drm.example/clearkey' },
    { scheme: 'cbcs', key: KEY, keyId: KEY_ID, keyUrl: 'https://drm.example/clearkey', iv: Buffer.from('f0e1d2c3b4a5968778695a4b3c2d1e0f', 'hex') },
  ],
};

const AUDIO_KEY = Buffer.from('ffeeddccbbaa99887766554433221100', 'hex');
const AUDIO_KEY_ID = '89abcdef-0123-4567-89ab-cdef01234567';
const audioOf = (e: { scheme: 'aes-128' | 'cenc' | 'cbcs' }) => ({
  key: AUDIO_KEY,
  keyId: AUDIO_KEY_ID,
  keyUrl: `https://drm.example/audio-${e.scheme}`,
  ...(e.scheme === 'cbcs' ? { iv: Buffer.from('00112233445566770011223344556677', 'hex') } : {}),
});
/** drmKeyMode AudioVideoKeys: the same endpoints with the audio tracks' own key. */
const AUDIO_VIDEO: LiveProtection = {
  hls: { ...PROTECTION.hls!, audio: audioOf(PROTECTION.hls!) },
  dash: PROTECTION.dash!.map((d) => ({ ...d, audio: audioOf(d) })),
};

const md5 = async (file: string, key?: Buffer) =>
  (await run('ffmpeg', ['-v', 'error', ...(key ? ['-decryption_key', key.toString('hex')] : []), '-i', file, '-f', 'md5', '-'])).stdout.trim();

/** A store in memory, as the packager's publish/remove see it. */
function memoryStore() {
  const files = new Map<string, Buffer>();
  return {
    files,
    publish: async (key: string, body: Buffer) => void files.set(key, body),
    remove: async (keys: string[]) => keys.forEach((k) => files.delete(k)),
  };
}

/**
 * The live packager's encryption step on real CMAF output of ffmpeg, checked with ffmpeg's own decryption: what each
 * protected endpoint gets for init segments, segments and manifests, and what a continued pipeline publishes again.
 */
describe('Live DRM publishing', () => {
  const { dir, cleanup } = tempDir('mediaplane-live-protect-');
  let init: Buffer;
  let segment: Buffer;
  let audioInit: Buffer;
  let audioSegment: Buffer;

  beforeAll(async () => {
    await runFfmpeg([
      ...['-f', 'lavfi', '-i', 'testsrc2=s=160x90:r=15', '-t', '2', '-c:v', 'libx264', '-preset', 'ultrafast', '-g', '15', '-f', 'dash', '-seg_duration', '1'],
      ...['-init_seg_name', 'init.m4s', '-media_seg_name', 'chunk-$Number$.m4s', join(dir, 'manifest.mpd')],
    ]);
    [init, segment] = [readFileSync(join(dir, 'init.m4s')), readFileSync(join(dir, 'chunk-1.m4s'))];
    await runFfmpeg([
      ...['-f', 'lavfi', '-i', 'sine=f=440:r=48000', '-t', '2', '-c:a', 'aac', '-b:a', '64k', '-f', 'dash', '-seg_duration', '1'],
      ...['-init_seg_name', 'a-init.m4s', '-media_seg_name', 'a-chunk-$Number$.m4s', join(dir, 'audio.mpd')],
    ]);
    [audioInit, audioSegment] = [readFileSync(join(dir, 'a-init.m4s')), readFileSync(join(dir, 'a-chunk-1.m4s'))];
  });
  afterAll(() => cleanup());

  const write = (name: string, ...parts: Buffer[]) => {
    const file = join(dir, name);
    writeFileSync(file, Buffer.concat(parts));
    return file;
  };

  it('publishes each segment clear, AES-128 (IV = its number), CENC cenc and cbcs; the encrypted ones decode only with the key', async () => {
    const store = memoryStore();
    const out = protectedPublisher(PROTECTION, store.publish, store.remove, quietLog());
    await out.publish('180p/init-1.mp4', init, 'video/mp4');
    await out.publish('180p/7.m4s', segment, 'video/iso.segment');
    expect(store.files.get('180p/7.m4s')!.equals(segment)).toBe(true);
    expect(store.files.get('aes128/180p/init-1.mp4')!.equals(init)).toBe(true);

    const iv = Buffer.alloc(16);
    iv.writeBigUInt64BE(7n, 8);
    const decipher = createDecipheriv('aes-128-cbc', KEY, iv);
    const aes = store.files.get('aes128/180p/7.m4s')!;
    expect(Buffer.concat([decipher.update(aes), decipher.final()]).equals(segment)).toBe(true);

    const clear = await md5(write('clear.mp4', init, segment));
    const cenc = write('cenc.mp4', store.files.get('cenc/180p/init-1.mp4')!, store.files.get('cenc/180p/7.m4s')!);
    expect(await md5(cenc, KEY)).toBe(clear);
    expect(await md5(cenc).catch(() => 'undecodable')).not.toBe(clear);
    // cbcs: the scheme and the constant IV in tenc, the 1:9 pattern for video (most of the slice data stays clear).
    const cbcsInit = store.files.get('cbcs/180p/init-1.mp4')!;
    expect(cbcsInit.includes(Buffer.from('cbcs'))).toBe(true);
    expect(cbcsInit.includes(PROTECTION.dash![1]!.iv!)).toBe(true);
    const cbcsSegment = store.files.get('cbcs/180p/7.m4s')!;
    const cbcs = write('cbcs.mp4', cbcsInit, cbcsSegment);
    expect(await md5(cbcs, KEY)).toBe(clear);
    expect(await md5(cbcs).catch(() => 'undecodable')).not.toBe(clear);
    expect(cbcsSegment.equals(store.files.get('cenc/180p/7.m4s')!)).toBe(false);

    await out.remove(['180p/7.m4s']);
    expect([...store.files.keys()].filter((k) => k.endsWith('7.m4s'))).toEqual([]);
  });

  it('AudioVideoKeys: the audio track is encrypted with its own key (AES-128, cenc, cbcs), signalled in playlists and MPD', async () => {
    const store = memoryStore();
    const out = protectedPublisher(AUDIO_VIDEO, store.publish, store.remove, quietLog());
    for (const [track, i, s] of [
      ['180p', init, segment],
      ['audio', audioInit, audioSegment],
    ] as const) {
      await out.publish(`${track}/init-1.mp4`, i, 'video/mp4');
      await out.publish(`${track}/3.m4s`, s, 'video/iso.segment');
    }
    const iv = Buffer.alloc(16);
    iv.writeBigUInt64BE(3n, 8);
    const decipher = createDecipheriv('aes-128-cbc', AUDIO_KEY, iv);
    const aes = store.files.get('aes128/audio/3.m4s')!;
    expect(Buffer.concat([decipher.update(aes), decipher.final()]).equals(audioSegment)).toBe(true);

    const clearAudio = await md5(write('clear-a.mp4', audioInit, audioSegment));
    const clearVideo = await md5(write('clear-v.mp4', init, segment));
    for (const scheme of ['cenc', 'cbcs']) {
      const a = write(`${scheme}-a.mp4`, store.files.get(`${scheme}/audio/init-1.mp4`)!, store.files.get(`${scheme}/audio/3.m4s`)!);
      expect(await md5(a, AUDIO_KEY), scheme).toBe(clearAudio);
      expect(await md5(a, KEY).catch(() => 'undecodable'), scheme).not.toBe(clearAudio);
      const v = write(`${scheme}-v.mp4`, store.files.get(`${scheme}/180p/init-1.mp4`)!, store.files.get(`${scheme}/180p/3.m4s`)!);
      expect(await md5(v, KEY), scheme).toBe(clearVideo);
      // Either init segment names both key ids in its common PSSH: a player licenses both from the first it reads.
      const kids = [KEY_ID, AUDIO_KEY_ID].map((k) => Buffer.from(k.replace(/-/g, ''), 'hex'));
      for (const k of kids) expect(store.files.get(`${scheme}/audio/init-1.mp4`)!.includes(k)).toBe(true);
    }

    const playlist = (track: string) => ['#EXTM3U', `#EXT-X-MAP:URI="${track}/init-1.mp4"`, '#EXTINF:1.000000,', `${track}/3.m4s`, ''].join('\n');
    await out.publish('audio.m3u8', Buffer.from(playlist('audio')), 'application/vnd.apple.mpegurl');
    await out.publish('180p.m3u8', Buffer.from(playlist('180p')), 'application/vnd.apple.mpegurl');
    expect(store.files.get('aes128/audio.m3u8')!.toString()).toContain('URI="https://drm.example/audio-aes-128"');
    expect(store.files.get('aes128/180p.m3u8')!.toString()).toContain('URI="https://drm.example/aes128/k"');
    const mpd = [
      '<MPD>',
      '<AdaptationSet contentType="video" mimeType="video/mp4">',
      '</AdaptationSet>',
      '<AdaptationSet contentType="audio" mimeType="audio/mp4">',
      '</AdaptationSet>',
      '</MPD>',
    ].join('\n');
    await out.publish('manifest.mpd', Buffer.from(mpd), 'application/dash+xml');
    const cbcsMpd = store.files.get('cbcs/manifest.mpd')!.toString();
    expect(cbcsMpd).toMatch(new RegExp(`contentType="video"[^]*default_KID="${KEY_ID}"[^]*contentType="audio"[^]*default_KID="${AUDIO_KEY_ID}"`));
    expect(cbcsMpd).toContain('<dashif:Laurl>https://drm.example/audio-cbcs</dashif:Laurl>');
  });

  it('a continued pipeline publishes the encrypted init segments again, byte for byte, and encrypts what follows', async () => {
    const first = memoryStore();
    await protectedPublisher(PROTECTION, first.publish, first.remove, quietLog()).publish('180p/init-1.mp4', init, 'video/mp4');
    const next = memoryStore();
    const out = protectedPublisher(PROTECTION, next.publish, next.remove, quietLog());
    await out.resume([{ key: '180p/init-1.mp4', track: '180p', body: init }]);
    expect(next.files.get('cenc/180p/init-1.mp4')!.equals(first.files.get('cenc/180p/init-1.mp4')!)).toBe(true);
    expect(next.files.get('aes128/180p/init-1.mp4')!.equals(init)).toBe(true);
    await out.publish('180p/8.m4s', segment, 'video/iso.segment');
    const cenc = write('resumed.mp4', next.files.get('cenc/180p/init-1.mp4')!, next.files.get('cenc/180p/8.m4s')!);
    expect(await md5(cenc, KEY)).toBe(await md5(write('clear2.mp4', init, segment)));
  });

  it('writes the key into the HLS playlists (init segments clear) and ContentProtection into the MPD', async () => {
    const store = memoryStore();
    const out = protectedPublisher(PROTECTION, store.publish, store.remove, quietLog());
    const playlist = [
      '#EXTM3U',
      '#EXT-X-MEDIA-SEQUENCE:4',
      '#EXT-X-MAP:URI="180p/init-1.mp4"',
      '#EXTINF:1.000000,',
      '180p/4.m4s',
      '#EXT-X-DISCONTINUITY',
      '#EXT-X-MAP:URI="180p/init-2.mp4"',
      '#EXTINF:1.000000,',
      '180p/5.m4s',
      '',
    ].join('\n');
    await out.publish('180p.m3u8', Buffer.from(playlist), 'application/vnd.apple.mpegurl');
    await out.publish('180p.delta.m3u8', Buffer.from(playlist), 'application/vnd.apple.mpegurl');
    await out.publish('master.m3u8', Buffer.from('#EXTM3U\n180p.m3u8\n'), 'application/vnd.apple.mpegurl');
    await out.publish('manifest.mpd', Buffer.from('<MPD a="b">\n<AdaptationSet contentType="video" mimeType="video/mp4">\n</MPD>'), 'application/dash+xml');
    const key = '#EXT-X-KEY:METHOD=AES-128,URI="https://drm.example/aes128/k"';
    expect(store.files.get('aes128/180p.m3u8')!.toString()).toBe(
      playlist
        .replace('#EXT-X-MAP:URI="180p/init-1.mp4"', `#EXT-X-KEY:METHOD=NONE\n#EXT-X-MAP:URI="180p/init-1.mp4"\n${key}`)
        .replace('#EXT-X-MAP:URI="180p/init-2.mp4"', `#EXT-X-KEY:METHOD=NONE\n#EXT-X-MAP:URI="180p/init-2.mp4"\n${key}`),
    );
    expect(store.files.has('aes128/180p.delta.m3u8')).toBe(false);
    // The master as it was, with the key its media playlists name as #EXT-X-SESSION-KEY.
    expect(store.files.get('aes128/master.m3u8')!.toString()).toBe(`#EXTM3U\n${key.replace('#EXT-X-KEY:', '#EXT-X-SESSION-KEY:')}\n180p.m3u8\n`);
    const mpd = store.files.get('cenc/manifest.mpd')!.toString();
    expect(mpd).toContain('<MPD xmlns:cenc="urn:mpeg:cenc:2013" xmlns:dashif="https://dashif.org/CPS" a="b">');
    expect(mpd).toContain(`value="cenc" cenc:default_KID="${KEY_ID}"`);
    expect(mpd).toContain('<dashif:Laurl>https://drm.example/clearkey</dashif:Laurl>');
    expect(store.files.get('cbcs/manifest.mpd')!.toString()).toContain(`value="cbcs" cenc:default_KID="${KEY_ID}"`);
  });

  it('SAMPLE-AES alone (HlsDrm cbcs): cbcs copies that decode with the key, its playlists with the key line, no MPD', async () => {
    const store = memoryStore();
    const out = protectedPublisher({ sampleAes: PROTECTION.dash![1] }, store.publish, store.remove, quietLog());
    await out.publish('180p/init-1.mp4', init, 'video/mp4');
    await out.publish('180p/4.m4s', segment, 'video/iso.segment');
    const playlist = ['#EXTM3U', '#EXT-X-MEDIA-SEQUENCE:4', '#EXT-X-MAP:URI="180p/init-1.mp4"', '#EXTINF:1.000000,', '180p/4.m4s', ''].join('\n');
    await out.publish('180p.m3u8', Buffer.from(playlist), 'application/vnd.apple.mpegurl');
    await out.publish('master.m3u8', Buffer.from('#EXTM3U\n180p.m3u8\n'), 'application/vnd.apple.mpegurl');
    await out.publish('manifest.mpd', Buffer.from('<MPD>\n<AdaptationSet contentType="video">\n</MPD>'), 'application/dash+xml');
    const clear = ['180p/init-1.mp4', '180p/4.m4s', '180p.m3u8', 'master.m3u8', 'manifest.mpd'];
    // The cbcs copies and the HLS playlists only: no MPD (no DashDrm endpoint), no other prefix.
    expect([...store.files.keys()].filter((k) => !clear.includes(k)).sort()).toEqual([
      'cbcs/180p.m3u8',
      'cbcs/180p/4.m4s',
      'cbcs/180p/init-1.mp4',
      'cbcs/master.m3u8',
    ]);
    const kid = Buffer.from(KEY_ID.replace(/-/g, ''), 'hex');
    expect(store.files.get('cbcs/180p.m3u8')!.toString()).toBe(
      playlist.replace(
        '#EXTINF',
        `#EXT-X-KEY:METHOD=SAMPLE-AES,URI="data:text/plain;base64,${kid.toString('base64')}",KEYID=0x${kid.toString('hex')},KEYFORMAT="org.w3.clearkey",KEYFORMATVERSIONS="1"\n#EXTINF`,
      ),
    );
    const file = write('sample-aes.mp4', store.files.get('cbcs/180p/init-1.mp4')!, store.files.get('cbcs/180p/4.m4s')!);
    expect(await md5(file, KEY)).toBe(await md5(write('sample-aes-clear.mp4', init, segment)));
    await out.remove(['180p/4.m4s']);
    expect(store.files.has('cbcs/180p/4.m4s')).toBe(false);
  });

  it("writes each segment's IV in a range's playlist (its media sequence counts from 0)", () => {
    const range = [
      '#EXTM3U',
      '#EXT-X-MEDIA-SEQUENCE:0',
      '#EXT-X-MAP:URI="../../180p/init-1.mp4"',
      '#EXT-X-PROGRAM-DATE-TIME:2026-11-24T00:00:00.000Z',
      '#EXTINF:1.000,',
      '../../180p/30.m4s',
      '#EXT-X-ENDLIST',
      '',
    ].join('\n');
    expect(hlsDrmRangePlaylist(range, 'https://drm.example/aes128/k')).toBe(
      range
        .replace('#EXT-X-MAP', '#EXT-X-KEY:METHOD=NONE\n#EXT-X-MAP')
        .replace('#EXT-X-PROGRAM-DATE-TIME', `#EXT-X-KEY:METHOD=AES-128,URI="https://drm.example/aes128/k",IV=0x${'0'.repeat(30)}1e\n#EXT-X-PROGRAM-DATE-TIME`),
    );
  });
});
