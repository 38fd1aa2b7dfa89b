import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../src/config.ts';
import { createTenant } from '../src/modules/admin/service.ts';
import { openPlatform } from '../src/server.ts';
import { tenantClient } from '../test/helpers/client.ts';
import { until } from '../test/helpers/until.ts';
import { uploadFile } from '../test/helpers/upload.ts';

/**
 * The same source through the platform as a customer uses it: upload in parts through presigned URLs, create an asset
 * with `hls-h264-ladder` (one listed audio track), wait for `Available`. Runs the whole platform in this process on a
 * fresh embedded data directory (or on BENCH_DATABASE_URL). Returns the wall time in ms, from the first byte uploaded.
 */
export async function throughApi(source: string): Promise<number> {
  const dataDir = mkdtempSync(join(tmpdir(), 'mediaplane-bench-api-'));
  const config = loadConfig({
    ...process.env,
    DATABASE_URL: process.env.BENCH_DATABASE_URL ?? '',
    MEDIAPLANE_DATA_DIR: dataDir,
    MEDIAPLANE_ADMIN_TOKEN: 'bench',
    LOG_LEVEL: 'warn',
  });
  const platform = await openPlatform(config);
  try {
    const address = await platform.app.listen({ port: 0, host: '127.0.0.1' });
    config.publicUrl = new URL(address);
    const tenant = await createTenant(platform.database.db, `bench-${Date.now()}`);
    const t = tenantClient(address, tenant.id, tenant.name, tenant.apiKey.key);
    const start = performance.now();
    const fileId = await uploadFile(t, source);
    const { body } = await t.json('POST', '/vod/v1/assets', {
      transcodedSources: [{ fileId, transcodingTracks: [{ trackSelector: { trackId: '1' }, type: 'Audio' }] }],
      preset: 'hls-h264-ladder',
    });
    const asset = await until(
      () => t.json('GET', `/vod/v1/assets/${body.id}`),
      (r) => ['Available', 'Error'].includes(r.body?.status),
      { timeoutMs: 3600_000, everyMs: 200 },
    );
    if (asset.body.status !== 'Available') throw new Error(`asset failed: ${asset.body.errorMessage}`);
    return performance.now() - start;
  } finally {
    await platform.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
