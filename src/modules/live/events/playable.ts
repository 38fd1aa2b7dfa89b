import { and, eq, getTableColumns, inArray, type SQL } from 'drizzle-orm';
import type { PlatformContext } from '../../../context.ts';
import type { Playable, PlayableFilter, PlayableKind } from '../../../platform/playables.ts';
import { datesWhere } from '../../../platform/playables.ts';
import { isUuid } from '../../../platform/ids.ts';
import { eventFrameSource } from '../frames.ts';
import { catchupEndpoints } from './present.ts';
import { statusNow } from './status.ts';
import { liveEvents, type EventRow, type EventStatus } from './tables.ts';

const ID = /^[a-zA-Z0-9_-]{1,128}$/;
const withStatus = { ...getTableColumns(liveEvents), status: statusNow };
type Row = EventRow & { status: EventStatus };

/** An event plays as its catch-up: start-over while it is Live, the whole event once it is Finished. */
async function toPlayable(ctx: PlatformContext, e: Row): Promise<Playable> {
  return {
    id: e.id,
    type: 'LiveEvent',
    source: 'Live',
    status: e.status,
    title: e.title,
    metadata: e.metadata,
    attributes: e.attributes,
    createDate: e.createDate,
    lastModificationDate: e.lastModificationDate,
    durationMilliseconds: e.end.getTime() - e.start.getTime(),
    channelId: e.channelId,
    start: e.start,
    end: e.end,
    isDrm: false,
    preset: null,
    outputs: [{ id: 'catchup', status: e.status, preset: null, expirationDate: null, endpoints: await catchupEndpoints(ctx, e) }],
  };
}

function where(tenantId: string, f: PlayableFilter): SQL | undefined {
  const t = liveEvents;
  return and(
    eq(t.tenantId, tenantId),
    f.ids
      ? inArray(
          t.id,
          f.ids.filter((id) => ID.test(id)),
        )
      : undefined,
    f.channelIds ? inArray(t.channelId, f.channelIds.filter(isUuid)) : undefined,
    f.statuses ? inArray(statusNow, f.statuses) : undefined,
    ...datesWhere(f, t.createDate, t.lastModificationDate),
  );
}

/** Live events in the streaming catalogue (`type` LiveEvent; the duration is the scheduled one). */
export const eventPlayables: PlayableKind = {
  type: 'LiveEvent',
  source: 'Live',
  async list(ctx, tenantId, filter) {
    if ((filter.ids && !filter.ids.some((id) => ID.test(id))) || (filter.channelIds && !filter.channelIds.some(isUuid))) return [];
    const rows = await ctx.db.select(withStatus).from(liveEvents).where(where(tenantId, filter));
    return Promise.all(rows.map((r) => toPlayable(ctx, r)));
  },
  async get(ctx, tenantId, id) {
    if (!ID.test(id)) return undefined;
    const [row] = await ctx.db
      .select(withStatus)
      .from(liveEvents)
      .where(and(eq(liveEvents.tenantId, tenantId), eq(liveEvents.id, id)));
    return row ? toPlayable(ctx, row) : undefined;
  },
  /** Its catch-up: frames of what the channel played from `start`, taken again while it runs. */
  async frameSource(ctx, tenantId, id) {
    if (!ID.test(id)) return undefined;
    const [row] = await ctx.db
      .select(withStatus)
      .from(liveEvents)
      .where(and(eq(liveEvents.tenantId, tenantId), eq(liveEvents.id, id)));
    return row && eventFrameSource(ctx, row);
  },
};
