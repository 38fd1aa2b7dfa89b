import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../src/config.ts';
import { mpdTimelines } from '../src/media/mpdTimeline.ts';
import { createTenant } from '../src/modules/admin/service.ts';
import { openPlatform } from '../src/server.ts';
import { tenantClient } from '../test/helpers/client.ts';
import { until } from '../test/helpers/until.ts';
import { uploadFile } from '../test/helpers/upload.ts';

/** The first line of a playlist that names something (a variant, a segment). */
const firstUri = (playlist: string) =>
  playlist
    .split('\n')
    .find((l) => l.trim() && !l.startsWith('#'))
    ?.trim();

/**
 * Whether a player could start now: the master playlist, the first variant's media playlist and its first segment all
 * answer 200 over HTTP (issue 24's definition of playable).
 */
async function startable(masterUrl: string): Promise<boolean> {
  const master = await fetch(masterUrl);
  const variant = master.ok ? firstUri(await master.text()) : undefined;
  if (!variant) return false;
  const mediaUrl = new URL(variant, masterUrl);
  const media = await fetch(mediaUrl);
  const segment = media.ok ? firstUri(await media.text()) : undefined;
  if (!segment) return false;
  const res = await fetch(new URL(segment, mediaUrl));
  await res.arrayBuffer();
  return res.ok;
}

/** The same for an MPD: it, and the first representation's initialisation and first media segments, answer 200. */
async function startableMpd(mpdUrl: string): Promise<boolean> {
  const mpd = await fetch(mpdUrl);
  const first = mpd.ok ? mpdTimelines(await mpd.text())[0] : undefined;
  if (!first?.init || first.segments.length === 0) return false;
  for (const file of [first.init, first.segments[0].file]) {
    const res = await fetch(new URL(file, mpdUrl));
    await res.arrayBuffer();
    if (!res.ok) return false;
  }
  return true;
}

export interface ApiTiming {
  /** From the first byte uploaded to `Available`. */
  wallMs: number;
  /** From `POST /vod/v1/assets` to the first moment a player could start (`startable`). */
  firstPlayableMs: number;
}

/**
 * The same source through the platform as a customer uses it: upload in parts through presigned URLs, create an asset
 * with `preset` (`hls-h264-ladder`; one listed audio track), wait for `Available`, and meanwhile poll (every 100 ms)
 * for the moment its `format` endpoint is playable (`untilPlayable`: only until then). Runs the whole platform in this
 * process on a fresh embedded data directory (or on BENCH_DATABASE_URL). `warmUp`: a source made into an asset first,
 * untimed, so the timed one meets a platform that has served before (its code compiled, its pools open), as a
 * customer's usually does; without it, the timed asset is the platform's first.
 */
export async function throughApi(
  source: string,
  {
    untilPlayable = false,
    preset = 'hls-h264-ladder',
    format = 'HLS',
    warmUp,
  }: { untilPlayable?: boolean; preset?: string; format?: 'HLS' | 'DASH'; warmUp?: string } = {},
): Promise<ApiTiming> {
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
    const create = async (fileId: string) =>
      (
        await t.json('POST', '/vod/v1/assets', {
          transcodedSources: [{ fileId, transcodingTracks: [{ trackSelector: { trackId: '1' }, type: 'Audio' }] }],
          preset,
        })
      ).body;
    if (warmUp) {
      const { id } = await create(await uploadFile(t, warmUp));
      await until(
        () => t.json('GET', `/vod/v1/assets/${id}`),
        (r) => ['Available', 'Error'].includes(r.body?.status),
        { timeoutMs: 600_000, everyMs: 100 },
      );
    }
    const start = performance.now();
    const fileId = await uploadFile(t, source);
    const posted = performance.now();
    const body = await create(fileId);
    let firstPlayableMs = Number.NaN;
    const asset = await until(
      async () => {
        const r = await t.json('GET', `/vod/v1/assets/${body.id}`);
        const endpoint = r.body?.endpoints?.find((e: { format: string }) => e.format === format);
        const ready = endpoint && (await (format === 'HLS' ? startable(endpoint.url) : startableMpd(endpoint.url)));
        if (Number.isNaN(firstPlayableMs) && ready) firstPlayableMs = performance.now() - posted;
        return r;
      },
      (r) => ['Available', 'Error'].includes(r.body?.status) || (untilPlayable && !Number.isNaN(firstPlayableMs)),
      { timeoutMs: 3600_000, everyMs: 100 },
    );
    // Closing the platform stops the encode.
    if (untilPlayable && !Number.isNaN(firstPlayableMs)) return { wallMs: Number.NaN, firstPlayableMs };
    if (asset.body.status !== 'Available') throw new Error(`asset failed: ${asset.body.errorMessage}`);
    const wallMs = performance.now() - start;
    return { wallMs, firstPlayableMs: Number.isNaN(firstPlayableMs) ? performance.now() - posted : firstPlayableMs };
  } finally {
    await platform.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
