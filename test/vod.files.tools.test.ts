import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { uploadFile } from './helpers/files.ts';
import { describeEachDb, startPlatform, type TestPlatform } from './helpers/platform.ts';

/** A server whose ffprobe cannot run must not lose uploads nor answer 500. */
describeEachDb('VOD files without ffprobe', (kind) => {
  let p: TestPlatform;
  const saved = process.env.FFPROBE_PATH;
  beforeAll(async () => {
    p = await startPlatform(kind);
    process.env.FFPROBE_PATH = '/nonexistent/ffprobe';
  });
  afterAll(async () => {
    if (saved === undefined) delete process.env.FFPROBE_PATH;
    else process.env.FFPROBE_PATH = saved;
    await p.stop();
  });

  it('completes the upload without media facts, and detect answers 503 media_tools_unavailable', async () => {
    const t = await p.createTenant();
    const s = await uploadFile(t, 'clip.mp4', randomBytes(1000));
    const file = await t.json('GET', `/vod/v1/files/${s.fileId}`);
    expect(file.body.status).toBe('Completed');
    const detect = await t.json('POST', `/vod/v1/files/${s.fileId}/detect`);
    expect(detect.status).toBe(503);
    expect(detect.body.status.code).toBe('media_tools_unavailable');
    expect(detect.body.status.message).toContain('FFPROBE_PATH');
  });
});
