import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from '../../../platform/logger.ts';
import type { PlatformContext } from '../../../context.ts';
import { listenForCommits } from '../../../platform/wakeup.ts';
import { ChannelRun } from '../channelRun.ts';
import { claimChannels, releaseLeases, renewLeases } from '../lease.ts';
import { ChannelInputs } from '../inputs.ts';
import { liveMedia, type LiveMedia } from '../media.ts';
import type { ChannelRow } from '../present.ts';
import { ChannelRestreams } from '../restreams.ts';
import { adoptSession } from '../sessions.ts';
import { TimelineWriter } from '../timelineWriter.ts';
import { LIVE_RUNNER_CHANNEL } from '../wake.ts';
import { RunnerBatch } from './batch.ts';
import { onPipelineEvent, setInputState, type PipelineEventSink } from './pipelineEvents.ts';

/** A change worth writing soon (the first segment, an input lost) is written within this, not at the next pass. */
const SOON_MS = 50;

export interface RunnerOptions {
  /** The media layer, `src/media/live/` by default; tests may pass a stand-in. */
  media?: LiveMedia;
  /** This process's name in lease rows; by default stable across restarts of the same live process. */
  owner?: string;
  log?: Logger;
}

/**
 * The live role's channel runner: a periodic pass claims the channels that should run and that no live process holds
 * (a lease on the database's clock), renews its leases, starts and stops each channel's pipeline, turns `Starting`
 * into `On` at the first segment and `Stopping` into `Off`, and writes status changes with their events, input
 * connected/lost, and per-minute statistics, in batches. The ingest's key check and the segments never wait on it.
 */
export class ChannelRunner {
  private readonly runs = new Map<string, ChannelRun>();
  private readonly byKey = new Map<string, ChannelRun>();
  private readonly background = new Set<Promise<void>>();
  /** Runs of a channel still stopping here: a new run of the same channel waits for them (they share a work directory). */
  private readonly ending = new Map<string, Promise<void>>();
  private readonly inputs: ChannelInputs;
  private timer: NodeJS.Timeout | undefined;
  private passing: Promise<void> | undefined;
  /** A change committed while a pass ran (which may have read the channels before it): another pass follows at once. */
  private woken = false;
  private closed = false;
  readonly owner: string;
  private readonly log: Logger;
  private readonly timeline: TimelineWriter;
  /** The changes and statistics written in batches (runner/batch.ts). */
  private readonly batch: RunnerBatch;
  /** Where the pipelines' events go (runner/pipelineEvents.ts). */
  private readonly sink: PipelineEventSink;

  constructor(
    private readonly ctx: PlatformContext,
    private readonly media: LiveMedia,
    opts: RunnerOptions = {},
  ) {
    const { rtmpPort } = ctx.config.live;
    this.owner = opts.owner ?? (rtmpPort ? `live@${hostname()}:${rtmpPort}` : `live@${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`);
    this.log = (opts.log ?? ctx.log).child({
      module: 'live',
      owner: this.owner,
    });
    this.timeline = new TimelineWriter(ctx, this.log.child({ component: 'timeline' }));
    this.batch = new RunnerBatch(ctx, this.owner, this.log);
    this.sink = { timeline: this.timeline, push: (c) => this.batch.push(c), poke: () => this.poke() };
    this.inputs = new ChannelInputs(ctx, media, this.log, {
      run: (id) => this.runs.get(id),
      runByKey: (key) => this.byKey.get(key),
      setInputState: (run, connected) => setInputState(this.sink, run, connected),
      catchUp: () => this.catchUp(),
      owner: this.owner,
    });
  }

  start(): void {
    this.schedule(0);
    // The RTMP port is open from the start, so that an encoder may connect from the moment its channel is started (the
    // key check claims a channel started since the last pass). Not with MEDIAPLANE_LIVE_ACTIVE_STANDBY: there an open
    // port tells the balancer which process runs channels, so it opens with the first channel (docs/decisions/live.md).
    if (!this.ctx.config.live.activeStandby) {
      this.inputs.ensureIngest().catch((err) => this.log.error({ err }, 'the RTMP ingest could not open; retried when a channel runs'));
    }
  }

  /** A pass that begins after this call (one running now may have read the channels before a start). */
  private async catchUp(): Promise<void> {
    if (this.closed) return;
    await this.passing;
    await this.pass();
  }

  private schedule(ms: number): void {
    if (this.closed) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.pass(), ms);
  }

  /** A change to act on was committed (LIVE_RUNNER_CHANNEL): a pass that begins after it, now. */
  wake(): void {
    if (this.closed) return;
    if (this.passing) this.woken = true;
    else this.schedule(0);
  }

  /** Runs a pass soon: something happened that should be written without waiting for the next one. */
  private poke(): void {
    if (!this.passing) this.schedule(SOON_MS);
  }

  private track(work: () => Promise<void>): void {
    const p = work().catch((err) => this.log.error({ err }, 'live channel task failed'));
    this.background.add(p);
    void p.finally(() => this.background.delete(p));
  }

  /** One pass; exported for tests that drive the runner step by step. */
  async pass(): Promise<void> {
    if (this.passing) return this.passing;
    this.passing = this.passOnce()
      .catch((err) => this.log.warn({ err }, 'live pass failed; retrying at the next one'))
      .finally(() => {
        this.passing = undefined;
        const again = this.woken;
        this.woken = false;
        this.schedule(again ? 0 : this.batch.pending ? SOON_MS : this.ctx.config.live.pollMs);
      });
    return this.passing;
  }

  private async passOnce(): Promise<void> {
    if (this.closed) return;
    const { db, config } = this.ctx;
    const leaseMs = config.live.leaseSeconds * 1000;
    const held = await renewLeases(db, this.owner, leaseMs);
    const heldIds = new Set(held.map((r) => r.id));
    for (const run of this.runs.values()) {
      // Deleted, or the lease was lost (this process stalled past it): another process may run it now; stop here.
      if (!heldIds.has(run.id) && !run.stopping) this.drop(run, 'lease lost');
    }
    const giveBack: string[] = [];
    for (const row of held) {
      const run = this.runs.get(row.id);
      if (row.status === 'Stopping') {
        if (!run) this.stop(row, this.placeholder(row));
        else if (!run.stopping) this.stop(row, run);
      } else if (row.status === 'Starting' || row.status === 'On') {
        if (run) this.refresh(run, row);
        else this.launch(row);
      } else if (!run) {
        giveBack.push(row.id);
      }
    }
    if (giveBack.length) await releaseLeases(db, this.owner, giveBack);
    const claimed = await claimChannels(db, this.owner, leaseMs, config.live.maxChannels - this.runs.size, config.live.activeStandby);
    for (const row of claimed) {
      // Claimed while still running here: the lease ran out between this pass's renewal and its claim, and another
      // process may have held the channel meanwhile. Start afresh from the timeline, as after any lost lease.
      const lost = heldIds.has(row.id) ? undefined : this.runs.get(row.id);
      if (lost && !lost.stopping) this.drop(lost, 'lease lost');
      if (!this.runs.has(row.id)) this.launch(row);
    }
    this.endQuietSessions();
    await this.batch.write(this.runs.values(), (run) => this.forget(run));
    let connected = 0;
    for (const run of this.runs.values()) {
      this.batch.book.sample(run);
      if (run.inputConnected) connected++;
    }
    this.ctx.metrics.setLiveChannels(connected, this.runs.size - connected);
    if (this.batch.statsDue) await this.batch.flushStats();
  }

  /** Sessions whose input has been gone for the reconnect window end where the input's last segment ended. */
  private endQuietSessions(): void {
    const windowMs = this.ctx.config.live.autoRecordReconnectSeconds * 1000;
    for (const run of this.runs.values()) {
      const session = run.session;
      if (!session || run.stopping || run.inputConnected || session.lostAt === undefined) continue;
      if (Date.now() - session.lostAt < windowMs) continue;
      this.batch.push({ kind: 'session', run, session, op: 'end' });
      run.session = undefined;
    }
  }

  private launch(row: ChannelRow): void {
    const log = this.log.child({ channelId: row.id });
    const run = new ChannelRun(row, this.ctx, log);
    run.restreams = new ChannelRestreams(this.media, {
      allowPrivate: this.ctx.config.live.restreamAllowPrivate,
      log: log.child({ component: 'restream' }),
      onChange: () => {
        run.restreamsDirty = true;
        this.poke();
      },
      onNotice: (notice) => {
        if (run.stopping) return;
        this.batch.push({ kind: 'restream', run, notice });
        this.poke();
      },
    });
    run.restreams.apply(row.restreams);
    this.runs.set(row.id, run);
    this.byKey.set(run.streamKey, run);
    this.log.info({ channelId: row.id, status: row.status }, 'running live channel');
    this.track(async () => {
      try {
        // The channel's previous run here (dropped when its lease was lost, then claimed again) is gone first.
        await this.ending.get(row.id);
        // A session another process (or this one, before it lost the lease) left on air goes on if the input comes back.
        run.session ??= await adoptSession(this.ctx, row.id);
        if (run.pushed) await this.inputs.ensureIngest();
        await run.start(this.media, (e) => onPipelineEvent(this.sink, run, e), await this.timeline.nextNumbers(row.id));
        // An encoder that connected while the pipeline was starting.
        if (run.slots.size && run.pushed) this.inputs.selectInput(run);
        if (run.pushed && !run.stopping) this.inputs.startRelays(run);
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        this.log.error({ channelId: row.id, err }, 'live channel could not start');
        // Kept (refusing encoders) until `Error` is written, so that no pass launches it again meanwhile.
        run.stopping = true;
        this.byKey.delete(run.streamKey);
        await run.stop().catch(() => {});
        this.batch.push({
          kind: 'error',
          row,
          run,
          message: `Could not start: ${message}`,
        });
        this.poke();
      }
    });
  }

  /** The row as the database has it now: a rotated key or a new whitelist applies to the next connect. */
  private refresh(run: ChannelRun, row: ChannelRow): void {
    // The channel turned SRT or back to RTMP: the encoder connected the other way goes, the listeners follow.
    const protocolChanged = row.input.transportInputProtocol !== run.row.input.transportInputProtocol || row.srtPort !== run.row.srtPort;
    run.row = row;
    run.status = row.status;
    run.whitelistCidr = row.input.whitelistCidr;
    // A PATCH of the restreams: only the destinations that changed start, stop or restart.
    run.restreams?.apply(row.restreams);
    if (row.streamKey !== run.streamKey) {
      this.byKey.delete(run.streamKey);
      run.streamKey = row.streamKey;
      this.byKey.set(run.streamKey, run);
      // The encoder connected with the old key: it must come back with the new one.
      this.inputs.kick(run.id);
      void run.stopRelays().then(() => this.inputs.startRelays(run));
    } else if (protocolChanged) {
      this.inputs.kick(run.id);
      void run.stopRelays().then(() => this.inputs.startRelays(run));
    }
  }

  private stop(row: ChannelRow, run: ChannelRun): void {
    run.stopping = true;
    this.byKey.delete(run.streamKey);
    this.inputs.release(run.id);
    this.track(async () => {
      await this.end(run, true);
      this.batch.book.sample(run);
      // The session ends with the channel, where the input's last segment (now published) ended.
      if (run.session) this.batch.push({ kind: 'session', run, session: run.session, op: 'end' });
      run.session = undefined;
      // Forgotten once `Off` is written: until then a pass sees it stopping and leaves it alone.
      this.batch.push({ kind: 'off', row, run });
      this.poke();
    });
  }

  /** Stops running a channel here without writing anything: it is someone else's now, or gone. */
  private drop(run: ChannelRun, why: string): void {
    this.log.warn({ channelId: run.id }, `live channel dropped: ${why}`);
    run.stopping = true;
    this.forget(run);
    this.inputs.release(run.id);
    this.track(async () => {
      await this.end(run);
      this.batch.book.sample(run);
    });
  }

  /** Stops a run; until it has, a new run of its channel in this process waits (its cleanup would remove their files). */
  private end(run: ChannelRun, endStream = false): Promise<void> {
    const ended = run.stop(endStream);
    const settled = ended.catch(() => {});
    this.ending.set(run.id, settled);
    void settled.finally(() => {
      if (this.ending.get(run.id) === settled) this.ending.delete(run.id);
    });
    return ended;
  }

  /** A channel this process holds but does not run (its previous incarnation did): stopped by writing `Off`. */
  private placeholder(row: ChannelRow): ChannelRun {
    const run = new ChannelRun(row, this.ctx, this.log);
    run.stopping = true;
    this.runs.set(row.id, run);
    return run;
  }

  private forget(run: ChannelRun): void {
    if (this.runs.get(run.id) === run) this.runs.delete(run.id);
    if (this.byKey.get(run.streamKey) === run) this.byKey.delete(run.streamKey);
  }

  /** The ingest's key check at connect (see ChannelInputs.authorize). */
  authorize(streamName: string, remoteAddress: string, how: { relayed: boolean } = { relayed: false }): ReturnType<ChannelInputs['authorize']> {
    return this.inputs.authorize(streamName, remoteAddress, how);
  }

  /** Stops every pipeline and gives the leases back: the channels stay `On`, and another live process takes them. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    await this.passing;
    const runs = [...this.runs.values()];
    for (const run of runs) {
      run.stopping = true;
      this.forget(run);
    }
    await Promise.all(runs.map((run) => run.stop().catch((err) => this.log.warn({ err, channelId: run.id }, 'live pipeline did not stop cleanly'))));
    for (const run of runs) this.batch.book.sample(run);
    // The channels go on elsewhere: their sessions too, if the input comes back within the window (it counts from now).
    for (const run of runs) {
      const session = run.session;
      if (!session) continue;
      session.lostAt ??= Date.now();
      this.batch.push({ kind: 'session', run, session, op: 'lost' });
    }
    await Promise.all([...this.background]);
    await this.batch.write(this.runs.values(), (run) => this.forget(run)).catch((err) => this.log.warn({ err }, 'live changes not written at close'));
    await this.batch.flushStats();
    await this.timeline.close();
    await releaseLeases(this.ctx.db, this.owner).catch(() => {});
    await this.inputs.close();
  }
}

/** The `live` role's worker: runs channels until the platform closes. */
export async function startChannelRunner(ctx: PlatformContext, opts: RunnerOptions = {}): Promise<() => Promise<void>> {
  const runner = new ChannelRunner(ctx, opts.media ?? liveMedia, opts);
  // A start, a stop or a changed channel is acted on when it commits; the poll covers a missed notification.
  const unlisten = await listenForCommits(ctx, LIVE_RUNNER_CHANNEL, () => runner.wake());
  runner.start();
  return async () => {
    await unlisten();
    await runner.close();
  };
}
