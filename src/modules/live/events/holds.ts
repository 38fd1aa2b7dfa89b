import { and, eq, getTableColumns, ne, sql } from 'drizzle-orm';
import type { Config } from '../../../config.ts';
import type { Queryable } from '../../../db/client.ts';
import { channelRow, startChannelIn, stopChannelIn } from '../service.ts';
import type { ChannelRow } from '../present.ts';
import { holdClosedBy, holdOpensBy, inHoldWindow, type HoldWindow } from './status.ts';
import { liveEvents, type ChannelHold } from './tables.ts';

/**
 * How `ensureChannel` events turn their channel on and off (docs/decisions/live.md, "Events").
 *
 * Each such event holds its channel during its window, `lead` before `start` until `tail` after `end`. When an
 * event's window opens it starts the channel, once (edge-triggered: a channel stopped by hand during the event stays
 * stopped). When a window closes, the channel is stopped only if no other event of the channel still holds it: with
 * overlapping or back-to-back events the channel stays on from the first window's opening to the last one's end.
 * Every decision about one channel is taken under a lock on the channel row, so two processes (or a request and the
 * scheduler) never decide about the same channel at once.
 */
export function holdWindow(config: Config): HoldWindow {
  const segment = config.live.segmentSeconds;
  // The channel's media time lags the wall clock by at most max(3 segments, 6 s) (the packager's bound,
  // docs/decisions/live.md "Runs on one timeline"); two more segments let the one holding `end` be encoded and
  // published. Then the event's catch-up (its range of the timeline) is complete when the encoder stops.
  const tail = Math.max(3 * segment, 6) + 2 * segment;
  return { leadMs: config.live.eventLeadSeconds * 1000, tailMs: tail * 1000 };
}

/** Events drive only channels meant for it: `activationMode: EventBased`, automation not disabled. */
export const automated = (c: Pick<ChannelRow, 'activationMode' | 'automationDisabled'>): boolean => c.activationMode === 'EventBased' && !c.automationDisabled;

/** Channels with a hold decision due (an `ensureChannel` window that opened or closed, a hold to give back). */
export async function channelsDue(db: Queryable, w: HoldWindow): Promise<{ tenantId: string; channelId: string }[]> {
  return db
    .selectDistinct({ tenantId: liveEvents.tenantId, channelId: liveEvents.channelId })
    .from(liveEvents)
    .where(
      sql`(${liveEvents.channelHold} = 'Waiting' and ${liveEvents.ensureChannel} and ${holdOpensBy(w)})
       or (${liveEvents.channelHold} = 'Holding' and (not ${liveEvents.ensureChannel} or not ${inHoldWindow(w)}))`,
    )
    .limit(500);
}

/**
 * Applies what is due on one channel, in the caller's transaction: holds that open start the channel, holds that close
 * stop it when no other event holds it. `except` leaves an event out (one being deleted, or no longer ensureChannel):
 * its hold is given back. Answers what was done, for logs and tests.
 */
export async function settleChannel(
  tx: Queryable,
  w: HoldWindow,
  tenantId: string,
  channelId: string,
  except?: string,
): Promise<'started' | 'stopped' | 'none'> {
  let channel: ChannelRow;
  try {
    // The lock every decision about this channel takes first (request or scheduler, any process).
    channel = await channelRow(tx, tenantId, channelId, true);
  } catch {
    return 'none'; // deleted meanwhile: its events went with it
  }
  const rows = await tx
    .select({ ...getTableColumns(liveEvents), opens: holdOpensBy(w), closed: holdClosedBy(w) })
    .from(liveEvents)
    .where(and(eq(liveEvents.channelId, channelId), ne(liveEvents.channelHold, 'Released')))
    .for('update');
  let opened = false;
  let closed = false;
  let holders = 0;
  for (const e of rows) {
    const wanted = e.ensureChannel && e.id !== except;
    let next: ChannelHold = e.channelHold;
    if (e.channelHold === 'Holding') {
      if (!wanted || e.closed) next = 'Released';
      else if (!e.opens) next = 'Waiting'; // rescheduled later: the hold opens again with its new window
    } else if (wanted && e.closed) {
      next = 'Released'; // its whole window passed without the channel being started (automation off, platform down)
    } else if (wanted && e.opens && automated(channel) && channel.status !== 'Stopping') {
      next = 'Holding'; // a Stopping channel is started at a later pass, once it is Off
      opened = true;
    }
    if (e.channelHold === 'Holding' && next !== 'Holding') closed = true;
    if (next === 'Holding') holders++;
    if (next !== e.channelHold && e.id !== except) await tx.update(liveEvents).set({ channelHold: next }).where(eq(liveEvents.id, e.id));
  }
  if (opened) {
    await startChannelIn(tx, tenantId, channelId);
    return 'started';
  }
  if (closed && holders === 0 && automated(channel)) {
    await stopChannelIn(tx, tenantId, channelId);
    return 'stopped';
  }
  return 'none';
}
