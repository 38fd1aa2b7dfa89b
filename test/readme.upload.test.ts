import { execFile } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { makeClip, tempDir } from './helpers/media.ts';
import { describeOnDb, startPlatform, type TestPlatform, type TestTenant } from './helpers/platform.ts';

const run = promisify(execFile);

/** The first ```sh block after a README heading, exactly as a reader would paste it. */
function readmeBlock(heading: string): string {
  const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
  const at = readme.indexOf(`\n${heading}\n`);
  if (at < 0) throw new Error(`README has no heading ${heading}`);
  const start = readme.indexOf('```sh\n', at) + '```sh\n'.length;
  return readme.slice(start, readme.indexOf('\n```', start));
}

/**
 * Issue 25, item 11: the README's upload example, pasted into bash with the variables its earlier sections set,
 * uploads a file in several parts (the ETag of each taken from the right header line), completes it and creates the
 * asset. `grep -i etag` matched `access-control-expose-headers: ETag, ...` too, and the pasted value was refused.
 */
describeOnDb('pglite', 'README: the upload example, as pasted', (kind) => {
  const { dir, cleanup } = tempDir();
  let p: TestPlatform;
  let t: TestTenant;
  beforeAll(async () => {
    // Parts of 64 KiB (the embedded store takes any size): several parts, so the example's loop is exercised.
    p = await startPlatform(kind, { MEDIAPLANE_UPLOAD_PART_SIZE: String(64 * 1024) });
    t = await p.createTenant();
  }, 120_000);
  afterAll(async () => {
    await p?.stop();
    cleanup();
  });

  it('uploads movie.mp4 in parts, completes it and creates the asset', async () => {
    const clip = await makeClip(dir, 'movie', { seconds: 4, width: 640, height: 360, audio: [{ language: 'eng', frequency: 440 }] });
    const block = readmeBlock('## VOD: upload, transcode, play');
    const { stdout } = await run('bash', ['-c', block], {
      cwd: dir,
      env: { ...process.env, MP: p.baseUrl, KEY: t.key, TENANT_ID: t.id },
      timeout: 120_000,
    });
    const start = JSON.parse(readFileSync(join(dir, 'start.json'), 'utf8'));
    const complete = JSON.parse(readFileSync(join(dir, 'complete.json'), 'utf8'));
    expect(start.multipartUrls.length).toBeGreaterThan(1);
    expect(start.multipartUrls.length * start.partSize).toBeGreaterThanOrEqual(statSync(clip).size);
    expect(complete.parts.map((x: { partNumber: number }) => x.partNumber)).toEqual(start.multipartUrls.map((_: string, i: number) => i + 1));
    for (const part of complete.parts) expect(part.eTag, JSON.stringify(complete)).toMatch(/^"?[0-9a-f]{32}"?$/);

    const file = await t.json('GET', `/vod/v1/files/${start.fileId}`);
    expect(file.body.status, stdout).toBe('Completed');
    const asset = JSON.parse(readFileSync(join(dir, 'asset.json'), 'utf8'));
    expect(asset.id, JSON.stringify(asset)).toBeTruthy();
    expect((await t.json('GET', `/vod/v1/assets/${asset.id}`)).status).toBe(200);
  }, 180_000);
});
