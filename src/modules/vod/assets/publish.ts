import { and, eq, type SQL } from 'drizzle-orm';
import type { PlatformContext } from '../../../context.ts';
import type { Queryable } from '../../../db/client.ts';
import type { PublishSink } from '../../../media/transcode.ts';
import { recordEvent } from '../../../platform/events.ts';
import { MEDIA_CLOCK_PATH } from '../../../platform/playback.ts';
import { contentTypeOf } from '../../../storage/contentTypes.ts';
import { endpointRows, type OutputIds } from './upload.ts';
import { vodOutputs } from './tables.ts';

/**
 * A dynamic MPD names the delivery's clock (UTCTiming): a player needs the server's time to place a dynamic
 * presentation, and ffmpeg writes none (the `Date` header is not readable across origins by default).
 */
export function withClock(ctx: PlatformContext, path: string, text: string): string {
  if (!path.endsWith('.mpd') || !text.includes('type="dynamic"') || text.includes('<UTCTiming')) return text;
  const at = text.lastIndexOf('</MPD>');
  const timing = `\t<UTCTiming schemeIdUri="urn:mpeg:dash:utc:http-iso:2014" value="${ctx.config.publicUrl.origin}${MEDIA_CLOCK_PATH}"/>\n`;
  return at < 0 ? text : text.slice(0, at) + timing + text.slice(at);
}

/**
 * Where a transcode publishes its output while it encodes (media/progressive.ts): files under the output's prefix in
 * the store, and, once every manifest is there, the output's endpoints on its row (status still `Processing`) with a
 * `vod.output.playable` event in the same transaction. `owned` selects the row while this worker holds it: an output
 * deleted or taken over meanwhile is not announced.
 */
export function outputPublisher(ctx: PlatformContext, prefix: string, ids: OutputIds, owned: SQL | undefined, sourceDurationMs: number): PublishSink {
  return {
    putFile: (path, absolutePath) => ctx.store.putFile(prefix + path, absolutePath, contentTypeOf(path)),
    putText: (path, text) => ctx.store.putObject(prefix + path, withClock(ctx, path, text), contentTypeOf(path)),
    playable: (manifests) =>
      ctx.db.transaction((tx) => announcePlayable(ctx, tx, ids, manifests, sourceDurationMs, and(owned, eq(vodOutputs.status, 'Processing')))),
    failed: (e) => ctx.log.warn({ err: e, assetId: ids.assetId, outputId: ids.outputId }, 'publishing a growing output failed; the next pass tries again'),
  };
}

/**
 * Publishes the endpoints of an output still encoding on its row (`where` selects it while it may be announced) with a
 * `vod.output.playable` event, in the caller's transaction.
 */
export async function announcePlayable(
  ctx: PlatformContext,
  tx: Queryable,
  ids: OutputIds,
  manifests: { format: 'HLS' | 'DASH'; manifest: string }[],
  sourceDurationMs: number,
  where: SQL | undefined,
): Promise<void> {
  const endpoints = endpointRows(
    ctx,
    // Until the output is finished its length is the source's and its size unknown (docs/decisions/vod-assets.md).
    manifests.map((m) => ({ ...m, durationMilliseconds: sourceDurationMs, size: 0, hasVerticalOrientation: ids.preset.hasVerticalOrientation })),
    ids,
  );
  const rows = await tx.update(vodOutputs).set({ endpoints }).where(where).returning({ id: vodOutputs.id });
  if (!rows.length) return;
  await recordEvent(tx, ids.tenantId, 'vod.output.playable', {
    id: ids.outputId,
    assetId: ids.assetId,
    preset: ids.preset.id,
    endpoints: endpoints.map((e) => ({ format: e.format, url: e.url })),
  });
}
