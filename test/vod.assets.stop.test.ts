import { afterAll, expect, it } from 'vitest';
import { makeClip, tempDir } from './helpers/media.ts';
import { describeEachDb, freshStorage, startPlatform, tenantClient } from './helpers/platform.ts';
import { uploadFile } from './helpers/upload.ts';
import { until } from './helpers/until.ts';

/**
 * A worker stopped mid-encode (SIGTERM in a rolling upgrade) gives its output back: it is not marked Error, and the
 * platform started again on the same database and store finishes it.
 */
describeEachDb('A transcode interrupted by a stop', (kind) => {
  const { dir, cleanup } = tempDir('mediaplane-vod-stop-');
  afterAll(cleanup);

  it('is not a failure: the output is taken up again after the restart and becomes Available', async () => {
    const storage = await freshStorage(kind);
    // A short lease and sweep: the restarted platform takes the stopped output up again within seconds.
    const env = { MEDIAPLANE_TRANSCODE_LEASE_SECONDS: '3', MEDIAPLANE_SWEEP_INTERVAL_MS: '500' };
    try {
      const first = await startPlatform(kind, env, storage);
      const t = await first.createTenant();
      const fileId = await uploadFile(t, await makeClip(dir, 'long', { width: 320, height: 180, seconds: 120, audio: [] }));
      const id = (await t.json('POST', '/vod/v1/assets', { transcodedSources: [{ fileId }], preset: 'hls-h264-ladder' })).body.id as string;
      // Stopped once the encode has published its first segments (half a second of video: a fast start): ffmpeg is
      // running. Two minutes of small frames: a quiet machine takes seconds to encode them, so it cannot finish before
      // the stop, and the restarted platform's whole encode stays short.
      await until(
        async () => (await t.json('GET', `/vod/v1/assets/${id}`)).body,
        (a) => a.endpoints.length > 0 || ['Available', 'Error'].includes(a.status),
        { timeoutMs: 240_000, everyMs: 200, what: 'the asset to be playable' },
      );
      await first.stop();

      const second = await startPlatform(kind, env, storage);
      try {
        const again = tenantClient(second.baseUrl, t.id, t.name, t.key);
        const stopped = (await again.json('GET', `/vod/v1/assets/${id}`)).body;
        expect(stopped.status, stopped.errorMessage).toBe('Processing');
        const done = await until(
          async () => (await again.json('GET', `/vod/v1/assets/${id}`)).body,
          (a) => ['Available', 'Error'].includes(a.status),
          { timeoutMs: 300_000, everyMs: 500, what: 'the asset to be finished after the restart' },
        );
        expect(done.status, done.errorMessage).toBe('Available');
      } finally {
        await second.stop();
      }
    } finally {
      await storage.drop();
    }
  }, 600_000);
});
