import { and, eq, inArray, type SQL } from 'drizzle-orm';
import type { PlatformContext } from '../../context.ts';
import type { Playable, PlayableFilter, PlayableKind } from '../../platform/playables.ts';
import { datesWhere } from '../../platform/playables.ts';
import { isUuid } from '../../platform/ids.ts';
import { channelFrameSource } from './frames.ts';
import { endpointsOf, type ChannelRow } from './present.ts';
import { liveChannels } from './tables.ts';

/** A channel's status as a streaming asset's (AssetStatus): `On` plays, so it is `Live`; the others keep their names. */
const assetStatus = (status: string): string => (status === 'On' ? 'Live' : status);

function toPlayable(ctx: PlatformContext, row: ChannelRow): Playable {
  return {
    id: row.id,
    type: 'LiveChannel',
    source: 'Live',
    status: assetStatus(row.status),
    title: row.name,
    metadata: row.metadata,
    attributes: [],
    createDate: row.createDate,
    lastModificationDate: row.lastModificationDate,
    durationMilliseconds: null,
    channelId: row.id,
    start: null,
    end: null,
    isDrm: row.endpoints.some((e) => e.isDrmProtected),
    preset: null,
    outputs: [{ id: 'live', status: assetStatus(row.status), preset: null, expirationDate: null, endpoints: endpointsOf(ctx.config, row) }],
  };
}

function where(tenantId: string, f: PlayableFilter): SQL | undefined {
  return and(
    eq(liveChannels.tenantId, tenantId),
    f.ids ? inArray(liveChannels.id, f.ids.filter(isUuid)) : undefined,
    f.channelIds ? inArray(liveChannels.id, f.channelIds.filter(isUuid)) : undefined,
    ...datesWhere(f, liveChannels.createDate, liveChannels.lastModificationDate),
  );
}

/** Live channels in the streaming catalogue (`type` LiveChannel; `channelId` is the channel's own id). */
export const livePlayables: PlayableKind = {
  type: 'LiveChannel',
  source: 'Live',
  async list(ctx, tenantId, filter) {
    // A channel has no duration: a duration filter leaves none.
    if (filter.durationFrom !== undefined || filter.durationTo !== undefined) return [];
    if (filter.attributes?.length) return [];
    if ((filter.ids && !filter.ids.some(isUuid)) || (filter.channelIds && !filter.channelIds.some(isUuid))) return [];
    const rows = await ctx.db.select().from(liveChannels).where(where(tenantId, filter));
    return rows.map((r) => toPlayable(ctx, r));
  },
  async get(ctx, tenantId, id) {
    if (!isUuid(id)) return undefined;
    const [row] = await ctx.db
      .select()
      .from(liveChannels)
      .where(and(eq(liveChannels.tenantId, tenantId), eq(liveChannels.id, id.toLowerCase())));
    return row ? toPlayable(ctx, row) : undefined;
  },
  frameSource: channelFrameSource,
};
