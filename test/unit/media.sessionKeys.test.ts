import { describe, expect, it } from 'vitest';
import { hlsDrmRangePlaylist, protectedMaster, sampleAesPlaylist } from '../../src/media/live/protection/protect.ts';
import { encryptionOf, withSessionKeys, type OutputEncryption } from '../../src/media/protect.ts';

const MASTER = [
  '#EXTM3U',
  '#EXT-X-VERSION:7',
  '#EXT-X-INDEPENDENT-SEGMENTS',
  '#EXT-X-MEDIA:TYPE=SUBTITLES,GROUP-ID="subs",NAME="English",LANGUAGE="en-US",AUTOSELECT=YES,URI="captions.m3u8"',
  '#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="audio",NAME="audio",DEFAULT=YES,AUTOSELECT=YES,CHANNELS="2",URI="audio.m3u8"',
  '#EXT-X-STREAM-INF:BANDWIDTH=428000,RESOLUTION=320x180,CODECS="avc1.64000d,mp4a.40.2",AUDIO="audio",SUBTITLES="subs"',
  '180p.m3u8',
  '',
].join('\n');
const MEDIA = [
  '#EXTM3U',
  '#EXT-X-VERSION:7',
  '#EXT-X-MAP:URI="../../180p/init-3.mp4"',
  '#EXTINF:1.000,',
  '../../180p/41.m4s',
  '#EXTINF:1.000,',
  '../../180p/42.m4s',
  '',
].join('\n');

const key = (keyUrl: string, keyId: string, scheme: OutputEncryption['scheme']): OutputEncryption => ({ scheme, key: Buffer.alloc(16, 1), keyId, keyUrl });
const VIDEO_ID = '0123abcd-4567-89ef-0123-456789abcdef';
const AUDIO_ID = '89abcdef-0123-4567-89ab-cdef01234567';
const both = (scheme: OutputEncryption['scheme']): OutputEncryption => ({
  ...key(`https://p.test/drm/v1/licenses/aes128/${VIDEO_ID}`, VIDEO_ID, scheme),
  audio: { key: Buffer.alloc(16, 2), keyId: AUDIO_ID, keyUrl: `https://p.test/drm/v1/licenses/aes128/${AUDIO_ID}` },
});
const sessionKeys = (master: string) => master.split('\n').filter((l) => l.startsWith('#EXT-X-SESSION-KEY:'));
/** The media playlist's key lines as SESSION-KEY lines, without the IV (RFC 8216bis 4.4.6.5: the same attributes). */
const asSession = (media: string) => [
  ...new Set(
    media
      .split('\n')
      .filter((l) => l.startsWith('#EXT-X-KEY:') && !l.includes('METHOD=NONE'))
      .map((l) => l.replace('#EXT-X-KEY:', '#EXT-X-SESSION-KEY:').replace(/,IV=0x[0-9a-f]+/, '')),
  ),
];

describe('#EXT-X-SESSION-KEY in the master playlists of protected HLS endpoints', () => {
  it("AES-128 (AudioVideoKeys): one per key, with the media playlists' METHOD and URI and no IV, after the version", () => {
    const e = both('aes-128');
    const master = protectedMaster(MASTER, e);
    const video = hlsDrmRangePlaylist(MEDIA, encryptionOf(e, 'video').keyUrl);
    const audio = hlsDrmRangePlaylist(MEDIA.replaceAll('180p', 'audio'), encryptionOf(e, 'audio').keyUrl);
    expect(video).toContain(',IV=0x');
    expect(sessionKeys(master)).toEqual([...asSession(video), ...asSession(audio)]);
    expect(sessionKeys(master)).toEqual([
      `#EXT-X-SESSION-KEY:METHOD=AES-128,URI="https://p.test/drm/v1/licenses/aes128/${VIDEO_ID}"`,
      `#EXT-X-SESSION-KEY:METHOD=AES-128,URI="https://p.test/drm/v1/licenses/aes128/${AUDIO_ID}"`,
    ]);
    expect(master.split('\n').slice(0, 4)).toEqual(['#EXTM3U', '#EXT-X-VERSION:7', sessionKeys(master)[0], sessionKeys(master)[1]]);
    // Everything else is the master as it was; done again, it is the same (the Recorder rewrites it each pass).
    expect(master.split('\n').filter((l) => !l.startsWith('#EXT-X-SESSION-KEY:'))).toEqual(MASTER.split('\n'));
    expect(protectedMaster(master, e)).toBe(master);
  });

  it('SAMPLE-AES: the EME ClearKey key lines (KEYID, KEYFORMAT) of each track', () => {
    const e = { ...both('cbcs'), iv: Buffer.alloc(16, 9) };
    const master = protectedMaster(MASTER, e);
    const video = sampleAesPlaylist(MEDIA, encryptionOf(e, 'video'));
    const audio = sampleAesPlaylist(MEDIA, encryptionOf(e, 'audio'));
    expect(sessionKeys(master)).toEqual([...asSession(video), ...asSession(audio)]);
    expect(sessionKeys(master)[0]).toMatch(
      /^#EXT-X-SESSION-KEY:METHOD=SAMPLE-AES,URI="data:text\/plain;base64,[^"]+",KEYID=0x0123abcd.*KEYFORMAT="org.w3.clearkey"/,
    );
  });

  it('SingleKey: one key for every track, named once; a master without audio names the video key only', () => {
    const e = key(`https://p.test/drm/v1/licenses/aes128/${VIDEO_ID}`, VIDEO_ID, 'aes-128');
    expect(sessionKeys(protectedMaster(MASTER, e))).toHaveLength(1);
    const videoOnly = MASTER.split('\n')
      .filter((l) => !l.includes('TYPE=AUDIO'))
      .join('\n');
    expect(sessionKeys(protectedMaster(videoOnly, both('aes-128')))).toEqual([`#EXT-X-SESSION-KEY:METHOD=AES-128,URI="${e.keyUrl}"`]);
  });

  it('withSessionKeys: after #EXTM3U when there is no version line', () => {
    expect(withSessionKeys('#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1\na.m3u8\n', ['#EXT-X-KEY:METHOD=AES-128,URI="k",IV=0x01'])).toBe(
      '#EXTM3U\n#EXT-X-SESSION-KEY:METHOD=AES-128,URI="k"\n#EXT-X-STREAM-INF:BANDWIDTH=1\na.m3u8\n',
    );
  });
});
