import { and, eq, inArray, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { claimable, expired, heldBy, release, renew, take, type LeaseRef } from '../../db/lease.ts';
import type { ChannelRow } from './present.ts';
import { liveChannels } from './tables.ts';

/**
 * Channel ownership, on the platform's lease (`src/db/lease.ts`): a live process holds a channel while `lease_until`,
 * on the database's clock, is in the future. The owner renews it every pass; a process that dies stops renewing and
 * another (or its own restart) takes the channel over once the lease has run out.
 */
const ref: LeaseRef = { owner: liveChannels.leaseOwner, until: liveChannels.leaseUntil };

/**
 * Extends this process's leases; answers the channels it still holds, whatever their status. `owner` is stable across
 * restarts of one live process (host and RTMP port), so a process that was killed finds its channels here at once
 * instead of waiting for the lease to run out.
 */
export async function renewLeases(db: Db, owner: string, leaseMs: number): Promise<ChannelRow[]> {
  return db.update(liveChannels).set(renew(leaseMs)).where(heldBy(ref, owner)).returning();
}

const ACTIVE_STANDBY_LOCK_KEY = 0x4c_49_56_45; // "LIVE"

/**
 * Takes up to `room` channels that should run (`Starting`, `On`) and that nobody holds: never claimed, or their
 * owner's lease ran out. Rows a request is changing right now are skipped (taken at the next pass). With
 * `activeStandby`, only while no other live process holds a channel (MEDIAPLANE_LIVE_ACTIVE_STANDBY).
 */
export async function claimChannels(db: Db, owner: string, leaseMs: number, room: number, activeStandby = false): Promise<ChannelRow[]> {
  if (room <= 0) return [];
  const claim = (q: Pick<Db, 'update'>) =>
    q
      .update(liveChannels)
      .set(take(owner, leaseMs))
      .where(
        and(
          inArray(
            liveChannels.id,
            sql`(select id from ${liveChannels}
              where status in ('Starting', 'On') and ${claimable(ref, owner)}
              order by lease_until nulls first
              limit ${room}
              for update skip locked)`,
          ),
          // Active/standby: nothing is taken while another live process still holds a channel.
          activeStandby ? sql`not exists (select 1 from ${liveChannels} o where o.lease_owner <> ${owner} and o.lease_until >= now())` : undefined,
        ),
      )
      .returning();
  if (!activeStandby) return claim(db);
  // Claims are taken one process at a time, so two standbys starting together cannot split the channels.
  return db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(${ACTIVE_STANDBY_LOCK_KEY})`);
    return claim(tx);
  });
}

/** Gives back leases of a process (all of them when it stops cleanly), so that another process takes them at once. */
export async function releaseLeases(db: Db, owner: string, ids?: string[]): Promise<void> {
  await db
    .update(liveChannels)
    .set(release())
    .where(and(heldBy(ref, owner), ids ? inArray(liveChannels.id, ids) : undefined));
}

/** The channel is held by a live process whose lease has not run out (the API asks before stopping it itself). */
export const isHeld = sql<boolean>`(${liveChannels.leaseUntil} is not null and ${liveChannels.leaseUntil} >= now())`;

/**
 * Channels left `Stopping` by an owner that died (or stopped) before turning them `Off`: nothing runs them, so any live
 * process finishes the stop. Answers the rows it turned `Off`, for their events in the same transaction.
 */
export async function finishOrphanStops(db: Pick<Db, 'update'>): Promise<Pick<ChannelRow, 'id' | 'tenantId'>[]> {
  return db
    .update(liveChannels)
    .set({ status: 'Off', internalStatus: null, ...release() })
    .where(and(eq(liveChannels.status, 'Stopping'), sql`(${liveChannels.leaseUntil} is null or ${expired(ref)})`))
    .returning({ id: liveChannels.id, tenantId: liveChannels.tenantId });
}
