import { execFile } from 'node:child_process';
import { createDecipheriv } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'vitest';

/** What the DRM end-to-end tests check of encrypted media (test/live.drm.e2e.test.ts and its recordings' cases). */

const run = promisify(execFile);

export const b64url = (uuid: string) => Buffer.from(uuid.replace(/-/g, ''), 'hex').toString('base64url');
export const sessionKeysOf = (master: string) => master.split('\n').filter((l) => l.startsWith('#EXT-X-SESSION-KEY:'));
/** A media playlist's keys as a master playlist's #EXT-X-SESSION-KEY lines name them: the same attributes, no IV. */
export const asSessionKeys = (media: string) => [
  ...new Set(
    media
      .split('\n')
      .filter((l) => l.startsWith('#EXT-X-KEY:') && !l.includes('METHOD=NONE'))
      .map((l) => l.replace('#EXT-X-KEY:', '#EXT-X-SESSION-KEY:').replace(/,IV=0x[0-9a-f]+/, '')),
  ),
];
/** What ffmpeg decodes from `file` (with `-decryption_key` when given): the md5 of the frames, and its complaints. */
export async function decode(file: string, keyHex?: string, stream: 'v' | 'a' = 'v'): Promise<{ md5: string; errors: string }> {
  const args = ['-v', 'error', ...(keyHex ? ['-decryption_key', keyHex] : []), '-i', file, '-map', `0:${stream}`, '-f', 'md5', '-'];
  const r = (await run('ffmpeg', args).catch((e) => e)) as { stdout: string; stderr: string };
  return { md5: String(r.stdout).trim(), errors: String(r.stderr) };
}

/**
 * An HLS AES-128 fMP4 segment decrypted with `key` and `iv` decodes cleanly after its clear init segment, and the bytes
 * as served do not decode to the same frames. Returns the decoded frames (files written in `dir` as `name`-*.mp4).
 */
export async function expectAes128Decrypts(dir: string, name: string, init: Buffer, encrypted: Buffer, key: Buffer, iv: Buffer) {
  const decipher = createDecipheriv('aes-128-cbc', key, iv);
  const plain = join(dir, `${name}.mp4`);
  const garbled = join(dir, `${name}-garbled.mp4`);
  writeFileSync(plain, Buffer.concat([init, decipher.update(encrypted), decipher.final()]));
  writeFileSync(garbled, Buffer.concat([init, encrypted]));
  const frames = await decode(plain);
  expect(frames.errors).toBe('');
  expect(frames.md5).toMatch(/^MD5=/);
  expect((await decode(garbled)).md5).not.toBe(frames.md5);
  return frames;
}
