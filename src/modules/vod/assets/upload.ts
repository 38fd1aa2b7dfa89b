import { readdir } from 'node:fs/promises';
import { join, relative } from 'node:path';
import type { PlatformContext } from '../../../context.ts';
import { contentTypeOf } from '../../../media/contentTypes.ts';
import type { TranscodeResult } from '../../../media/transcode.ts';
import type { Preset } from '../../transcoder/service.ts';
import type { EndpointRow } from './tables.ts';

async function* walk(dir: string): AsyncGenerator<string> {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* walk(path);
    else yield path;
  }
}

/** Where a player fetches an output's files: served by the platform from the object store. */
export const mediaUrl = (ctx: PlatformContext, tenantId: string, assetId: string, outputId: string, path: string) =>
  `${ctx.config.publicUrl.origin}/media/vod/${tenantId}/${assetId}/${outputId}/${path}`;

/** Uploads an output directory under `prefix` and describes its endpoints. Manifests go last: a visible manifest means complete segments. */
export async function uploadOutput(
  ctx: PlatformContext,
  dir: string,
  prefix: string,
  result: TranscodeResult,
  ids: { tenantId: string; assetId: string; outputId: string; preset: Preset },
): Promise<EndpointRow[]> {
  const files: string[] = [];
  for await (const f of walk(dir)) files.push(f);
  const isManifest = (f: string) => /\.(m3u8|mpd)$/.test(f);
  for (const f of [...files.filter((f) => !isManifest(f)), ...files.filter(isManifest)]) {
    const rel = relative(dir, f).split('\\').join('/');
    await ctx.store.putFile(prefix + rel, f, contentTypeOf(rel));
  }
  return result.endpoints.map((e, i) => ({
    id: `${ids.outputId}-${e.format.toLowerCase()}-${i}`,
    accessType: 'Http',
    format: e.format,
    url: mediaUrl(ctx, ids.tenantId, ids.assetId, ids.outputId, e.manifest),
    preset: ids.preset.id,
    protection: 'None',
    durationMilliseconds: e.durationMilliseconds,
    size: e.size,
    manifest: e.manifest,
    hasVerticalOrientation: ids.preset.hasVerticalOrientation,
  }));
}
