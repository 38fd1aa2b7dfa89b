import { and, count, eq, getTableColumns, gt, inArray, lt, sql } from 'drizzle-orm';
import type { Static } from 'typebox';
import type { PlatformContext } from '../../../context.ts';
import type { Queryable } from '../../../db/client.ts';
import { ApiError, notFound, validationError } from '../../../platform/errors.ts';
import { arrayParam, dateRange, hasAllAttributes, hasAllTags, oneOf, textSearch } from '../../../platform/filters.ts';
import { isUuid, newId } from '../../../platform/ids.ts';
import { multiDelete } from '../../../platform/multiDelete.ts';
import { envelope, orderBy, pageWindow, type PageRequest } from '../../../platform/paging.ts';
import { channelRow, recordLiveEvent } from '../service.ts';
import { holdWindow, settleChannel } from './holds.ts';
import { presentEvent } from './present.ts';
import type * as s from './schemas.ts';
import { statusNow } from './status.ts';
import { EVENT_STATUSES, liveEvents } from './tables.ts';
import { CATALOGUE_FIELDS, given } from '../../../platform/patch.ts';

type CreateBody = Static<typeof s.EventCreate>;
type PatchBody = Static<typeof s.EventPatch>;
type ListQuery = Static<typeof s.EventListQuery>;

const ID = new RegExp(/^[a-zA-Z0-9_-]{1,128}$/);
const withStatus = { ...getTableColumns(liveEvents), status: statusNow };

function checkRange(start: Date, end: Date, field: 'start' | 'end'): void {
  if (end <= start) throw validationError(field, `end (${end.toISOString()}) must be after start (${start.toISOString()})`);
}

/** `ensureChannel` asks the platform to run the channel: only a channel meant for it (EventBased) can be. */
function checkEnsure(channel: { id: string; activationMode: string }, ensure: boolean | undefined): void {
  if (ensure && channel.activationMode !== 'EventBased') {
    throw new ApiError(
      409,
      'channel_not_event_based',
      `Channel ${channel.id} has activationMode ${channel.activationMode}; ensureChannel needs a channel created with activationMode EventBased`,
      [{ field: 'ensureChannel', message: 'the channel is not EventBased' }],
    );
  }
}

export async function createEvent(ctx: PlatformContext, tenantId: string, body: CreateBody): Promise<{ id: string }> {
  const start = new Date(body.start);
  const end = new Date(body.end);
  checkRange(start, end, 'end');
  return ctx.db.transaction(async (tx) => {
    // The channel row is locked: a concurrent delete of the channel cannot leave the event pointing at nothing.
    const channel = await channelRow(tx, tenantId, body.channelId, true);
    checkEnsure(channel, body.ensureChannel);
    const id = newId();
    await tx.insert(liveEvents).values({
      id,
      tenantId,
      channelId: channel.id,
      title: body.title ?? null,
      start,
      end,
      ensureChannel: body.ensureChannel ?? false,
      metadata: body.metadata ?? {},
      tags: body.tags ?? [],
      attributes: body.attributes ?? [],
      accessPolicyId: body.distributionInfo?.accessPolicyId ?? null,
      // Every event is announced Scheduled at creation; the scheduler announces Live and Finished as the clock gets there.
      announcedStatus: 'Scheduled',
    });
    await recordLiveEvent(tx, tenantId, 'live.event.created', {
      id,
      channelId: channel.id,
      status: 'Scheduled',
      start: start.toISOString(),
      end: end.toISOString(),
      ensureChannel: body.ensureChannel ?? false,
    });
    return { id };
  });
}

async function eventRow(db: Queryable, tenantId: string, id: string, lock = false) {
  if (!ID.test(id)) throw validationError('id', 'must match ^[a-zA-Z0-9_-]{1,128}$');
  const q = db
    .select(withStatus)
    .from(liveEvents)
    .where(and(eq(liveEvents.tenantId, tenantId), eq(liveEvents.id, id)));
  const [row] = lock ? await q.for('update') : await q;
  if (!row) throw notFound('event_not_found', 'Event', id);
  return row;
}

export async function getEvent(ctx: PlatformContext, tenantId: string, id: string) {
  return presentEvent(ctx, await eventRow(ctx.db, tenantId, id));
}

const SORTS = {
  Start: liveEvents.start,
  End: liveEvents.end,
  ChannelId: liveEvents.channelId,
  'Metadata.Title': sql`coalesce(${liveEvents.metadata}->>'title', ${liveEvents.title})`,
  Title: liveEvents.title,
  Status: statusNow,
  CreateDate: liveEvents.createDate,
  LastModificationDate: liveEvents.lastModificationDate,
  Id: liveEvents.id,
};

function uuids(field: string, values: string[]): string[] {
  const bad = values.find((v) => !isUuid(v));
  if (bad !== undefined) throw validationError(field, `"${bad.slice(0, 64)}" is not a channel id (uuid)`);
  return values.map((v) => v.toLowerCase());
}

export async function listEvents(ctx: PlatformContext, tenantId: string, q: ListQuery) {
  const ids = arrayParam(q.ids);
  const badId = ids.find((id) => !ID.test(id));
  if (badId !== undefined) throw validationError('ids', `"${badId.slice(0, 64)}" is not an event id (^[a-zA-Z0-9_-]{1,128}$)`);
  const channels = uuids('channels', arrayParam(q.channels));
  const statuses = arrayParam(q.statuses).map((status) => oneOf('statuses', status, EVENT_STATUSES));
  if (q.searchStart && q.searchEnd && new Date(q.searchEnd) < new Date(q.searchStart)) {
    throw validationError('searchEnd', 'must not be before searchStart');
  }
  const where = and(
    eq(liveEvents.tenantId, tenantId),
    q.channelId ? eq(liveEvents.channelId, q.channelId) : undefined,
    channels.length ? inArray(liveEvents.channelId, channels) : undefined,
    ids.length ? inArray(liveEvents.id, ids) : undefined,
    statuses.length ? inArray(statusNow, statuses) : undefined,
    // An event is found when its time range overlaps [searchStart, searchEnd] (either end may be left open).
    q.searchStart ? gt(liveEvents.end, new Date(q.searchStart)) : undefined,
    q.searchEnd ? lt(liveEvents.start, new Date(q.searchEnd)) : undefined,
    dateRange(liveEvents.createDate, q.createDateStart, q.createDateEnd),
    dateRange(liveEvents.lastModificationDate, q.lastModificationDateStart, q.lastModificationDateEnd),
    hasAllTags(liveEvents.tags, q.tags),
    hasAllAttributes(liveEvents.attributes, q.attributes),
    textSearch(q.query, liveEvents.title, sql`${liveEvents.metadata}::text`),
  );
  const { limit, offset } = pageWindow(q);
  const [rows, [{ total }]] = await Promise.all([
    ctx.db
      .select(withStatus)
      .from(liveEvents)
      .where(where)
      .orderBy(...orderBy(q, SORTS, 'Start', liveEvents.id))
      .limit(limit)
      .offset(offset),
    ctx.db.select({ total: count() }).from(liveEvents).where(where),
  ]);
  return envelope(await Promise.all(rows.map((r) => presentEvent(ctx, r))), total, q as PageRequest);
}

/**
 * `start` changes only while the event is Scheduled, `end` until it is Finished (an event does not go back in time);
 * the rest changes any time. A new window of a scheduled `ensureChannel` event reschedules its channel at the next
 * pass of the scheduler; turning `ensureChannel` off gives its hold back at once.
 */
export async function updateEvent(ctx: PlatformContext, tenantId: string, id: string, patch: PatchBody) {
  await ctx.db.transaction(async (tx) => {
    const peek = await eventRow(tx, tenantId, id);
    // The channel first, then the event: the order every writer of holds takes its locks in.
    const channel = await channelRow(tx, tenantId, peek.channelId, true);
    const before = await eventRow(tx, tenantId, id, true);
    const start = patch.start !== undefined ? new Date(patch.start) : before.start;
    const end = patch.end !== undefined ? new Date(patch.end) : before.end;
    if (+start !== +before.start && before.status !== 'Scheduled') {
      throw new ApiError(409, 'event_started', `Event ${id} is ${before.status}; its start can change only while it is Scheduled`, [
        { field: 'start', message: `the event is ${before.status}` },
      ]);
    }
    if (+end !== +before.end && before.status === 'Finished') {
      throw new ApiError(409, 'event_finished', `Event ${id} is Finished; its end can no longer change`, [{ field: 'end', message: 'the event is Finished' }]);
    }
    checkRange(start, end, patch.end !== undefined ? 'end' : 'start');
    if (patch.ensureChannel && !before.ensureChannel) checkEnsure(channel, true);
    const rescheduled = +start !== +before.start || +end !== +before.end || patch.ensureChannel !== undefined;
    await tx
      .update(liveEvents)
      .set({
        start,
        end,
        // A hold given back is looked at again with the new window or the new ensureChannel.
        ...(rescheduled && before.channelHold === 'Released' ? { channelHold: 'Waiting' as const } : {}),
        ...given(patch, [...CATALOGUE_FIELDS, 'ensureChannel']),
        lastModificationDate: new Date(),
      })
      .where(eq(liveEvents.id, id));
    await recordLiveEvent(tx, tenantId, 'live.event.updated', {
      id,
      channelId: before.channelId,
      fields: Object.keys(patch),
      start: start.toISOString(),
      end: end.toISOString(),
    });
    // A hold given back (ensureChannel off) or moved (new window) is settled in this transaction, not a pass later.
    if (rescheduled) await settleChannel(tx, holdWindow(ctx.config), tenantId, before.channelId);
  });
  return getEvent(ctx, tenantId, id);
}

/** A deleted event gives its hold back: its channel stops unless another event of the channel still holds it. */
export async function deleteEvent(ctx: PlatformContext, tenantId: string, id: string): Promise<void> {
  await ctx.db.transaction(async (tx) => {
    const peek = await eventRow(tx, tenantId, id);
    await channelRow(tx, tenantId, peek.channelId, true);
    const row = await eventRow(tx, tenantId, id, true);
    if (row.channelHold === 'Holding') await settleChannel(tx, holdWindow(ctx.config), tenantId, row.channelId, id);
    await tx.delete(liveEvents).where(eq(liveEvents.id, id));
    await recordLiveEvent(tx, tenantId, 'live.event.deleted', { id, channelId: row.channelId });
  });
}

export const deleteEvents = (ctx: PlatformContext, tenantId: string, ids: string[]) => multiDelete(ids, (id) => deleteEvent(ctx, tenantId, id));
