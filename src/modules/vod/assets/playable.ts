import { and, eq, gte, inArray, lte, type SQL } from 'drizzle-orm';
import type { PlatformContext } from '../../../context.ts';
import type { Playable, PlayableFilter, PlayableKind } from '../../../platform/playables.ts';
import { datesWhere } from '../../../platform/playables.ts';
import { isUuid } from '../../../platform/ids.ts';
import { findFile } from '../files.service.ts';
import { outputPrefix } from '../storageKeys.ts';
import { vodAssets, vodOutputs } from './tables.ts';

type AssetRow = typeof vodAssets.$inferSelect;
type OutputRow = typeof vodOutputs.$inferSelect;

function toPlayable(a: AssetRow, outputs: OutputRow[]): Playable {
  const ordered = [...outputs].sort((x, y) => Number(y.preset === a.preset) - Number(x.preset === a.preset) || +x.createDate - +y.createDate);
  return {
    id: a.id,
    type: 'Vod',
    source: 'Vod',
    status: a.status,
    title: a.title,
    metadata: a.metadata,
    attributes: a.attributes,
    createDate: a.createDate,
    lastModificationDate: a.lastModificationDate,
    durationMilliseconds: a.durationMilliseconds,
    channelId: null,
    start: null,
    end: null,
    isDrm: outputs.some((o) => o.endpoints.some((e) => e.isDrmProtected)),
    preset: a.preset,
    outputs: ordered.map((o) => ({ id: o.id, status: o.status, preset: o.preset, expirationDate: o.expirationDate, endpoints: o.endpoints })),
  };
}

async function withOutputs(ctx: PlatformContext, tenantId: string, rows: AssetRow[]): Promise<Playable[]> {
  if (!rows.length) return [];
  const outputs = await ctx.db
    .select()
    .from(vodOutputs)
    .where(
      and(
        eq(vodOutputs.tenantId, tenantId),
        inArray(
          vodOutputs.assetId,
          rows.map((r) => r.id),
        ),
      ),
    );
  return rows.map((r) =>
    toPlayable(
      r,
      outputs.filter((o) => o.assetId === r.id),
    ),
  );
}

function where(tenantId: string, f: PlayableFilter): SQL | undefined {
  return and(
    eq(vodAssets.tenantId, tenantId),
    f.ids ? inArray(vodAssets.id, f.ids.filter(isUuid)) : undefined,
    f.statuses ? inArray(vodAssets.status, f.statuses) : undefined,
    f.durationFrom !== undefined ? gte(vodAssets.durationMilliseconds, f.durationFrom) : undefined,
    f.durationTo !== undefined ? lte(vodAssets.durationMilliseconds, f.durationTo) : undefined,
    ...datesWhere(f, vodAssets.createDate, vodAssets.lastModificationDate),
  );
}

/** VOD assets in the streaming catalogue (`type` Vod). */
export const vodPlayables: PlayableKind = {
  type: 'Vod',
  source: 'Vod',
  async list(ctx, tenantId, filter) {
    // A VOD asset has no channel: a channel filter leaves none.
    if (filter.channelIds) return [];
    if (filter.ids && !filter.ids.some(isUuid)) return [];
    return withOutputs(ctx, tenantId, await ctx.db.select().from(vodAssets).where(where(tenantId, filter)));
  },
  async get(ctx, tenantId, id) {
    if (!isUuid(id)) return undefined;
    const rows = await ctx.db
      .select()
      .from(vodAssets)
      .where(and(eq(vodAssets.tenantId, tenantId), eq(vodAssets.id, id.toLowerCase())));
    return (await withOutputs(ctx, tenantId, rows))[0];
  },
  /** The uploaded source while it exists, else the first available output's first manifest. */
  async frameSource(ctx, tenantId, id) {
    if (!isUuid(id)) return undefined;
    const [asset] = await ctx.db
      .select()
      .from(vodAssets)
      .where(and(eq(vodAssets.tenantId, tenantId), eq(vodAssets.id, id.toLowerCase())));
    if (!asset) return undefined;
    for (const src of asset.sources) {
      const file = await findFile(ctx.db, tenantId, src.fileId);
      if (file?.status === 'Completed' && (await ctx.store.head(file.fileKey)))
        return { location: await ctx.store.readableLocation(file.fileKey), final: true };
    }
    const outputs = await ctx.db
      .select()
      .from(vodOutputs)
      .where(and(eq(vodOutputs.tenantId, tenantId), eq(vodOutputs.assetId, asset.id), eq(vodOutputs.status, 'Available')));
    for (const o of outputs) {
      const manifest = o.endpoints[0]?.manifest;
      if (manifest) return { location: await ctx.store.readableLocation(outputPrefix(tenantId, asset.id, o.id) + manifest), final: true };
    }
    return undefined;
  },
};
