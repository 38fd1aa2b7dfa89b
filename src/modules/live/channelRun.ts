import { mkdir, rename, rm } from 'node:fs/promises';
import { extname, join } from 'node:path';
import type { Logger } from '../../platform/logger.ts';
import type { PlatformContext } from '../../context.ts';
import { readObjectIfAny } from '../../storage/readObject.ts';
import { lookup } from 'node:dns/promises';
import { bareHost, blockedReason } from '../../platform/addressGuard.ts';
import { downloadToFile } from '../../platform/download.ts';
import { captionModel, type CaptionModel, type LiveRendition, type LiveWatermark } from '../../media/live/index.ts';
import { channelProtection } from './drm.ts';
import { renditionsOf } from './ladder.ts';
import type { InputLoss, InputSlot, LiveMedia, LivePipeline, LivePipelineEvent, LivePipelineStats, SrtRelay } from './media.ts';
import type { ChannelRow } from './present.ts';
import type { ChannelRestreams } from './restreams.ts';
import type { LiveSession } from './sessions.ts';
import { channelPrefix, checkpointKey } from './urls.ts';

const SLATE_MAX_BYTES = 20 * 1024 * 1024;
const SLATE_TYPES: Record<string, string> = { 'image/png': '.png', 'image/jpeg': '.jpg', 'image/jpg': '.jpg' };

/** One channel this process runs: its pipeline, and what the runner has recorded of it so far. */
export class ChannelRun {
  pipeline: LivePipeline | undefined;
  /** The status the runner last wrote or read. */
  status: ChannelRow['status'];
  streamKey: string;
  whitelistCidr: string | undefined;
  inputConnected = false;
  /** The inputs whose encoder is connected now; the pipeline reads the primary when it has one, else the secondary. */
  readonly slots = new Set<InputSlot>();
  /** The input the pipeline reads (null: none, the slate). */
  activeSlot: InputSlot | null = null;
  /** An SRT channel's listeners (one per input), relaying into the RTMP ingest. */
  relays: SrtRelay[] = [];
  /** The session on air (docs/decisions/live.md, "Sessions"): from the input's first segment until it has been gone for the reconnect window. */
  session: LiveSession | undefined;
  /** The first segment is out: `Starting` may turn `On`. */
  producing = false;
  stopping = false;
  /** The channel's restream destinations (none for a placeholder); their states are written when this is set. */
  restreams: ChannelRestreams | undefined;
  restreamsDirty = false;
  readonly workDir: string;
  private lastStats: LivePipelineStats | undefined;
  /** The pipeline after it stopped: its last counters are still to be sampled. */
  private stopped: LivePipeline | undefined;
  private starting: Promise<void> | undefined;
  /** Stopped, or stopping: a start still in progress makes nothing more. */
  private halted = false;

  constructor(
    public row: ChannelRow,
    private readonly ctx: PlatformContext,
    private readonly log: Logger,
  ) {
    this.status = row.status;
    this.streamKey = row.streamKey;
    this.whitelistCidr = row.input.whitelistCidr;
    this.workDir = join(ctx.config.live.workDir, row.id);
  }

  get id(): string {
    return this.row.id;
  }

  get tenantId(): string {
    return this.row.tenantId;
  }

  get pushed(): boolean {
    return this.row.input.type === 'RTMP_PUSH';
  }

  /** The marks of a watermark-protected channel, as the module that plans them answers (undefined: no video). */
  private async channelMarks(ladder: LiveRendition[]): Promise<LiveWatermark | undefined> {
    const plan = this.ctx.catalogue.channelMarks;
    // A protected channel never runs unmarked: without the watermarking module it does not start.
    if (!plan) throw new Error('the channel is watermark protected but no module plans live watermark marks');
    const { segmentSeconds, watermarkRungs } = this.ctx.config.live;
    return plan(this.ctx, { tenantId: this.tenantId, channelId: this.id, title: this.row.name, ladder, segmentSeconds, rungCount: watermarkRungs });
  }

  /** The input-loss picture: the tenant's slate, fetched through the address guard, or the colour. */
  private async inputLoss(): Promise<InputLoss> {
    const loss = this.row.input.inputLoss;
    if (loss.type === 'SLATE' && loss.imageSlateUri) {
      const fetched = join(this.workDir, 'slate.download');
      const contentType = await downloadToFile(loss.imageSlateUri, fetched, {
        allowPrivate: this.ctx.config.fetchAllowPrivate,
        setting: 'MEDIAPLANE_FETCH_ALLOW_PRIVATE',
        maxBytes: SLATE_MAX_BYTES,
        timeoutMs: 30_000,
      });
      // ffmpeg's image reader chooses its decoder by the file's extension.
      const extension = SLATE_TYPES[contentType.split(';')[0].trim().toLowerCase()] ?? extname(new URL(loss.imageSlateUri).pathname).toLowerCase();
      if (!Object.values(SLATE_TYPES).includes(extension))
        throw new Error(`input.inputLoss.imageSlateUri: not a PNG or JPEG picture (${contentType || 'no content type'})`);
      const imagePath = join(this.workDir, `slate${extension}`);
      await rename(fetched, imagePath);
      return { type: 'SLATE', imagePath };
    }
    return { type: 'COLOR', color: loss.color ?? '#000000' };
  }

  /** The speech model of the channel's caption language; none (and a warning) if it was uninstalled since. */
  private captionModel(): CaptionModel | undefined {
    const code = this.row.aiLiveCaptioningLanguageCode;
    if (!code) return undefined;
    const model = captionModel(this.ctx.config.live.captionModelsDir, code);
    if (!model) this.log.warn({ language: code }, "no speech model is installed for the channel's caption language; it runs without captions");
    return model;
  }

  /** Starts the pipeline; a stop that comes meanwhile waits for it and then stops what it made. */
  start(media: LiveMedia, onEvent: (e: LivePipelineEvent) => void, numbers?: { firstSequence: number; firstRun: number }): Promise<void> {
    this.starting = this.startPipeline(media, onEvent, numbers);
    return this.starting;
  }

  private async startPipeline(media: LiveMedia, onEvent: (e: LivePipelineEvent) => void, numbers?: { firstSequence: number; firstRun: number }): Promise<void> {
    if (this.halted) return;
    await rm(this.workDir, { recursive: true, force: true });
    await mkdir(this.workDir, { recursive: true });
    const { config, store } = this.ctx;
    const prefix = channelPrefix(this.tenantId, this.id);
    const audioOnly = this.row.transmissionType === 'Audio';
    const vertical = this.row.endpoints.some((e) => e.hasVerticalOrientation);
    const inputLoss = await this.inputLoss();
    // A pulled input (input.mp4Sources) is set at once, looped; a pushed one when the encoder connects.
    const source = this.row.input.type === 'MP4_FILE' ? this.row.input.mp4Sources[0] : undefined;
    if (source && !config.fetchAllowPrivate) await assertPublic(source.url);
    const protection = await channelProtection(this.ctx, this.tenantId, this.id, this.row.endpoints, this.row.drmKeyMode);
    const renditions = audioOnly ? [] : renditionsOf(this.row.qualities, vertical);
    // isWatermarkProtected: the channel is also a watermarking asset; its pipeline encodes two marked variants of each
    // marked rung, the rungs and pattern chosen by the module that owns watermarking (platform/channelMarks.ts).
    const watermark = this.row.isWatermarkProtected ? await this.channelMarks(renditions) : undefined;
    if (this.halted) return;
    this.pipeline = media.createLivePipeline({
      channelId: this.id,
      workDir: join(this.workDir, 'pipeline'),
      renditions,
      watermark,
      audioOnly,
      segmentSeconds: config.live.segmentSeconds,
      windowSegments: config.live.windowSegments,
      // ReducedLatency: LL-HLS parts and LL-DASH chunks from the same encode (docs/decisions/live.md, "Low latency").
      partSeconds: this.row.latency === 'ReducedLatency' ? Math.min(config.live.partSeconds, config.live.segmentSeconds / 2) : undefined,
      retentionSeconds: config.live.retentionSeconds,
      ...numbers,
      inputLoss,
      protection,
      publish: (key, body, contentType) => store.putObject(prefix + key, body, contentType),
      remove: async (keys) => void (await Promise.all(keys.map((k) => store.delete(prefix + k)))),
      log: this.log,
      onEvent,
      captions: this.captionModel(),
      checkpoint: {
        load: async () => {
          const key = checkpointKey(this.tenantId, this.id);
          return readObjectIfAny(store, key);
        },
        save: (body) => store.putObject(checkpointKey(this.tenantId, this.id), body, 'application/json'),
      },
    });
    await this.pipeline.start();
    if (source) {
      const url = withCredentials(source.url, source.username, source.password);
      this.pipeline.setInput({ url, loop: true });
      this.restreams?.setSource({ url, loop: true });
    }
  }

  /** `end`: the channel stops (not dropped, not handed over): its playlists end, its MPD turns static. */
  async stop(end = false): Promise<void> {
    this.halted = true;
    // A pipeline still starting waits for its first segment, which an encoder that never produces one would never
    // give: stopping it ends that start.
    await this.pipeline?.stop({ end });
    await this.starting?.catch(() => {});
    await this.restreams?.stop();
    await this.stopRelays();
    const pipeline = this.pipeline;
    this.pipeline = undefined;
    await pipeline?.stop({ end });
    this.stopped = pipeline;
    await rm(this.workDir, { recursive: true, force: true }).catch(() => {});
  }

  async stopRelays(): Promise<void> {
    const relays = this.relays;
    this.relays = [];
    await Promise.all(relays.map((r) => r.stop()));
  }

  /** Counters since the last call: what the pipeline did in the pass that just ended. */
  sample(): { stats: LivePipelineStats; delta: { droppedFrames: number; segmentsWritten: number; inputConnectedSeconds: number } } | undefined {
    const stats = (this.pipeline ?? this.stopped)?.stats();
    if (!stats) return undefined;
    const last = this.lastStats;
    this.lastStats = stats;
    const diff = (a: number, b: number | undefined) => Math.max(0, a - (b ?? 0));
    return {
      stats,
      delta: {
        droppedFrames: diff(stats.droppedFrames, last?.droppedFrames),
        segmentsWritten: diff(stats.segmentsWritten, last?.segmentsWritten),
        inputConnectedSeconds: diff(stats.inputConnectedSeconds, last?.inputConnectedSeconds),
      },
    };
  }
}

/**
 * ffmpeg fetches an mp4 source itself: its host must resolve to public addresses only, as for every URL the platform
 * fetches for a tenant (platform/addressGuard.ts). Checked when the channel starts.
 */
async function assertPublic(raw: string): Promise<void> {
  const host = bareHost(new URL(raw));
  const addresses = await lookup(host, { all: true });
  for (const a of addresses) {
    const reason = blockedReason(a.address);
    if (reason) throw new Error(`input.mp4Sources: refused: ${host} resolves to ${reason}; set MEDIAPLANE_FETCH_ALLOW_PRIVATE to allow`);
  }
}

/** HTTP basic credentials of an mp4 source, as ffmpeg's http protocol takes them. Never logged. */
function withCredentials(raw: string, username?: string, password?: string): string {
  if (!username && !password) return raw;
  const url = new URL(raw);
  url.username = username ?? '';
  url.password = password ?? '';
  return url.toString();
}
