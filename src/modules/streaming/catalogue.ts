import { and, eq, inArray } from 'drizzle-orm';
import type { PlatformContext } from '../../context.ts';
import type { Queryable } from '../../db/client.ts';
import { notFound } from '../../platform/errors.ts';
import { findPlayable, type Playable } from '../../platform/playables.ts';
import { presentStreamingAsset, type DetailsRow } from './present.ts';
import { tenantSettings } from './settings.ts';
import { streamingAssets } from './tables.ts';

export const assetNotFound = (id: string) => notFound('streaming_asset_not_found', 'Streaming asset', id);

export async function detailsOf(db: Queryable, tenantId: string, ids: string[]): Promise<Map<string, DetailsRow>> {
  if (!ids.length) return new Map();
  const rows = await db
    .select()
    .from(streamingAssets)
    .where(and(eq(streamingAssets.tenantId, tenantId), inArray(streamingAssets.assetId, ids)));
  return new Map(rows.map((r) => [r.assetId, r]));
}

/** One playable of the tenant, of any kind; 404 when no kind has it (another tenant's included). */
export async function requirePlayable(ctx: PlatformContext, tenantId: string, id: string): Promise<Playable> {
  const found = await findPlayable(ctx, tenantId, id);
  if (!found) throw assetNotFound(id);
  return found.playable;
}

/** The streaming asset (AssetResult) of `id`. */
export async function getStreamingAsset(ctx: PlatformContext, tenantId: string, id: string) {
  const playable = await requirePlayable(ctx, tenantId, id);
  const [details, settings] = await Promise.all([detailsOf(ctx.db, tenantId, [playable.id]), tenantSettings(ctx.db, tenantId)]);
  return presentStreamingAsset(playable, details.get(playable.id), settings.defaults);
}
