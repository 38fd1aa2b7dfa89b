import { and, count, eq, gte, inArray, lte, sql } from 'drizzle-orm';
import type { PlatformContext } from '../../../context.ts';
import type { Queryable } from '../../../db/client.ts';
import * as lease from '../../../db/lease.ts';
import { ApiError, fieldPath, notFound, validationError, type FieldError } from '../../../platform/errors.ts';
import { arrayParam, dateRange, hasAllAttributes, hasAllTags, oneOf, textSearch } from '../../../platform/filters.ts';
import { isUuid, newId } from '../../../platform/ids.ts';
import { multiDelete } from '../../../platform/multiDelete.ts';
import { envelope, orderBy, pageWindow, type PageRequest } from '../../../platform/paging.ts';
import { recordEvent } from '../../../platform/events.ts';
import { DRM_KEY_MODES } from '../../drm/index.ts';
import { presetById, type Preset } from '../../transcoder/index.ts';
import { captionModel, installedCaptionModels } from '../../../media/live/index.ts';
import { packagingOf } from '../../../media/packaging.ts';
import { overlayProblems } from '../../../media/overlays.ts';
import { assetPrefix, assetWorkPrefix, outputPrefix, outputWorkPrefix } from '../storageKeys.ts';
import { captionsJob } from './captions.ts';
import { enqueueTranscode, QUEUED } from './jobs.ts';
import { presentAsset, presentSummary } from './present.ts';
import { linkAssetToFiles, loadSourceFiles, mediaSource, unlinkAssetFromFiles } from './sourceFiles.ts';
import { selectTracks } from './tracks.ts';
import { vodAssets, vodOutputs, type OverlayRow, type VodSourceRow } from './tables.ts';
import type * as s from './schemas.ts';
import type { Static } from 'typebox';
import { deleteFilesLater, deleteFilesNow, keepFiles } from '../../../platform/storageDeletions.ts';
import { CATALOGUE_FIELDS, given } from '../../../platform/patch.ts';

type CreateBody = Static<typeof s.VodAssetCreate>;
type ListQuery = Static<typeof s.VodAssetListQuery>;
type PatchBody = Static<typeof s.VodAssetPatch>;
type OutputBody = Static<typeof s.OutputCreate>;

function requirePreset(id: string, field: string) {
  const preset = presetById(id);
  if (!preset)
    throw new ApiError(400, 'preset_not_found', `Preset "${id}" does not exist; see GET /transcoder/v1/presets`, [{ field, message: 'unknown preset' }]);
  return preset;
}

/** The statuses of assets and outputs (the spec's AssetStatus, as VOD uses it). */
const ASSET_STATUSES = ['Pending', 'Processing', 'Available', 'Error'] as const;

function checkOverlays(overlays: OverlayRow[] | undefined, field: string, preset: { id: string; noTranscoding: boolean }): OverlayRow[] {
  // A preset that copies the streams (remux) draws nothing: overlays on it would be dropped without a word.
  if (overlays?.length && preset.noTranscoding) {
    throw validationError(field, `cannot be burned in by preset "${preset.id}", which does not transcode; choose a preset that does`);
  }
  const problems = overlayProblems(overlays ?? [], field);
  if (problems.length) throw new ApiError(400, 'validation_failed', problems.map((p) => `${p.field}: ${p.message}`).join('; '), problems);
  return overlays ?? [];
}

export async function createAsset(ctx: PlatformContext, tenantId: string, body: CreateBody): Promise<{ id: string }> {
  const preset = requirePreset(body.preset, 'preset');
  const overlays = checkOverlays(body.overlays, 'overlays', preset);
  if (body.drmKeyMode !== undefined && !(DRM_KEY_MODES as readonly string[]).includes(body.drmKeyMode))
    throw validationError('drmKeyMode', 'must be SingleKey (one key for every track) or AudioVideoKeys (one key for the video tracks, another for audio)');
  const fileIds = body.transcodedSources.map((src) => src.fileId);
  const files = await loadSourceFiles(ctx.db, tenantId, fileIds);
  for (const [i, src] of body.transcodedSources.entries()) {
    const file = files.get(src.fileId);
    if (!file) throw notFound('file_not_found', 'File', src.fileId);
    if (file.status !== 'Completed') throw new ApiError(409, 'file_not_completed', `File ${src.fileId} is ${file.status}; complete its upload first`);
    // A source that is not media is refused now, not accepted and failed later by its transcode.
    files.set(src.fileId, await mediaSource(ctx, tenantId, file, `transcodedSources[${i}].fileId`));
  }
  const sources: VodSourceRow[] = body.transcodedSources.map((src, i) => {
    const file = files.get(src.fileId)!;
    return {
      fileId: src.fileId,
      transcodingTracks: selectTracks(file, src.transcodingTracks ?? [], `transcodedSources[${i}].transcodingTracks`),
      fileTypesFlag: src.fileTypesFlag ?? file.fileTypes ?? undefined,
    };
  });
  const captionLanguage = checkCaptioning(ctx, body.aiCaptioningLanguageCode, preset, sources[0]!);
  const main = files.get(fileIds[0])!;
  // The preset decides which sources it accepts; an asset asked for anyway is recorded as failed, with the reason.
  const refused = !preset.allowedExtensionsFile.includes(main.extension)
    ? `Preset "${preset.id}" does not accept ${main.extension || 'extension-less'} files; it accepts ${preset.allowedExtensionsFile.join(' ')}`
    : undefined;

  return ctx.db.transaction(async (tx) => {
    const id = newId();
    await tx.insert(vodAssets).values({
      id,
      tenantId,
      title: body.title ?? null,
      preset: preset.id,
      metadata: body.metadata ?? {},
      tags: body.tags ?? [],
      attributes: body.attributes ?? [],
      status: refused ? 'Error' : 'Pending',
      errorMessage: refused ?? null,
      durationMilliseconds: main.durationMs,
      sources,
      fileIds: Object.fromEntries(sources.map((src) => [src.fileId, src.fileTypesFlag ?? 'Video'])),
      overlays,
      accessPolicyId: body.distributionInfo?.accessPolicyId ?? null,
      drmKeyMode: body.drmKeyMode ?? null,
      sourceFileExtension: main.extension || null,
      aiCaptioningLanguageCode: captionLanguage ?? null,
      aiCaptioningStatus: captionLanguage && !refused ? 'Pending' : null,
    });
    await linkAssetToFiles(tx, tenantId, id, fileIds);
    await recordEvent(tx, tenantId, 'vod.asset.created', { id, preset: preset.id, status: refused ? 'Error' : 'Pending' });
    if (refused) {
      await recordEvent(tx, tenantId, 'vod.asset.failed', { id, errorMessage: refused });
      return { id };
    }
    await addOutputRow(ctx, tx, tenantId, id, { id: newId(), preset: preset.id, overlays, expirationDate: null });
    if (captionLanguage) await ctx.jobs.send(captionsJob, { tenantId, assetId: id }, { tx });
    return { id };
  });
}

/**
 * Captions from speech are asked for in a language whose speech model is installed, of an asset with an audio track
 * to hear and an HLS or DASH output to carry them: anything else is refused now rather than never captioned. Answers
 * the code as the model spells it (`en-US`).
 */
function checkCaptioning(ctx: PlatformContext, code: string | undefined, preset: Preset, source: VodSourceRow): string | undefined {
  if (code === undefined) return undefined;
  const field = 'aiCaptioningLanguageCode';
  const model = captionModel(ctx.config.live.captionModelsDir, code);
  if (!model) {
    const installed = installedCaptionModels(ctx.config.live.captionModelsDir).map((m) => m.code);
    throw validationError(field, `no speech model for ${code} is installed; ${installed.length ? `installed: ${installed.join(', ')}` : 'none is installed'}`);
  }
  if (!source.transcodingTracks.some((t) => t.type === 'Audio'))
    throw validationError(field, 'captions are made from the speech of an audio track: list one in transcodedSources[0].transcodingTracks');
  if (!packagingOf(preset).streaming) throw validationError(field, `preset ${preset.id} makes no HLS or DASH output to add captions to`);
  return model.code;
}

async function addOutputRow(
  ctx: PlatformContext,
  tx: Queryable,
  tenantId: string,
  assetId: string,
  o: { id: string; preset: string; overlays: OverlayRow[]; expirationDate: Date | null },
) {
  await tx
    .insert(vodOutputs)
    .values({ assetId, tenantId, id: o.id, preset: o.preset, overlays: o.overlays, expirationDate: o.expirationDate, ...lease.take(QUEUED, 6 * 3600_000) });
  const jobId = await enqueueTranscode(ctx, tx, { tenantId, assetId, outputId: o.id });
  await tx
    .update(vodOutputs)
    .set({ jobId })
    .where(and(eq(vodOutputs.assetId, assetId), eq(vodOutputs.id, o.id)));
  await recordEvent(tx, tenantId, 'vod.output.created', { id: o.id, assetId, preset: o.preset });
}

async function assetRow(db: Queryable, tenantId: string, id: string) {
  if (!isUuid(id)) throw notFound('asset_not_found', 'VOD asset', id);
  const [row] = await db
    .select()
    .from(vodAssets)
    .where(and(eq(vodAssets.tenantId, tenantId), eq(vodAssets.id, id)));
  if (!row) throw notFound('asset_not_found', 'VOD asset', id);
  return row;
}

export async function getAsset(db: Queryable, tenantId: string, id: string) {
  const asset = await assetRow(db, tenantId, id);
  const outputs = await db.select().from(vodOutputs).where(eq(vodOutputs.assetId, id));
  const primary = outputs.find((o) => o.preset === asset.preset);
  return presentAsset(asset, outputs, primary?.jobId ?? null);
}

const SORTS = {
  CreateDate: vodAssets.createDate,
  LastModificationDate: vodAssets.lastModificationDate,
  Id: vodAssets.id,
  Title: vodAssets.title,
  'Metadata.Title': sql`coalesce(${vodAssets.metadata}->>'title', ${vodAssets.title})`,
  Status: vodAssets.status,
  Preset: vodAssets.preset,
  Duration: vodAssets.durationMilliseconds,
  DurationMilliseconds: vodAssets.durationMilliseconds,
};

export async function listAssets(db: Queryable, tenantId: string, q: ListQuery) {
  const ids = arrayParam(q.ids);
  if (ids.some((id) => !isUuid(id))) throw validationError('ids', 'every id must be a uuid');
  const statuses = arrayParam(q.statuses).map((status) => oneOf('statuses', status, ASSET_STATUSES));
  const presets = arrayParam(q.presets);
  const where = and(
    eq(vodAssets.tenantId, tenantId),
    ids.length ? inArray(vodAssets.id, ids) : undefined,
    statuses.length ? inArray(vodAssets.status, statuses) : undefined,
    presets.length ? inArray(vodAssets.preset, presets) : undefined,
    q.fileId ? sql`${vodAssets.fileIds} ? ${q.fileId}` : undefined,
    q.durationFrom !== undefined ? gte(vodAssets.durationMilliseconds, q.durationFrom) : undefined,
    q.durationTo !== undefined ? lte(vodAssets.durationMilliseconds, q.durationTo) : undefined,
    dateRange(vodAssets.createDate, q.createDateStart, q.createDateEnd),
    dateRange(vodAssets.lastModificationDate, q.lastModificationDateStart, q.lastModificationDateEnd),
    hasAllTags(vodAssets.tags, q.tags),
    hasAllAttributes(vodAssets.attributes, q.attributes),
    textSearch(q.query, vodAssets.title, sql`${vodAssets.metadata}::text`),
  );
  const { limit, offset } = pageWindow(q);
  const [rows, [{ total }]] = await Promise.all([
    db
      .select()
      .from(vodAssets)
      .where(where)
      .orderBy(...orderBy(q, SORTS, 'CreateDate', vodAssets.id))
      .limit(limit)
      .offset(offset),
    db.select({ total: count() }).from(vodAssets).where(where),
  ]);
  return envelope(rows.map(presentSummary), total, q as PageRequest);
}

export async function updateAsset(db: Queryable, tenantId: string, id: string, patch: PatchBody) {
  await db.transaction(async (tx) => {
    await assetRow(tx, tenantId, id);
    await tx
      .update(vodAssets)
      .set({
        ...given(patch, CATALOGUE_FIELDS),
        lastModificationDate: new Date(),
      })
      .where(eq(vodAssets.id, id));
    await recordEvent(tx, tenantId, 'vod.asset.updated', { id });
  });
  return getAsset(db, tenantId, id);
}

export async function deleteAsset(ctx: PlatformContext, tenantId: string, id: string): Promise<void> {
  const files = [assetPrefix(tenantId, id), assetWorkPrefix(tenantId, id)];
  await ctx.db.transaction(async (tx) => {
    await assetRow(tx, tenantId, id);
    await tx.delete(vodAssets).where(eq(vodAssets.id, id));
    await unlinkAssetFromFiles(tx, tenantId, id);
    await recordEvent(tx, tenantId, 'vod.asset.deleted', { id });
    await deleteFilesLater(tx, files);
  });
  // After commit: a running transcode sees its rows gone and stops; files of every output are freed.
  await deleteFilesNow(ctx, files);
}

export const deleteAssets = (ctx: PlatformContext, tenantId: string, ids: string[]) => multiDelete(ids, (id) => deleteAsset(ctx, tenantId, id));

export async function addOutput(ctx: PlatformContext, tenantId: string, assetId: string, body: OutputBody): Promise<{ outputId: string }> {
  if (body.assetId !== undefined && body.assetId.toLowerCase() !== assetId.toLowerCase()) {
    throw validationError('assetId', `must be the asset of the path (${assetId}), or left out`);
  }
  const preset = requirePreset(body.preset, 'preset');
  const overlays = checkOverlays(body.overlays, 'overlays', preset);
  if (body.expirationDate && new Date(body.expirationDate) <= new Date()) throw validationError('expirationDate', 'must be in the future');
  const outputId = body.id ?? newId();
  await ctx.db.transaction(async (tx) => {
    const asset = await assetRow(tx, tenantId, assetId);
    const [existing] = await tx
      .select({ id: vodOutputs.id })
      .from(vodOutputs)
      .where(and(eq(vodOutputs.assetId, assetId), eq(vodOutputs.id, outputId)));
    if (existing) throw new ApiError(409, 'output_exists', `Asset ${assetId} already has an output ${outputId}`);
    if (asset.sourceFileExtension && !preset.allowedExtensionsFile.includes(asset.sourceFileExtension)) {
      throw new ApiError(400, 'preset_not_allowed', `Preset "${preset.id}" does not accept ${asset.sourceFileExtension} files`, [
        { field: 'preset', message: 'does not accept the source file' },
      ]);
    }
    await keepFiles(tx, [outputPrefix(tenantId, assetId, outputId), outputWorkPrefix(tenantId, assetId, outputId)]);
    await addOutputRow(ctx, tx, tenantId, assetId, {
      id: outputId,
      preset: preset.id,
      overlays,
      expirationDate: body.expirationDate ? new Date(body.expirationDate) : null,
    });
    await tx.update(vodAssets).set({ lastModificationDate: new Date() }).where(eq(vodAssets.id, assetId));
  });
  return { outputId };
}

export async function removeOutput(ctx: PlatformContext, tenantId: string, assetId: string, outputId: string): Promise<void> {
  const files = [outputPrefix(tenantId, assetId, outputId), outputWorkPrefix(tenantId, assetId, outputId)];
  await ctx.db.transaction(async (tx) => {
    await assetRow(tx, tenantId, assetId);
    const rows = await tx
      .delete(vodOutputs)
      .where(and(eq(vodOutputs.assetId, assetId), eq(vodOutputs.id, outputId)))
      .returning({ id: vodOutputs.id });
    if (!rows.length) throw notFound('output_not_found', 'Output', outputId);
    await tx.update(vodAssets).set({ lastModificationDate: new Date() }).where(eq(vodAssets.id, assetId));
    await recordEvent(tx, tenantId, 'vod.output.deleted', { id: outputId, assetId });
    await deleteFilesLater(tx, files);
  });
  await deleteFilesNow(ctx, files);
}

export async function outputProgress(db: Queryable, tenantId: string, assetId: string, outputId: string) {
  if (!isUuid(assetId)) throw notFound('asset_not_found', 'VOD asset', assetId);
  const [row] = await db
    .select({ progressPercent: vodOutputs.progressPercent })
    .from(vodOutputs)
    .where(and(eq(vodOutputs.tenantId, tenantId), eq(vodOutputs.assetId, assetId), eq(vodOutputs.id, outputId)));
  if (!row) throw notFound('output_not_found', 'Output', outputId);
  return row;
}

/**
 * Every asset and output asked for is answered, in the order asked; an id the tenant does not have makes the whole
 * request a 404 that names each such id (docs/decisions/vod-assets.md), as the single-output operation does.
 */
export async function outputsProgress(db: Queryable, tenantId: string, wanted: { id: string; outputs: { id: string }[] }[]) {
  const assetIds = wanted.map((w) => w.id).filter(isUuid);
  const rows = assetIds.length
    ? await db
        .select({ assetId: vodOutputs.assetId, id: vodOutputs.id, progressPercent: vodOutputs.progressPercent })
        .from(vodOutputs)
        .where(and(eq(vodOutputs.tenantId, tenantId), inArray(vodOutputs.assetId, assetIds)))
    : [];
  const assets = assetIds.length
    ? new Set(
        (
          await db
            .select({ id: vodAssets.id })
            .from(vodAssets)
            .where(and(eq(vodAssets.tenantId, tenantId), inArray(vodAssets.id, assetIds)))
        ).map((a) => a.id),
      )
    : new Set<string>();
  // Ids are compared here, not by PostgreSQL: in the stored lowercase spelling, whatever the caller's.
  const same = (id: string, given: string) => id === given.toLowerCase();
  const missing: FieldError[] = [];
  const answer = wanted.map((w, i) => {
    if (![...assets].some((a) => same(a, w.id))) {
      missing.push({ field: fieldPath([i, 'id']), message: `VOD asset ${w.id} was not found` });
      return { id: w.id, outputs: [] };
    }
    const outputs = w.outputs.map((o, j) => {
      const row = rows.find((r) => same(r.assetId, w.id) && same(r.id, o.id));
      if (!row) missing.push({ field: fieldPath([i, 'outputs', j, 'id']), message: `VOD asset ${w.id} has no output ${o.id}` });
      return { id: row?.id ?? o.id, progressPercent: row?.progressPercent ?? 0 };
    });
    return { id: w.id, outputs };
  });
  if (missing.length) {
    const code = missing.some((m) => !m.field.includes('outputs')) ? 'asset_not_found' : 'output_not_found';
    throw new ApiError(404, code, missing.map((m) => m.message).join('; '), missing);
  }
  return answer;
}
