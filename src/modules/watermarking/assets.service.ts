import { and, count, eq, sql } from 'drizzle-orm';
import type { Static } from 'typebox';
import type { PlatformContext } from '../../context.ts';
import type { Queryable } from '../../db/client.ts';
import { notFound } from '../../platform/errors.ts';
import { recordEvent } from '../../platform/events.ts';
import { dateRange, textSearch } from '../../platform/filters.ts';
import { isUuid, newId } from '../../platform/ids.ts';
import { envelope, orderBy, pageWindow, type PageRequest } from '../../platform/paging.ts';
import { findFile, getAsset as getVodAsset } from '../vod/index.ts';
import { prepareJob } from './jobs.ts';
import { minimumDurationSeconds, tooShort } from './minimum.ts';
import type * as s from './schemas.ts';
import { getSettings } from './settings.service.ts';
import { watermarkingAssets } from './tables.ts';

export type PreparedAssetRow = typeof watermarkingAssets.$inferSelect;
type ListQuery = Static<typeof s.AssetListQuery>;

export const assetNotFound = (id: string) => notFound('watermarking_asset_not_found', 'Watermarking asset', id);

/** Prepares a VOD asset's source for A/B watermarking; the VOD asset must be the tenant's (404 otherwise). */
export async function createPreparedAsset(ctx: PlatformContext, tenantId: string, body: Static<typeof s.AssetCreate>) {
  const vod = await getVodAsset(ctx.db, tenantId, body.vodAssetId);
  const settings = await getSettings(ctx.db, tenantId);
  // The source's duration as the files API read it (the preparation encodes the source); when unknown yet (a file
  // ffprobe could not read at completion), the preparation checks it again.
  const fileId = vod.sources[0]?.fileId;
  const durationMs = (fileId ? (await findFile(ctx.db, tenantId, fileId))?.durationMs : undefined) ?? vod.durationMilliseconds;
  if (durationMs && durationMs < minimumDurationSeconds(settings) * 1000) throw tooShort(`VOD asset ${vod.id}`, durationMs, settings);
  const id = newId();
  await ctx.db.transaction(async (tx) => {
    await tx.insert(watermarkingAssets).values({
      id,
      tenantId,
      vodAssetId: vod.id,
      metadata: body.metadata ?? (vod.title ? { title: vod.title } : {}),
      segmentDuration: settings.segmentDuration,
      userNumberBits: settings.userNumberBits,
      strength: settings.strength,
    });
    const jobId = await ctx.jobs.send(prepareJob, { tenantId, assetId: id }, { tx });
    await tx.update(watermarkingAssets).set({ jobId }).where(eq(watermarkingAssets.id, id));
    await recordEvent(tx, tenantId, 'watermarking.asset.created', { id, vodAssetId: vod.id });
  });
  return { id };
}

export async function findPreparedAsset(db: Queryable, tenantId: string, id: string): Promise<PreparedAssetRow | undefined> {
  if (!isUuid(id)) return undefined;
  const [row] = await db
    .select()
    .from(watermarkingAssets)
    .where(and(eq(watermarkingAssets.tenantId, tenantId), eq(watermarkingAssets.id, id)));
  return row;
}

export function presentAsset(a: PreparedAssetRow) {
  return {
    id: a.id,
    createDate: a.createDate,
    metadata: a.metadata,
    vodAssetId: a.vodAssetId,
    channelId: a.channelId,
    status: a.status,
    progress: a.progress,
    errorMessage: a.errorMessage,
    width: a.width,
    height: a.height,
    segmentDuration: a.segmentDuration,
    segmentCount: a.segmentDurations.length,
    userNumberBits: a.userNumberBits,
    lastModificationDate: a.lastModificationDate,
  };
}

export async function getPreparedAsset(db: Queryable, tenantId: string, id: string) {
  const row = await findPreparedAsset(db, tenantId, id);
  if (!row) throw assetNotFound(id);
  return presentAsset(row);
}

const SORTS = {
  CreateDate: watermarkingAssets.createDate,
  LastModificationDate: watermarkingAssets.lastModificationDate,
  Id: watermarkingAssets.id,
  'Metadata.Title': sql`${watermarkingAssets.metadata}->>'title'`,
  Status: watermarkingAssets.status,
};

export async function listPreparedAssets(db: Queryable, tenantId: string, q: ListQuery) {
  const where = and(
    eq(watermarkingAssets.tenantId, tenantId),
    dateRange(watermarkingAssets.createDate, q.createDateStart, q.createDateEnd),
    textSearch(q.query, sql`${watermarkingAssets.metadata}::text`),
  );
  const { limit, offset } = pageWindow(q);
  const [rows, [{ total }]] = await Promise.all([
    db
      .select()
      .from(watermarkingAssets)
      .where(where)
      .orderBy(...orderBy(q, SORTS, 'CreateDate', watermarkingAssets.id))
      .limit(limit)
      .offset(offset),
    db.select({ total: count() }).from(watermarkingAssets).where(where),
  ]);
  return envelope(rows.map(presentAsset), total, q as PageRequest);
}
