import { and, count, eq, gt, ne, sql } from 'drizzle-orm';
import type { PlatformContext, WorkerStarter } from '../../context.ts';
import { startPeriodic } from '../../platform/periodic.ts';
import { ApiError } from '../../platform/errors.ts';
import { streamingSessions } from './tables.ts';

/** A session not seen (no manifest or segment request) for this long has ended and frees its place. */
export const SESSION_IDLE_SECONDS = 30;
/** A process renews a session it admitted at most this often: not one database write per segment. */
const RENEW_MS = 10_000;
const renewed = new Map<string, number>();

/**
 * `cap` (concurrent access protection): admits the request when its session is already held, or when the holder (a
 * token, or a viewer) holds fewer than `limit` other live sessions; records or renews it. Decided in the database,
 * under a lock on the holder, so that several API processes count the same sessions.
 */
export async function holdSession(
  ctx: PlatformContext,
  s: { tenantId: string; assetId: string; holder: string; session: string; limit: number },
): Promise<void> {
  const key = `${s.tenantId}/${s.holder}/${s.session}`;
  if ((renewed.get(key) ?? 0) > Date.now()) return;
  const live = gt(streamingSessions.lastSeen, sql`now() - make_interval(secs => ${SESSION_IDLE_SECONDS})`);
  await ctx.db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`${s.tenantId}/${s.holder}`}))`);
    const [{ others }] = await tx
      .select({ others: count() })
      .from(streamingSessions)
      .where(and(eq(streamingSessions.tenantId, s.tenantId), eq(streamingSessions.holder, s.holder), ne(streamingSessions.session, s.session), live));
    const [mine] = await tx
      .select({ session: streamingSessions.session })
      .from(streamingSessions)
      .where(and(eq(streamingSessions.tenantId, s.tenantId), eq(streamingSessions.holder, s.holder), eq(streamingSessions.session, s.session), live));
    if (!mine && others >= s.limit)
      throw new ApiError(
        403,
        'playback_sessions_exceeded',
        `This token (or viewer) already plays ${others} session${others === 1 ? '' : 's'}, the most the tenant allows at once (cap); stop one, or wait ${SESSION_IDLE_SECONDS} s after it stopped`,
      );
    await tx
      .insert(streamingSessions)
      .values({ tenantId: s.tenantId, holder: s.holder, session: s.session, assetId: s.assetId, lastSeen: sql`now()` })
      .onConflictDoUpdate({
        target: [streamingSessions.tenantId, streamingSessions.holder, streamingSessions.session],
        set: { lastSeen: sql`now()`, assetId: s.assetId },
      });
  });
  if (renewed.size > 100_000) renewed.clear();
  renewed.set(key, Date.now() + RENEW_MS);
}

/** Ended sessions, deleted by the sweep. */
export async function deleteEndedSessions(ctx: PlatformContext): Promise<void> {
  await ctx.db.delete(streamingSessions).where(sql`${streamingSessions.lastSeen} < now() - make_interval(secs => ${SESSION_IDLE_SECONDS * 10})`);
}

/** Deletes ended `cap` sessions every minute (worker role). */
export const startSessionSweep: WorkerStarter = async (ctx) => {
  const task = startPeriodic('streaming sessions', 60_000, () => deleteEndedSessions(ctx), ctx.log, { runAtStart: false });
  return () => task.stop();
};
