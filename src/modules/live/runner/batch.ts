import { and, eq } from 'drizzle-orm';
import type { PlatformContext } from '../../../context.ts';
import type { Logger } from '../../../platform/logger.ts';
import type { ChannelRun } from '../channelRun.ts';
import { finishOrphanStops } from '../lease.ts';
import { MinuteStatsBook } from '../minuteStats.ts';
import { writeChange, type Change } from '../runnerChanges.ts';
import { recordLiveEvent } from '../service.ts';
import { closeOpenSessions } from '../sessions.ts';
import { recordChannelStats } from '../stats.ts';
import { liveChannels } from '../tables.ts';

const STATS_FLUSH_MS = 10_000;
/** How often a live process looks for channels a dead owner left `Stopping`. */
const ORPHAN_SWEEP_MS = 5_000;

/**
 * What the runner writes in batches: the changes it saw (status, input, encoder, restreams) with their events, in one
 * transaction a pass, and its channels' per-minute statistics, every 10 s. Kept for the next time when a write fails.
 */
export class RunnerBatch {
  private readonly changes: Change[] = [];
  readonly book = new MinuteStatsBook();
  private lastFlush = Date.now();
  private lastSweep = 0;

  constructor(
    private readonly ctx: PlatformContext,
    private readonly owner: string,
    private readonly log: Logger,
  ) {}

  push(c: Change): void {
    this.changes.push(c);
  }

  /** Changes wait to be written. */
  get pending(): boolean {
    return this.changes.length > 0;
  }

  get statsDue(): boolean {
    return Date.now() - this.lastFlush >= STATS_FLUSH_MS;
  }

  /**
   * Every change seen since the last pass, with its event, and the restream statuses of `runs` that changed, in one
   * transaction; kept for the next pass if it fails. A run whose `Off` or `Error` is written is given to `forget`.
   */
  async write(runs: Iterable<ChannelRun>, forget: (run: ChannelRun) => void): Promise<void> {
    const { db } = this.ctx;
    const sweep = Date.now() - this.lastSweep >= ORPHAN_SWEEP_MS;
    const dirty = [...runs].filter((r) => r.restreamsDirty && !r.stopping);
    if (!this.changes.length && !sweep && !dirty.length) return;
    if (sweep) this.lastSweep = Date.now();
    const batch = this.changes.splice(0);
    for (const r of dirty) r.restreamsDirty = false;
    try {
      await db.transaction(async (tx) => {
        for (const c of batch) await writeChange(tx, this.owner, c);
        for (const r of dirty) {
          if (r.restreams)
            await tx
              .update(liveChannels)
              .set({ restreamStatus: r.restreams.statuses() })
              .where(and(eq(liveChannels.id, r.id), eq(liveChannels.leaseOwner, this.owner)));
        }
        for (const row of sweep ? await finishOrphanStops(tx) : []) {
          await closeOpenSessions(tx, row.id);
          await recordLiveEvent(tx, row.tenantId, 'live.channel.off', {
            id: row.id,
            status: 'Off',
            previousStatus: 'Stopping',
          });
        }
      });
    } catch (err) {
      this.changes.unshift(...batch);
      for (const r of dirty) r.restreamsDirty = true;
      throw err;
    }
    for (const c of batch) if ((c.kind === 'off' || c.kind === 'error') && c.run) forget(c.run);
  }

  async flushStats(): Promise<void> {
    this.lastFlush = Date.now();
    const rows = this.book.take();
    try {
      await recordChannelStats(this.ctx.db, rows);
    } catch (err) {
      this.book.giveBack(rows);
      this.log.warn({ err }, 'live statistics not written; kept for the next flush');
    }
  }
}
