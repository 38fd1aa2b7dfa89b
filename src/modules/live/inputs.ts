import { eq } from 'drizzle-orm';
import type { Logger } from '../../platform/logger.ts';
import type { PlatformContext } from '../../context.ts';
import type { ChannelRun } from './channelRun.ts';
import type { InputSlot, LiveMedia, RtmpIngest } from './media.ts';
import { liveChannels } from './tables.ts';
import { slotsOf, startSrtInputs } from './srtInputs.ts';
import { SECONDARY_SUFFIX, setBoundRtmpPort } from './urls.ts';
import { addressInCidr } from './validate.ts';

/** What the inputs need of the runner: the channels it runs, and where an input connected or lost is recorded. */
export interface InputsHost {
  run(channelId: string): ChannelRun | undefined;
  runByKey(streamKey: string): ChannelRun | undefined;
  setInputState(run: ChannelRun, connected: boolean): void;
  /** Runs a pass of the runner that begins after this call: a channel started since the last one is claimed. */
  catchUp(): Promise<void>;
  /** This process's name in lease rows. */
  readonly owner: string;
}

type Verdict = { channelId: string; slot: InputSlot } | { refused: string };

/**
 * The input side of the live role: this process's RTMP ingest (opened when the runner starts; see `ChannelRunner.start`), the key
 * check at connect, the SRT listeners that relay into it, and which of a channel's inputs its pipeline reads.
 */
export class ChannelInputs {
  private ingest: RtmpIngest | undefined;
  private ingestStarting: Promise<RtmpIngest> | undefined;

  constructor(
    private readonly ctx: PlatformContext,
    private readonly media: LiveMedia,
    private readonly log: Logger,
    private readonly host: InputsHost,
  ) {}

  async ensureIngest(): Promise<RtmpIngest> {
    if (this.ingest) return this.ingest;
    this.ingestStarting ??= this.media
      .startRtmpIngest({
        host: this.ctx.config.live.rtmpHost,
        port: this.ctx.config.live.rtmpPort,
        log: this.log.child({ component: 'rtmp' }),
        authorize: (streamName, remoteAddress, how) => this.authorize(streamName, remoteAddress, how),
        onPublish: (channelId, slot) => {
          const run = this.host.run(channelId);
          if (!run || run.stopping) return;
          run.slots.add(slot);
          this.selectInput(run);
        },
        onUnpublish: (channelId, slot) => {
          const run = this.host.run(channelId);
          if (!run || run.stopping) return;
          run.slots.delete(slot);
          this.selectInput(run);
        },
      })
      .then((ingest) => {
        this.ingest = ingest;
        if (!this.ctx.config.live.rtmpPort) setBoundRtmpPort(ingest.port);
        return ingest;
      })
      .catch((err) => {
        this.ingestStarting = undefined;
        throw err;
      });
    return this.ingestStarting;
  }

  /**
   * At connect: the channel this process runs under that stream name (the key: its primary input; the key and
   * SECONDARY_SUFFIX: its secondary, for DoubleInput), if the address may push to it. An SRT channel takes only its own
   * relays (the SRT listeners, which publish from loopback with this process's relay token). A channel run here is
   * answered from memory. A key this process does not run yet is looked up: a channel started a moment ago (`Starting`,
   * not yet claimed by a pass) is claimed at once and accepted, so an encoder may connect from the moment of `start`;
   * otherwise the refusal says why (unknown key, channel off, stopping, run by another live process).
   */
  async authorize(streamName: string, remoteAddress: string, how: { relayed: boolean } = { relayed: false }): Promise<Verdict> {
    if (!how.relayed) await this.committedWhitelist(streamName);
    const now = this.check(streamName, remoteAddress, how);
    if (now !== 'not here') return now;
    const key = streamName.endsWith(SECONDARY_SUFFIX) ? [streamName, streamName.slice(0, -SECONDARY_SUFFIX.length)] : [streamName];
    const row = await this.channelOf(key);
    if (!row) return { refused: 'unknown stream key' };
    if (row.status === 'Off' || row.status === 'Error') return { refused: `the channel is ${row.status}: start it, then connect` };
    if (row.status === 'Stopping') return { refused: 'the channel is stopping' };
    if (row.leaseOwner && row.leaseOwner !== this.host.owner) return { refused: 'the channel runs on another live process' };
    // Started a moment ago: claimed by a pass that begins now, then known here.
    await this.host.catchUp();
    const later = this.check(streamName, remoteAddress, how);
    if (later !== 'not here') return later;
    return { refused: 'the channel is not run by this live process (none has taken it yet, or this one is full); try again' };
  }

  /** The channel row of one of these stream keys (a primary key, or a key that ends like a secondary's). */
  private async channelOf(keys: string[]): Promise<{ status: string; leaseOwner: string | null } | undefined> {
    for (const k of keys) {
      const [row] = await this.ctx.db
        .select({ status: liveChannels.status, leaseOwner: liveChannels.leaseOwner })
        .from(liveChannels)
        .where(eq(liveChannels.streamKey, k))
        .limit(1);
      if (row) return row;
    }
    return undefined;
  }

  /** The whitelist as committed: a PATCH applies to the next connect at once, not after the runner's next pass. */
  private async committedWhitelist(streamName: string): Promise<void> {
    const run =
      this.host.runByKey(streamName) ?? (streamName.endsWith(SECONDARY_SUFFIX) ? this.host.runByKey(streamName.slice(0, -SECONDARY_SUFFIX.length)) : undefined);
    if (!run) return;
    const [row] = await this.ctx.db.select({ input: liveChannels.input }).from(liveChannels).where(eq(liveChannels.id, run.id));
    if (row) run.whitelistCidr = row.input.whitelistCidr;
  }

  /** The check from memory; `not here` when this process runs no channel under that name now. */
  private check(streamName: string, remoteAddress: string, how: { relayed: boolean }): Verdict | 'not here' {
    let run = this.host.runByKey(streamName);
    let slot: InputSlot = 'primary';
    if (!run && streamName.endsWith(SECONDARY_SUFFIX)) {
      run = this.host.runByKey(streamName.slice(0, -SECONDARY_SUFFIX.length));
      slot = 'secondary';
    }
    if (!run) return 'not here';
    if (run.stopping) return { refused: 'the channel is stopping' };
    if (!slotsOf(run.row).includes(slot)) return { refused: 'the channel has no secondary input (redundancy is SingleInput)' };
    if (run.row.input.transportInputProtocol === 'SRT' && !how.relayed) return { refused: 'the channel takes SRT, not RTMP' };
    if (!how.relayed && run.whitelistCidr && !addressInCidr(remoteAddress, run.whitelistCidr)) {
      return {
        refused: `${remoteAddress} is outside the channel's input.whitelistCidr`,
      };
    }
    return { channelId: run.id, slot };
  }

  /**
   * Redundant inputs: the pipeline reads the primary whenever its encoder is connected, else the secondary, else
   * nothing (the slate). It always plays the channel's programme (the ingest's `programmeUrl`), so a switch between
   * the two inputs happens inside the running encode (the ingest continues the programme on the other input at its
   * next key frame); only the slate, and back from it, is a new run. Restreams copy the selected input itself.
   */
  selectInput(run: ChannelRun): void {
    const ingest = this.ingest;
    const slot = (['primary', 'secondary'] as const).find((s) => run.slots.has(s) && ingest?.inputUrl(run.id, s)) ?? null;
    if (!ingest || !slot) {
      if (run.activeSlot) this.log.info({ channelId: run.id, from: run.activeSlot }, 'live input lost');
      run.activeSlot = null;
      ingest?.select(run.id, null);
      run.pipeline?.setInput(null);
      run.restreams?.setSource(null);
      this.host.setInputState(run, false);
      return;
    }
    if (run.activeSlot !== slot) this.log.info({ channelId: run.id, from: run.activeSlot, to: slot }, 'live input selected');
    run.activeSlot = slot;
    ingest.select(run.id, slot);
    run.pipeline?.setInput({
      url: ingest.programmeUrl(run.id),
      bytesReceived: () => ingest.programmeBytes(run.id),
      framesReceived: () => ingest.programmeFrames(run.id),
    });
    run.restreams?.setSource({ url: ingest.inputUrl(run.id, slot)! });
    this.host.setInputState(run, true);
  }

  /** An SRT channel's listeners, once its pipeline runs (they publish into the ingest as the encoder's relay). */
  startRelays(run: ChannelRun): void {
    if (!this.ingest || run.stopping || run.relays.length) return;
    try {
      run.relays = startSrtInputs(this.media, this.ingest, this.ctx.config, run.row, this.log.child({ channelId: run.id }));
    } catch (err) {
      this.log.error({ channelId: run.id, err }, 'SRT listeners could not start');
    }
  }

  /** Disconnects the channel's encoders (key rotated, protocol changed). */
  kick(channelId: string): void {
    this.ingest?.kick(channelId);
  }

  /** The channel no longer runs here (stopped, dropped): its encoders are disconnected, its programme ends. */
  release(channelId: string): void {
    this.ingest?.kick(channelId);
    this.ingest?.forget(channelId);
  }

  async close(): Promise<void> {
    // One still opening (the runner opens it at its start) is closed once open.
    const ingest = this.ingest ?? (await this.ingestStarting?.catch(() => undefined));
    await ingest?.close();
    if (!this.ctx.config.live.rtmpPort) setBoundRtmpPort(undefined);
  }
}
