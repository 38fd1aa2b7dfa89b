import { and, count, eq, sql } from 'drizzle-orm';
import type { Static } from 'typebox';
import type { PlatformContext } from '../../context.ts';
import type { Queryable } from '../../db/client.ts';
import { ApiError, notFound, validationError } from '../../platform/errors.ts';
import { recordEvent } from '../../platform/events.ts';
import { dateRange, textSearch } from '../../platform/filters.ts';
import { isUuid, newId } from '../../platform/ids.ts';
import { envelope, orderBy, pageWindow, type PageRequest } from '../../platform/paging.ts';
import { assetNotFound, findPreparedAsset } from './assets.service.ts';
import type * as s from './schemas.ts';
import { forgetSession } from './redirector.ts';
import { getSettings } from './settings.service.ts';
import { watermarkingSessions } from './tables.ts';
import { signRedirectorToken } from './token.ts';

type SessionRow = typeof watermarkingSessions.$inferSelect;

const sessionNotFound = (id: string) => notFound('watermarking_session_not_found', 'Watermarking session', id);

export const presentSession = (r: SessionRow) => ({
  id: r.id,
  assetId: r.assetId,
  userNumber: r.userNumber,
  userName: r.userName,
  revoked: r.revoked,
  revokeDate: r.revokeDate,
  createDate: r.createDate,
  lastModificationDate: r.lastModificationDate,
});

/**
 * Create redirector token: the session of (asset, user number) is created on first use and reused after, so that
 * one user number always spells the same sequence on one asset; a revoked session gets no new token.
 */
export async function createRedirectorToken(ctx: PlatformContext, tenantId: string, body: Static<typeof s.TokenCreate>) {
  const asset = await findPreparedAsset(ctx.db, tenantId, body.assetId);
  if (!asset) throw assetNotFound(body.assetId);
  if (asset.status !== 'Available')
    throw new ApiError(409, 'watermarking_asset_not_available', `Watermarking asset ${asset.id} is ${asset.status}, not Available`);
  if (body.userNumber >= 2 ** asset.userNumberBits) {
    throw validationError('userNumber', `must be below ${2 ** asset.userNumberBits}: this asset spells ${asset.userNumberBits}-bit user numbers`);
  }
  const settings = await getSettings(ctx.db, tenantId);
  const session = await ctx.db.transaction(async (tx) => {
    const [created] = await tx
      .insert(watermarkingSessions)
      .values({ id: newId(), tenantId, assetId: asset.id, userNumber: body.userNumber, userName: body.userName })
      .onConflictDoNothing()
      .returning();
    if (created) {
      await recordEvent(tx, tenantId, 'watermarking.session.created', { id: created.id, assetId: asset.id, userNumber: body.userNumber });
      return created;
    }
    const [existing] = await tx
      .select()
      .from(watermarkingSessions)
      .where(and(eq(watermarkingSessions.assetId, asset.id), eq(watermarkingSessions.userNumber, body.userNumber)));
    return existing;
  });
  if (session.revoked) throw new ApiError(403, 'watermarking_session_revoked', `The session of user ${body.userNumber} on asset ${asset.id} is revoked`);
  const ttl = body.expiresInSeconds ?? settings.tokenTtlSeconds;
  const expirationDate = new Date(Date.now() + ttl * 1000);
  const token = await signRedirectorToken(ctx, { sessionId: session.id, tenantId }, expirationDate);
  return {
    token,
    sessionId: session.id,
    expirationDate,
    playbackUrl: new URL(`/watermarking/v1/redirector/${token}/master.m3u8`, ctx.config.publicUrl).toString(),
  };
}

async function sessionRow(db: Queryable, tenantId: string, id: string): Promise<SessionRow> {
  if (!isUuid(id)) throw sessionNotFound(id);
  const [row] = await db
    .select()
    .from(watermarkingSessions)
    .where(and(eq(watermarkingSessions.tenantId, tenantId), eq(watermarkingSessions.id, id)));
  if (!row) throw sessionNotFound(id);
  return row;
}

export async function getSession(db: Queryable, tenantId: string, id: string) {
  return presentSession(await sessionRow(db, tenantId, id));
}

export async function setRevoked(ctx: PlatformContext, tenantId: string, id: string, revoked: boolean) {
  const session = await ctx.db.transaction(async (tx) => {
    const row = await sessionRow(tx, tenantId, id);
    if (row.revoked === revoked) return presentSession(row);
    const [updated] = await tx
      .update(watermarkingSessions)
      .set({ revoked, revokeDate: revoked ? new Date() : null, lastModificationDate: new Date() })
      .where(eq(watermarkingSessions.id, row.id))
      .returning();
    await recordEvent(tx, tenantId, revoked ? 'watermarking.session.revoked' : 'watermarking.session.unrevoked', { id: row.id, assetId: row.assetId });
    return presentSession(updated);
  });
  forgetSession(session.id);
  return session;
}

const SORTS = {
  CreateDate: watermarkingSessions.createDate,
  LastModificationDate: watermarkingSessions.lastModificationDate,
  UserNumber: watermarkingSessions.userNumber,
  UserName: watermarkingSessions.userName,
  Id: watermarkingSessions.id,
};

export async function listSessions(db: Queryable, tenantId: string, q: Static<typeof s.SessionListQuery>) {
  if (q.assetId !== undefined && !isUuid(q.assetId)) throw validationError('assetId', 'must be a uuid');
  const where = and(
    eq(watermarkingSessions.tenantId, tenantId),
    q.assetId ? eq(watermarkingSessions.assetId, q.assetId.toLowerCase()) : undefined,
    q.userNumber !== undefined ? eq(watermarkingSessions.userNumber, q.userNumber) : undefined,
    q.revoked !== undefined ? eq(watermarkingSessions.revoked, q.revoked) : undefined,
    dateRange(watermarkingSessions.createDate, q.createDateStart, q.createDateEnd),
    textSearch(q.query, watermarkingSessions.userName, sql`${watermarkingSessions.userNumber}::text`),
  );
  const { limit, offset } = pageWindow(q);
  const [rows, [{ total }]] = await Promise.all([
    db
      .select()
      .from(watermarkingSessions)
      .where(where)
      .orderBy(...orderBy(q, SORTS, 'CreateDate', watermarkingSessions.id))
      .limit(limit)
      .offset(offset),
    db.select({ total: count() }).from(watermarkingSessions).where(where),
  ]);
  return envelope(rows.map(presentSession), total, q as PageRequest);
}
