import { and, eq } from 'drizzle-orm';
import type { Queryable } from '../../db/client.ts';
import { release } from '../../db/lease.ts';
import type { ChannelRun } from './channelRun.ts';
import type { ChannelRow } from './present.ts';
import type { RestreamNotice } from './restreams.ts';
import { recordLiveEvent } from './service.ts';
import { closeOpenSessions, writeSession, type LiveSession, type SessionOp } from './sessions.ts';
import { liveChannels } from './tables.ts';

/** A change the runner saw, written with its event in the next pass's one transaction. */
export type Change =
  | { kind: 'on'; run: ChannelRun }
  | { kind: 'input'; run: ChannelRun; connected: boolean }
  | { kind: 'encoder'; run: ChannelRun; failed: boolean; message?: string }
  | { kind: 'error'; row: ChannelRow; run: ChannelRun; message: string }
  | { kind: 'restream'; run: ChannelRun; notice: RestreamNotice }
  | { kind: 'session'; run: ChannelRun; session: LiveSession; op: SessionOp }
  | { kind: 'off'; row: ChannelRow; run?: ChannelRun };

/**
 * Writes one change and its event in `tx`, only while `owner` still holds the channel's lease: a process that lost
 * the channel to another owner writes nothing for it.
 */
export async function writeChange(tx: Queryable, owner: string, c: Change): Promise<void> {
  const mine = (id: string) => and(eq(liveChannels.id, id), eq(liveChannels.leaseOwner, owner));
  if (c.kind === 'on') {
    const [row] = await tx
      .update(liveChannels)
      .set({ status: 'On' })
      .where(and(mine(c.run.id), eq(liveChannels.status, 'Starting')))
      .returning({ id: liveChannels.id });
    if (!row) return;
    c.run.status = 'On';
    await recordLiveEvent(tx, c.run.tenantId, 'live.channel.on', {
      id: c.run.id,
      status: 'On',
      previousStatus: 'Starting',
    });
  } else if (c.kind === 'input') {
    const internalStatus = c.connected ? 'InputConnected' : 'InputLost';
    const [row] = await tx.update(liveChannels).set({ internalStatus }).where(mine(c.run.id)).returning({ id: liveChannels.id });
    if (row)
      await recordLiveEvent(tx, c.run.tenantId, c.connected ? 'live.channel.input.connected' : 'live.channel.input.lost', {
        id: c.run.id,
        status: c.run.status,
      });
  } else if (c.kind === 'encoder') {
    const internalStatus = c.failed ? `EncoderFailed: ${c.message ?? 'unknown'}`.slice(0, 500) : c.run.inputConnected ? 'InputConnected' : 'InputLost';
    const [row] = await tx.update(liveChannels).set({ internalStatus }).where(mine(c.run.id)).returning({ id: liveChannels.id });
    if (row && c.failed)
      await recordLiveEvent(tx, c.run.tenantId, 'live.channel.error', {
        id: c.run.id,
        status: c.run.status,
        message: c.message ?? 'the encoder failed; restarting it',
      });
  } else if (c.kind === 'session') {
    await writeSession(tx, owner, c.run, c.session, c.op);
  } else if (c.kind === 'restream') {
    const n = c.notice;
    const failed = n.event.type === 'failed';
    await recordLiveEvent(tx, c.run.tenantId, failed ? 'live.channel.restream.failed' : 'live.channel.restream.recovered', {
      id: c.run.id,
      status: c.run.status,
      restreamId: n.restreamId,
      destination: n.destination,
      url: n.url,
      ...(n.event.type === 'failed' ? { message: n.event.message } : {}),
    });
  } else if (c.kind === 'error') {
    const [row] = await tx
      .update(liveChannels)
      .set({
        status: 'Error',
        internalStatus: c.message.slice(0, 500),
        restreamStatus: {},
        ...release(),
      })
      .where(mine(c.row.id))
      .returning({ id: liveChannels.id });
    if (row) await closeOpenSessions(tx, c.row.id);
    if (row)
      await recordLiveEvent(tx, c.row.tenantId, 'live.channel.error', {
        id: c.row.id,
        status: 'Error',
        previousStatus: c.row.status,
        message: c.message,
      });
  } else {
    const [row] = await tx
      .update(liveChannels)
      .set({
        status: 'Off',
        internalStatus: null,
        restreamStatus: {},
        ...release(),
      })
      .where(and(mine(c.row.id), eq(liveChannels.status, 'Stopping')))
      .returning({ id: liveChannels.id });
    if (row) await closeOpenSessions(tx, c.row.id);
    if (row)
      await recordLiveEvent(tx, c.row.tenantId, 'live.channel.off', {
        id: c.row.id,
        status: 'Off',
        previousStatus: 'Stopping',
      });
  }
}
