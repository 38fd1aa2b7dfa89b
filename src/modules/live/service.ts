import { deleteFilesLater, deleteFilesNow } from '../../platform/storageDeletions.ts';
import { randomBytes } from 'node:crypto';
import { and, count, eq, inArray, sql, type SQL } from 'drizzle-orm';
import type { Static } from 'typebox';
import type { PlatformContext } from '../../context.ts';
import { installedCaptionModels } from '../../media/live/index.ts';
import type { Queryable } from '../../db/client.ts';
import { release } from '../../db/lease.ts';
import { tenants } from '../../db/tenants.ts';
import { ApiError, notFound, validationError } from '../../platform/errors.ts';
import { arrayParam, dateRange, textSearch } from '../../platform/filters.ts';
import { isUuid, newId } from '../../platform/ids.ts';
import { envelope, orderBy, pageWindow, type PageRequest } from '../../platform/paging.ts';
import { recordEvent } from '../../platform/events.ts';
import { withChannelKey } from './drm.ts';
import type { LiveEventType } from './events.ts';
import { isHeld } from './lease.ts';
import { ingestUrlFor, presentChannel, presentConfiguration, presentUpdated, type ChannelRow } from './present.ts';
import { srtPortFor } from './srtPorts.ts';
import type * as s from './schemas.ts';
import { wakeLiveRunners } from './wake.ts';
import { liveChannels, type ChannelEndpointRow, type ChannelStatus } from './tables.ts';
import { channelPrefix, checkpointKey, ingestUrl } from './urls.ts';
import { followAutoRecord } from './sessions.ts';
import {
  checkCaptionLanguage,
  checkDrm,
  normalizeAutoRecord,
  normalizeEndpoints,
  normalizeInput,
  normalizeQualities,
  normalizeRestreams,
  Problems,
} from './validate.ts';

type CreateBody = Static<typeof s.ChannelCreate>;
type PatchBody = Static<typeof s.ChannelPatch>;
type ListQuery = Static<typeof s.ChannelListQuery>;

/** 32 characters of base64url: 192 random bits, unguessable, safe in an RTMP URL path. */
const newStreamKey = (): string => randomBytes(24).toString('base64url');

/** Records a live event in the transaction that makes the change (the outbox). */
export const recordLiveEvent = (tx: Queryable, tenantId: string, type: LiveEventType, data: { id: string } & Record<string, unknown>) =>
  recordEvent(tx, tenantId, type, data);

/** A channel of the tenant, locked for the transaction's change; another tenant's channel is not found. */
async function channelRow(db: Queryable, tenantId: string, id: string, lock = false): Promise<ChannelRow> {
  if (!isUuid(id)) throw notFound('channel_not_found', 'Channel', id);
  const q = db
    .select()
    .from(liveChannels)
    .where(and(eq(liveChannels.tenantId, tenantId), eq(liveChannels.id, id)));
  const [row] = lock ? await q.for('update') : await q;
  if (!row) throw notFound('channel_not_found', 'Channel', id);
  return row;
}

export async function createChannel(ctx: PlatformContext, tenantId: string, body: CreateBody): Promise<{ id: string }> {
  const p = new Problems();
  const input = normalizeInput(body.input, undefined, p);
  const endpoints = normalizeEndpoints(body.endpoints, p);
  const qualities = normalizeQualities(body.qualities, p);
  const restreams = normalizeRestreams(body.restreams ?? [], [], p);
  const captionLanguage = checkCaptionLanguage(body.aiLiveCaptioningLanguageCode, installedCaptionModels(ctx.config.live.captionModelsDir), p);
  checkDrm(endpoints, { latency: body.latency ?? 'NormalLatency', drmKeyMode: body.drmKeyMode, isWatermarkProtected: body.isWatermarkProtected ?? false }, p);
  const autoRecord = normalizeAutoRecord(body.autoRecord, undefined, p);
  p.throwIfAny();
  const id = newId();
  const keyed = await withChannelKey(ctx, tenantId, id, endpoints, body.drmKeyMode);
  return ctx.db.transaction(async (tx) => {
    // The tenant row is the lock that makes "count, then insert" one step for concurrent creates.
    const [tenant] = await tx.select({ limit: tenants.channelsLimit }).from(tenants).where(eq(tenants.id, tenantId)).for('update');
    const [{ n }] = await tx.select({ n: count() }).from(liveChannels).where(eq(liveChannels.tenantId, tenantId));
    if (n >= tenant.limit) {
      throw new ApiError(
        409,
        'channel_limit_reached',
        `The tenant has ${n} channels and may have ${tenant.limit} (GET /live/v1/channels/limit); delete one first`,
      );
    }
    await tx.insert(liveChannels).values({
      id,
      tenantId,
      name: body.name,
      redundancy: body.redundancy ?? 'SingleInput',
      latency: body.latency ?? 'NormalLatency',
      activationMode: body.activationMode ?? 'Manual',
      transmissionType: body.transmissionType ?? 'Video',
      environment: body.environment ?? 'ManagedLive',
      packagingVersion: body.packagingVersion ?? 'V1',
      isWatermarkProtected: body.isWatermarkProtected ?? false,
      aiLiveCaptioningLanguageCode: captionLanguage ?? null,
      drmKeyMode: body.drmKeyMode ?? (keyed.some((e) => e.isDrmProtected) ? 'SingleKey' : null),
      broadcastStandard: body.broadcastStandard ?? null,
      input,
      endpoints: keyed,
      qualities,
      restreams,
      metadata: body.metadata ?? {},
      accessPolicyId: body.distributionInfo?.accessPolicyId ?? null,
      autoRecord,
      streamKey: newStreamKey(),
      srtPort: await srtPortFor(tx, ctx.config, input.transportInputProtocol ?? 'RTMP', null),
    });
    await recordLiveEvent(tx, tenantId, 'live.channel.created', { id, name: body.name, status: 'Off' });
    return { id };
  });
}

/** Who reads: a key that may change content sees stream keys; a read-only one sees them masked. */
export interface Reader {
  tenantId: string;
  canWrite: boolean;
}

export async function getChannel(ctx: PlatformContext, reader: Reader, id: string) {
  return presentChannel(ctx.config, await channelRow(ctx.db, reader.tenantId, id), reader.canWrite);
}

const SORTS = {
  CreateDate: liveChannels.createDate,
  LastModificationDate: liveChannels.lastModificationDate,
  Id: liveChannels.id,
  Name: liveChannels.name,
  'Metadata.Title': sql`coalesce(${liveChannels.metadata}->>'title', ${liveChannels.name})`,
  Status: liveChannels.status,
};

export async function listChannels(ctx: PlatformContext, { tenantId, canWrite }: Reader, q: ListQuery) {
  const ids = arrayParam(q.ids);
  if (ids.some((id) => !isUuid(id))) throw validationError('ids', 'every id must be a uuid');
  const where = and(
    eq(liveChannels.tenantId, tenantId),
    ids.length
      ? inArray(
          liveChannels.id,
          ids.map((id) => id.toLowerCase()),
        )
      : undefined,
    dateRange(liveChannels.createDate, q.createDateStart, q.createDateEnd),
    dateRange(liveChannels.lastModificationDate, q.lastModificationDateStart, q.lastModificationDateEnd),
    textSearch(q.query, liveChannels.name, sql`${liveChannels.metadata}::text`),
  );
  const { limit, offset } = pageWindow(q);
  const [rows, [{ total }]] = await Promise.all([
    ctx.db
      .select()
      .from(liveChannels)
      .where(where)
      .orderBy(...orderBy(q, SORTS, 'CreateDate', liveChannels.id))
      .limit(limit)
      .offset(offset),
    ctx.db.select({ total: count() }).from(liveChannels).where(where),
  ]);
  return envelope(
    rows.map((r) => presentChannel(ctx.config, r, canWrite, q.includeCloudData ?? true)),
    total,
    q as PageRequest,
  );
}

export async function updateChannel(ctx: PlatformContext, tenantId: string, id: string, patch: PatchBody) {
  // New endpoints get their DRM key before the transaction (the key store has its own), for a channel that exists.
  let given: ChannelEndpointRow[] | undefined;
  if (patch.endpoints !== undefined) {
    const p = new Problems();
    given = normalizeEndpoints(patch.endpoints, p);
    p.throwIfAny();
    const current = await channelRow(ctx.db, tenantId, id);
    given = await withChannelKey(ctx, tenantId, id, given, patch.drmKeyMode ?? current.drmKeyMode);
  }
  const row = await ctx.db.transaction(async (tx) => {
    const before = await channelRow(tx, tenantId, id, true);
    const p = new Problems();
    const input = patch.input !== undefined ? normalizeInput(patch.input, before.input, p) : before.input;
    const endpoints = given ?? before.endpoints;
    const qualities = patch.qualities !== undefined ? normalizeQualities(patch.qualities, p) : before.qualities;
    const restreams = normalizeRestreams(patch.restreams, before.restreams, p);
    const captionLanguage = checkCaptionLanguage(patch.aiLiveCaptioningLanguageCode, installedCaptionModels(ctx.config.live.captionModelsDir), p);
    checkDrm(endpoints, { latency: before.latency, drmKeyMode: patch.drmKeyMode, isWatermarkProtected: before.isWatermarkProtected }, p);
    const autoRecord = normalizeAutoRecord(patch.autoRecord, before.autoRecord, p);
    p.throwIfAny();
    const [after] = await tx
      .update(liveChannels)
      .set({
        ...(patch.name !== undefined ? { name: patch.name } : {}),
        ...(patch.automationDisabled !== undefined ? { automationDisabled: patch.automationDisabled } : {}),
        ...(patch.drmKeyMode !== undefined ? { drmKeyMode: patch.drmKeyMode } : {}),
        ...(patch.broadcastStandard !== undefined ? { broadcastStandard: patch.broadcastStandard } : {}),
        // null (or '') turns captions off.
        ...(captionLanguage !== undefined ? { aiLiveCaptioningLanguageCode: captionLanguage || null } : {}),
        ...(patch.metadata !== undefined ? { metadata: patch.metadata } : {}),
        srtPort: await srtPortFor(tx, ctx.config, input.transportInputProtocol ?? 'RTMP', before.srtPort),
        // null removes the policy; omitted leaves it as it is.
        ...(patch.accessPolicyId !== undefined ? { accessPolicyId: patch.accessPolicyId } : {}),
        input,
        endpoints,
        qualities,
        restreams,
        autoRecord,
        lastModificationDate: new Date(),
      })
      .where(eq(liveChannels.id, id))
      .returning();
    // Turned on during a session: the session on air is recorded too (the Recorder looks at its sessions).
    if (patch.autoRecord !== undefined) await followAutoRecord(tx, before.id, autoRecord);
    await recordLiveEvent(tx, tenantId, 'live.channel.updated', { id, fields: Object.keys(patch) });
    await wakeLiveRunners(tx);
    return after;
  });
  return presentUpdated(ctx.config, row);
}

const ACTIVE: readonly ChannelStatus[] = ['Starting', 'On', 'Stopping'];

/** Deleting is for channels that are not running: a running one answers 409 and is left as it is (stop it first). */
export async function deleteChannel(ctx: PlatformContext, tenantId: string, id: string): Promise<void> {
  // The checkpoint is one key; as a prefix it names that key alone.
  const files = [channelPrefix(tenantId, id), checkpointKey(tenantId, id)];
  await ctx.db.transaction(async (tx) => {
    const row = await channelRow(tx, tenantId, id, true);
    if (ACTIVE.includes(row.status)) {
      throw new ApiError(409, 'channel_not_off', `Channel ${id} is ${row.status}; stop it (POST /live/v1/channels/${id}/stop) and delete it once it is Off`);
    }
    await tx.delete(liveChannels).where(eq(liveChannels.id, id));
    await recordLiveEvent(tx, tenantId, 'live.channel.deleted', { id });
    await deleteFilesLater(tx, files);
  });
  // After commit: no process runs an Off channel, so nothing writes under the prefix any more.
  await deleteFilesNow(ctx, files);
}

/** `Off` or `Error` → `Starting`; a live process takes it and turns it `On` when its first segment is out. */
export async function startChannel(ctx: PlatformContext, tenantId: string, id: string): Promise<void> {
  await ctx.db.transaction((tx) => startChannelIn(tx, tenantId, id));
}

/** `startChannel` in the caller's transaction (the events scheduler starts a channel with the change that asks for it). */
export async function startChannelIn(tx: Queryable, tenantId: string, id: string): Promise<void> {
  const row = await channelRow(tx, tenantId, id, true);
  if (row.status === 'Starting' || row.status === 'On') return;
  if (row.status === 'Stopping') throw new ApiError(409, 'channel_stopping', `Channel ${id} is Stopping; start it again once it is Off`);
  await setStatus(tx, row, 'Starting', 'live.channel.starting', { internalStatus: null });
}

/**
 * `Starting` or `On` → `Stopping`, then the owner stops it and turns it `Off`. A channel no live process holds (none
 * claimed it yet, or its owner died) is turned `Off` at once. Stopping an `Off` or `Stopping` channel changes nothing.
 */
export async function stopChannel(ctx: PlatformContext, tenantId: string, id: string): Promise<void> {
  await ctx.db.transaction((tx) => stopChannelIn(tx, tenantId, id));
}

/** `stopChannel` in the caller's transaction. */
export async function stopChannelIn(tx: Queryable, tenantId: string, id: string): Promise<void> {
  const row = await channelRow(tx, tenantId, id, true);
  if (row.status === 'Off' || row.status === 'Stopping') return;
  if (row.status === 'Error') return void (await setStatus(tx, row, 'Off', 'live.channel.off', { internalStatus: null }));
  await setStatus(tx, row, 'Stopping', 'live.channel.stopping');
  const [{ held }] = await tx.select({ held: isHeld }).from(liveChannels).where(eq(liveChannels.id, id));
  if (!held) await setStatus(tx, { ...row, status: 'Stopping' }, 'Off', 'live.channel.off', { internalStatus: null, ...release() });
}

/** A status change and its event, in the caller's transaction. */
async function setStatus(
  tx: Queryable,
  row: Pick<ChannelRow, 'id' | 'tenantId' | 'status'>,
  status: ChannelStatus,
  event: LiveEventType,
  extra: Partial<Pick<ChannelRow, 'internalStatus' | 'leaseOwner'>> & { leaseUntil?: Date | SQL<Date> | null } = {},
  data: Record<string, unknown> = {},
): Promise<void> {
  await tx
    .update(liveChannels)
    .set({ status, ...extra })
    .where(eq(liveChannels.id, row.id));
  await recordLiveEvent(tx, row.tenantId, event, { id: row.id, status, previousStatus: row.status, ...data });
  // A live process starts or stops the channel at once, not at its next poll.
  await wakeLiveRunners(tx);
}

/** A new stream key; the owner disconnects an encoder that used the old one at its next pass. */
export async function rotateStreamKey(ctx: PlatformContext, tenantId: string, id: string) {
  const streamKey = newStreamKey();
  const row = await ctx.db.transaction(async (tx) => {
    await channelRow(tx, tenantId, id, true);
    const [after] = await tx.update(liveChannels).set({ streamKey, lastModificationDate: new Date() }).where(eq(liveChannels.id, id)).returning();
    await recordLiveEvent(tx, tenantId, 'live.channel.updated', { id, fields: ['streamKey'] });
    await wakeLiveRunners(tx);
    return after;
  });
  // A pulled channel has no ingest URL; it is shown as an RTMP push would use it, as before.
  return { id, transportPrimaryIngestUrl: ingestUrlFor(ctx.config, row, true) ?? ingestUrl(ctx.config, streamKey) };
}

export async function channelStatus(ctx: PlatformContext, tenantId: string, id: string) {
  const row = await channelRow(ctx.db, tenantId, id);
  return { id: row.id, status: row.status };
}

/** Unknown ids and other tenants' channels are left out of the answer; no ids means every channel of the tenant. */
export async function channelsStatus(ctx: PlatformContext, tenantId: string, idsParam: string[] | undefined) {
  const ids = arrayParam(idsParam);
  if (ids.some((id) => !isUuid(id))) throw validationError('ids', 'every id must be a uuid');
  return ctx.db
    .select({ id: liveChannels.id, status: liveChannels.status })
    .from(liveChannels)
    .where(
      and(
        eq(liveChannels.tenantId, tenantId),
        ids.length
          ? inArray(
              liveChannels.id,
              ids.map((id) => id.toLowerCase()),
            )
          : undefined,
      ),
    )
    .orderBy(liveChannels.createDate, liveChannels.id)
    .limit(1000);
}

export async function channelConfiguration(ctx: PlatformContext, reader: Reader, id: string) {
  return presentConfiguration(ctx.config, await channelRow(ctx.db, reader.tenantId, id), reader.canWrite);
}

export async function channelsLimit(ctx: PlatformContext, tenantId: string) {
  const [row] = await ctx.db.select({ channelsLimit: tenants.channelsLimit }).from(tenants).where(eq(tenants.id, tenantId));
  return { channelsLimit: row?.channelsLimit ?? 0 };
}

/** The languages whose speech model is installed on this machine (docs/decisions/live.md, "Live captions"). */
export const captionLanguages = (ctx: PlatformContext): { name: string; code: string }[] =>
  installedCaptionModels(ctx.config.live.captionModelsDir).map((m) => ({ name: m.name, code: m.code }));

export { channelRow };
