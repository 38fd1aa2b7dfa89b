import type { Playable } from '../../platform/playables.ts';
import { presentSettings, tenantState } from './settings.ts';
import type { SettingStates, streamingAssets } from './tables.ts';

export type DetailsRow = typeof streamingAssets.$inferSelect;

const byStart = <T extends { startSecond: number }>(a: T, b: T) => a.startSecond - b.startSecond;

/**
 * A streaming asset (AssetResult, spec part 1): the base fields as the owning module has them, with what the
 * streaming module adds (title and metadata over the module's, description, tags, images, chapters, settings).
 */
export function presentStreamingAsset(
  p: Playable,
  d: DetailsRow | undefined,
  defaults: SettingStates,
  extraImages: Record<string, { Id: string | null; Name: string | null; Url: string }> = {},
) {
  const states = d?.settings ?? {};
  const lastModificationDate = d && d.lastModificationDate > p.lastModificationDate ? d.lastModificationDate : p.lastModificationDate;
  return {
    id: p.id,
    status: p.status,
    metadata: { ...p.metadata, ...(d?.metadata ?? {}) },
    outputs: p.outputs,
    createDate: p.createDate,
    lastModificationDate,
    durationMilliseconds: p.durationMilliseconds,
    source: p.source,
    type: p.type,
    channelId: p.channelId,
    start: p.start,
    end: p.end,
    isDrm: p.isDrm,
    preset: p.preset,
    tokenRequiredPolicy: { asset: states.tokenRequired ?? null, tenant: tenantState(defaults, 'tokenRequired') },
    title: d?.title ?? p.title,
    description: d?.description ?? null,
    tags: d?.tags ?? [],
    images: { ...(d?.images ?? {}), ...extraImages },
    chapters: [...(d?.chapters ?? [])].sort(byStart),
    settings: presentSettings(states, defaults),
  };
}

export type StreamingAsset = ReturnType<typeof presentStreamingAsset>;
