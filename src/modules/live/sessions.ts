import { and, desc, eq, gt, isNull, or, sql } from 'drizzle-orm';
import type { PlatformContext } from '../../context.ts';
import type { Queryable } from '../../db/client.ts';
import { newId } from '../../platform/ids.ts';
import { liveChannelSessions } from './sessions.tables.ts';
import { liveChannels, type AutoRecordRow } from './tables.ts';

const s = liveChannelSessions;

/**
 * What the runner knows of a channel's session on air (docs/decisions/live.md, "Sessions"). Its bounds are on the
 * channel's timeline: the start of the first segment the input produced, and the end of the last one of each track.
 */
export class LiveSession {
  /** The end of the input's last segment, per track (the session ends where every track's last one has ended). */
  private readonly liveEnds = new Map<string, number>();
  /** Its row exists: the start no longer moves. */
  written = false;
  /** When the input was lost (wall clock, ms); undefined while it is there. */
  lostAt: number | undefined;

  constructor(
    readonly id: string,
    public startMs: number,
    /** What is known of the end before any segment of this process (a session taken over from another process). */
    private readonly fallbackUntilMs = startMs,
  ) {}

  /** A segment of the input: the first of each track moves the start to the latest of them (tracks begin a little apart). */
  segment(track: string, startMs: number, durationMs: number): void {
    if (!this.written && !this.liveEnds.has(track)) this.startMs = Math.max(this.startMs, startMs);
    this.liveEnds.set(track, Math.max(this.liveEnds.get(track) ?? 0, startMs + durationMs));
  }

  /**
   * The end of what the input produced: the earliest of the tracks' last segments' ends, so that a range up to it holds
   * no segment of the input-loss picture (a range is every segment that overlaps it).
   */
  get liveUntilMs(): number {
    return this.liveEnds.size ? Math.max(this.startMs, Math.min(...this.liveEnds.values())) : this.fallbackUntilMs;
  }
}

/** A session's change, written by the runner with the channel's other changes while it holds the channel's lease. */
export type SessionOp = 'open' | 'lost' | 'back' | 'end';

const held = (channelId: string, owner: string) =>
  sql`exists (select 1 from ${liveChannels} where ${liveChannels.id} = ${channelId} and ${liveChannels.leaseOwner} = ${owner})`;

export async function writeSession(tx: Queryable, owner: string, run: { id: string; tenantId: string }, session: LiveSession, op: SessionOp): Promise<void> {
  if (op === 'open') {
    // The channel's autoRecord as the session begins; only while this process holds the channel.
    await tx.execute(sql`
      insert into ${s} (id, tenant_id, channel_id, start_ms, live_until_ms, auto_record)
      select ${session.id}, ${run.tenantId}, ${run.id}, ${session.startMs}, ${session.liveUntilMs}, ${liveChannels.autoRecord}
      from ${liveChannels} where ${liveChannels.id} = ${run.id} and ${liveChannels.leaseOwner} = ${owner}
      on conflict (id) do nothing`);
    session.written = true;
    return;
  }
  const set =
    op === 'lost'
      ? { lostAt: new Date(session.lostAt ?? Date.now()), liveUntilMs: session.liveUntilMs }
      : op === 'back'
        ? { lostAt: null }
        : { endMs: session.liveUntilMs, liveUntilMs: session.liveUntilMs };
  await tx
    .update(s)
    .set(set)
    .where(and(eq(s.id, session.id), isNull(s.endMs), held(run.id, owner)));
}

/**
 * The channel stopped (or failed, or a dead owner's stop was finished): a session still open ends where its input was
 * last known to produce.
 */
export async function closeOpenSessions(tx: Queryable, channelId: string): Promise<void> {
  await tx
    .update(s)
    .set({ endMs: sql`coalesce(${s.liveUntilMs}, ${s.startMs})` })
    .where(and(eq(s.channelId, channelId), isNull(s.endMs)));
}

/**
 * The channel's open session when this process takes the channel over (another process ran it, and stopped or died):
 * it goes on if the input comes back within the reconnect window, counted from now when the last owner did not
 * see the input go.
 */
export async function adoptSession(ctx: PlatformContext, channelId: string): Promise<LiveSession | undefined> {
  const [row] = await ctx.db
    .select()
    .from(s)
    .where(and(eq(s.channelId, channelId), isNull(s.endMs)))
    .orderBy(desc(s.startMs))
    .limit(1);
  if (!row) return undefined;
  const session = new LiveSession(row.id, row.startMs, row.liveUntilMs ?? row.startMs);
  session.written = true;
  session.lostAt = row.lostAt?.getTime() ?? Date.now();
  return session;
}

export const newSession = (startMs: number) => new LiveSession(newId(), startMs);

/**
 * `autoRecord` turned on (or changed while on) applies to the session on air too: turned on during a show, the show is
 * recorded from its start. Turned off, it applies from the next session: the one on air, whose recording may already
 * run, keeps what it began with, so that its recording still ends with it.
 */
export async function followAutoRecord(tx: Queryable, channelId: string, autoRecord: AutoRecordRow): Promise<void> {
  if (!autoRecord.enabled) return;
  await tx
    .update(s)
    .set({ autoRecord })
    .where(and(eq(s.channelId, channelId), isNull(s.endMs)));
}

/** A session to record, as the Recorder reads it through live's front door. */
export interface AutoRecordedSession {
  id: string;
  tenantId: string;
  channelId: string;
  channelName: string;
  /** On the channel's timeline, ms since the epoch. */
  startMs: number;
  /** null while on air. */
  endMs: number | null;
  autoRecord: AutoRecordRow;
}

/**
 * The sessions whose `autoRecord` is enabled that are on air or ended after `sinceMs` (on the timeline), oldest first:
 * what the Recorder's pass turns into recordings and ends (src/modules/recorder/autoRecord.ts).
 */
export async function autoRecordedSessions(ctx: PlatformContext, sinceMs: number, limit = 200): Promise<AutoRecordedSession[]> {
  return ctx.db
    .select({
      id: s.id,
      tenantId: s.tenantId,
      channelId: s.channelId,
      channelName: liveChannels.name,
      startMs: s.startMs,
      endMs: s.endMs,
      autoRecord: s.autoRecord,
    })
    .from(s)
    .innerJoin(liveChannels, eq(liveChannels.id, s.channelId))
    .where(and(or(isNull(s.endMs), gt(s.endMs, sinceMs)), sql`(${s.autoRecord}->>'enabled')::boolean`))
    .orderBy(s.startMs)
    .limit(limit);
}
