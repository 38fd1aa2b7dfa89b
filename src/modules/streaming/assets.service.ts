import type { Static } from 'typebox';
import { and, eq } from 'drizzle-orm';
import type { PlatformContext } from '../../context.ts';
import type { Queryable } from '../../db/client.ts';
import { ApiError, validationError } from '../../platform/errors.ts';
import { recordEvent } from '../../platform/events.ts';
import { newId } from '../../platform/ids.ts';
import type { Playable } from '../../platform/playables.ts';
import { getStreamingAsset, requirePlayable } from './catalogue.ts';
import type { DetailsRow } from './present.ts';
import { forgetPolicies } from './settings.ts';
import { streamingAssets, type ChapterRow, type SettingName, type SettingState, type SettingStates } from './tables.ts';
import type * as s from './schemas.ts';

const MAX_IMAGES = 100;
const MAX_TAGS = 100;
const MAX_CHAPTERS = 500;

/**
 * Changes what the streaming module keeps for an asset, in one transaction with its event: reads the row (or an empty
 * one), applies `change`, writes it back. The asset must exist in its own module (404 otherwise, another tenant's too).
 */
async function changeDetails(
  ctx: PlatformContext,
  tenantId: string,
  assetId: string,
  change: (row: DetailsRow, playable: Playable) => Partial<DetailsRow>,
): Promise<string> {
  const playable = await requirePlayable(ctx, tenantId, assetId);
  await ctx.db.transaction(async (tx) => {
    await tx.insert(streamingAssets).values({ tenantId, assetId: playable.id }).onConflictDoNothing();
    const row = await lockedRow(tx, tenantId, playable.id);
    const set = change(row, playable);
    await tx
      .update(streamingAssets)
      .set({ ...set, lastModificationDate: new Date() })
      .where(and(eq(streamingAssets.tenantId, tenantId), eq(streamingAssets.assetId, playable.id)));
    await recordEvent(tx, tenantId, 'streaming.asset.updated', { id: playable.id, type: playable.type });
  });
  return playable.id;
}

async function lockedRow(tx: Queryable, tenantId: string, assetId: string): Promise<DetailsRow> {
  const [row] = await tx
    .select()
    .from(streamingAssets)
    .where(and(eq(streamingAssets.tenantId, tenantId), eq(streamingAssets.assetId, assetId)))
    .for('update');
  return row;
}

/** `update_asset` (design: docs/decisions/streaming.md): `PATCH /streaming/v1/assets/{assetId}`. */
export async function updateStreamingAsset(ctx: PlatformContext, tenantId: string, assetId: string, patch: Static<typeof s.StreamingAssetPatch>) {
  await changeDetails(ctx, tenantId, assetId, (row) => ({
    ...(patch.title !== undefined ? { title: patch.title } : {}),
    ...(patch.description !== undefined ? { description: patch.description } : {}),
    ...(patch.metadata !== undefined ? { metadata: patch.metadata } : {}),
    ...(patch.tags !== undefined
      ? {
          tags: mergeTags(
            row.tags.filter((t) => patch.tags!.some((n) => n.name.trim().toLowerCase() === t.name.toLowerCase())),
            patch.tags,
          ),
        }
      : {}),
  }));
  return getStreamingAsset(ctx, tenantId, assetId);
}

export async function updateAssetSettings(ctx: PlatformContext, tenantId: string, assetId: string, patch: Static<typeof s.SettingsPatch>) {
  const id = await changeDetails(ctx, tenantId, assetId, (row) => {
    const settings: SettingStates = { ...row.settings };
    for (const [name, state] of Object.entries(patch) as [SettingName, SettingState | null | undefined][]) {
      if (state === null) delete settings[name];
      else if (state !== undefined) settings[name] = state;
    }
    return { settings };
  });
  forgetPolicies(tenantId, id);
  return getStreamingAsset(ctx, tenantId, assetId);
}

function mergeTags(current: { id: string; name: string }[], added: { name: string }[]) {
  const tags = [...current];
  for (const { name } of added) {
    const clean = name.trim();
    if (!clean) throw validationError('tags', 'a tag name may not be blank');
    if (!tags.some((t) => t.name.toLowerCase() === clean.toLowerCase())) tags.push({ id: newId(), name: clean });
  }
  if (tags.length > MAX_TAGS) throw validationError('tags', `an asset has at most ${MAX_TAGS} tags`);
  return tags;
}

export const addTags = (ctx: PlatformContext, tenantId: string, assetId: string, body: Static<typeof s.TagsBody>) =>
  changeDetails(ctx, tenantId, assetId, (row) => ({ tags: mergeTags(row.tags, body.tags) }));

/** By the tag's id or its name (case-insensitive). */
export const deleteTag = (ctx: PlatformContext, tenantId: string, assetId: string, tag: string) =>
  changeDetails(ctx, tenantId, assetId, (row) => {
    const kept = row.tags.filter((t) => t.id !== tag && t.name.toLowerCase() !== tag.toLowerCase());
    if (kept.length === row.tags.length) throw new ApiError(404, 'tag_not_found', `Asset ${assetId} has no tag ${tag}`);
    return { tags: kept };
  });

function checkImageUrl(url: string, field: string): void {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw validationError(field, 'must be an absolute http or https URL');
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw validationError(field, 'must be an absolute http or https URL');
}

export const addImages = (ctx: PlatformContext, tenantId: string, assetId: string, body: Static<typeof s.ImagesBody>) =>
  changeDetails(ctx, tenantId, assetId, (row) => {
    const images = { ...row.images };
    for (const [key, image] of Object.entries(body.images)) {
      checkImageUrl(image.Url, `images.${key}.Url`);
      images[key] = { Id: image.Id ?? null, Name: image.Name ?? null, Url: image.Url };
    }
    if (Object.keys(images).length > MAX_IMAGES) throw validationError('images', `an asset has at most ${MAX_IMAGES} images`);
    return { images };
  });

export const deleteImage = (ctx: PlatformContext, tenantId: string, assetId: string, key: string) =>
  changeDetails(ctx, tenantId, assetId, (row) => {
    if (!(key in row.images)) throw new ApiError(404, 'image_not_found', `Asset ${assetId} has no image ${key}`);
    const images = { ...row.images };
    delete images[key];
    return { images };
  });

const overlaps = (a: { startSecond: number; endSecond: number }, b: { startSecond: number; endSecond: number }) =>
  a.startSecond < b.endSecond && b.startSecond < a.endSecond;

/**
 * Adds chapters: each gets an id; `startSecond` defaults to 0 and `endSecond` to the asset's end; a chapter must end
 * after it starts, not past the asset's duration (when it has one), and overlap no other chapter. Kept in order of
 * `startSecond`.
 */
export const addChapters = (ctx: PlatformContext, tenantId: string, assetId: string, body: Static<typeof s.ChaptersBody>) =>
  changeDetails(ctx, tenantId, assetId, (row, playable) => {
    const durationSeconds = playable.durationMilliseconds !== null ? Math.ceil(playable.durationMilliseconds / 1000) : undefined;
    const chapters: ChapterRow[] = [...row.chapters];
    body.chapters.forEach((c, i) => {
      const field = `chapters[${i}]`;
      const startSecond = c.startSecond ?? 0;
      const endSecond = c.endSecond ?? durationSeconds;
      if (endSecond === undefined) throw validationError(`${field}.endSecond`, 'is required: the asset has no fixed duration');
      if (endSecond <= startSecond) throw validationError(`${field}.endSecond`, `must be after startSecond (${startSecond})`);
      if (durationSeconds !== undefined && endSecond > durationSeconds)
        throw validationError(`${field}.endSecond`, `is past the end of the asset (${durationSeconds} s)`);
      const chapter = { id: newId(), title: c.title ?? null, startSecond, endSecond };
      const clash = chapters.find((other) => overlaps(chapter, other));
      if (clash)
        throw validationError(
          field,
          `${startSecond}-${endSecond} s overlaps chapter ${clash.title ? `"${clash.title}" ` : ''}(${clash.startSecond}-${clash.endSecond} s)`,
        );
      chapters.push(chapter);
    });
    if (chapters.length > MAX_CHAPTERS) throw validationError('chapters', `an asset has at most ${MAX_CHAPTERS} chapters`);
    return { chapters: chapters.sort((a, b) => a.startSecond - b.startSecond) };
  });

export const deleteChapter = (ctx: PlatformContext, tenantId: string, assetId: string, chapterId: string) =>
  changeDetails(ctx, tenantId, assetId, (row) => {
    const kept = row.chapters.filter((c) => c.id !== chapterId.toLowerCase());
    if (kept.length === row.chapters.length) throw new ApiError(404, 'chapter_not_found', `Asset ${assetId} has no chapter ${chapterId}`);
    return { chapters: kept };
  });

/** An uploaded image joins the asset's `images` under its name (replacing an image of that key). */
export const addUploadedImage = (ctx: PlatformContext, tenantId: string, assetId: string, image: { Id: string; Name: string; Url: string }) =>
  changeDetails(ctx, tenantId, assetId, (row) => ({ images: { ...row.images, [image.Name]: image } }));

/** A deleted uploaded image leaves the asset's `images`. */
export const removeUploadedImage = (ctx: PlatformContext, tenantId: string, assetId: string, imageId: string) =>
  changeDetails(ctx, tenantId, assetId, (row) => ({ images: Object.fromEntries(Object.entries(row.images).filter(([, v]) => v.Id !== imageId)) }));
