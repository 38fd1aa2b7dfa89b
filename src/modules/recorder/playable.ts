import { and, eq, gte, inArray, lte, type SQL } from 'drizzle-orm';
import type { PlatformContext } from '../../context.ts';
import { isUuid } from '../../platform/ids.ts';
import type { Playable, PlayableFilter, PlayableKind, PlayableOutput } from '../../platform/playables.ts';
import { datesWhere } from '../../platform/playables.ts';
import { channelsWithDash } from '../live/index.ts';
import { recordingFrameSource } from './frames.ts';
import { catchupPlayable, copyEndpoints } from './present.ts';
import { recorderOutputs, recorderRecordings, type OutputRow, type RecordingRow } from './tables.ts';

/**
 * A recording's playable outputs: its catch-up copy and its archive while they play (ids `catchup` and `archive`),
 * then its transcoded outputs.
 */
function outputsOf(ctx: PlatformContext, r: RecordingRow, outputs: OutputRow[], dash: boolean): PlayableOutput[] {
  const copies: PlayableOutput[] = [];
  if (catchupPlayable(r)) {
    copies.push({
      id: 'catchup',
      status: r.status,
      preset: null,
      expirationDate: r.catchupExpirationTime,
      endpoints: copyEndpoints(ctx.config, r, 'media', dash),
    });
  }
  if (r.archive.status === 'Available') {
    copies.push({
      id: 'archive',
      status: 'Available',
      preset: null,
      expirationDate: r.archive.expirationDate ? new Date(r.archive.expirationDate) : null,
      endpoints: copyEndpoints(ctx.config, r, 'archive', dash),
    });
  }
  const transcoded = [...outputs]
    .sort((x, y) => +x.createDate - +y.createDate)
    .map((o) => ({ id: o.id, status: o.status, preset: o.preset, expirationDate: o.expirationDate, endpoints: o.endpoints }));
  return [...copies, ...transcoded];
}

function toPlayable(ctx: PlatformContext, r: RecordingRow, outputs: OutputRow[], dash: boolean): Playable {
  return {
    id: r.id,
    type: 'Recording',
    source: 'Recorder',
    status: r.status,
    title: r.title,
    metadata: r.metadata,
    attributes: r.attributes,
    createDate: r.createDate,
    lastModificationDate: r.lastModificationDate,
    durationMilliseconds: r.durationMilliseconds,
    channelId: r.channelId,
    start: r.start,
    end: r.end,
    isDrm: r.drm !== null,
    // Its DRM tokens are the channel's: the channel is the content its keys protect.
    ...(r.drm ? { drmContentId: r.channelId } : {}),
    preset: outputs[0]?.preset ?? null,
    outputs: outputsOf(ctx, r, outputs, dash),
  };
}

async function withOutputs(ctx: PlatformContext, tenantId: string, rows: RecordingRow[]): Promise<Playable[]> {
  if (!rows.length) return [];
  const ids = rows.map((r) => r.id);
  const outputs = await ctx.db
    .select()
    .from(recorderOutputs)
    .where(and(eq(recorderOutputs.tenantId, tenantId), inArray(recorderOutputs.recordingId, ids)));
  const dash = await channelsWithDash(
    ctx,
    tenantId,
    rows.map((r) => r.channelId),
  );
  return rows.map((r) =>
    toPlayable(
      ctx,
      r,
      outputs.filter((o) => o.recordingId === r.id),
      dash.has(r.channelId),
    ),
  );
}

function where(tenantId: string, f: PlayableFilter): SQL | undefined {
  const t = recorderRecordings;
  return and(
    eq(t.tenantId, tenantId),
    f.ids ? inArray(t.id, f.ids.filter(isUuid)) : undefined,
    f.channelIds ? inArray(t.channelId, f.channelIds.filter(isUuid)) : undefined,
    f.statuses ? inArray(t.status, f.statuses as RecordingRow['status'][]) : undefined,
    f.durationFrom !== undefined ? gte(t.durationMilliseconds, f.durationFrom) : undefined,
    f.durationTo !== undefined ? lte(t.durationMilliseconds, f.durationTo) : undefined,
    ...datesWhere(f, t.createDate, t.lastModificationDate),
  );
}

/** Recordings in the streaming catalogue (`type` Recording, `source` Recorder). */
export const recordingPlayables: PlayableKind = {
  type: 'Recording',
  source: 'Recorder',
  async list(ctx, tenantId, filter) {
    if ((filter.ids && !filter.ids.some(isUuid)) || (filter.channelIds && !filter.channelIds.some(isUuid))) return [];
    return withOutputs(ctx, tenantId, await ctx.db.select().from(recorderRecordings).where(where(tenantId, filter)));
  },
  async get(ctx, tenantId, id) {
    if (!isUuid(id)) return undefined;
    const rows = await ctx.db
      .select()
      .from(recorderRecordings)
      .where(and(eq(recorderRecordings.tenantId, tenantId), eq(recorderRecordings.id, id.toLowerCase())));
    return (await withOutputs(ctx, tenantId, rows))[0];
  },
  frameSource: recordingFrameSource,
};
