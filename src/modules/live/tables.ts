import { boolean, doublePrecision, index, integer, jsonb, pgTable, primaryKey, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { createdAt, dateTime, modifiedAt } from '../../db/columns.ts';
import { leaseColumns } from '../../db/lease.ts';
import { tenants } from '../../db/tenants.ts';

/** A source pulled as the channel's input (`input.mp4Sources[]`); the password is a secret, masked on every read. */
export interface Mp4SourceRow {
  url: string;
  username?: string;
  password?: string;
}

export interface InputLossRow {
  type: 'COLOR' | 'SLATE';
  imageSlateUri?: string;
  color?: string;
}

export interface InputRow {
  type: string;
  mp4Sources: Mp4SourceRow[];
  whitelistCidr?: string;
  inputLoss: InputLossRow;
  transportInputProtocol?: string;
}

export interface ChannelEndpointRow {
  type: string;
  hasVerticalOrientation: boolean;
  isDrmProtected: boolean;
  /**
   * `DashDrm`: the Common Encryption scheme, `cenc` (absent) or `cbcs`, as a VOD preset's `protection.scheme`. `HlsDrm`:
   * `cbcs` is SAMPLE-AES over the `cbcs` copies; absent, AES-128.
   */
  scheme?: 'cenc' | 'cbcs';
  /** A protected endpoint: the channel's DRM key id (the channel id is the content id). */
  keyId?: string;
}

/** `resolution` is the label (`720p`) or the object form; `height` is what both mean, resolved once at write time. */
export interface QualityRow {
  resolution: string | { intValue: number; qualityType?: string };
  height: number;
  /** Absent: the encoder's own rate, up to DEFAULT_FRAME_RATE (docs/decisions/live.md, "Frame rate"). */
  frameRate?: number;
}

export interface RestreamRow {
  id: string;
  protocol: 'RTMP';
  destination: string;
  label?: string;
  rtmpDestinations: { url: string; streamKey: string }[];
  hasVerticalOrientation?: boolean;
}

/**
 * `autoRecord` (docs/decisions/recorder.md, "Automatic recording"): every on-air session of the channel becomes a
 * recording with catch-up, and these archive and outputs, in the Recorder's own shapes (dates as ISO strings).
 */
export interface AutoRecordRow {
  enabled: boolean;
  archive: { enabled: boolean; delaySeconds: number; public: boolean; expirationDate: string | null };
  outputs: { preset: string; expirationDate: string | null }[];
}

export const AUTO_RECORD_OFF: AutoRecordRow = {
  enabled: false,
  archive: { enabled: false, delaySeconds: 0, public: false, expirationDate: null },
  outputs: [],
};

export type ChannelStatus = 'Off' | 'Starting' | 'On' | 'Stopping' | 'Error';

export const liveChannels = pgTable(
  'live_channels',
  {
    id: uuid('id').primaryKey(),
    tenantId: uuid('tenant_id')
      .notNull()
      .references(() => tenants.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    status: text('status').$type<ChannelStatus>().notNull().default('Off'),
    /** What the owner last saw of the input and encoder (`InputConnected`, `InputLost`, `EncoderFailed: ...`). */
    internalStatus: text('internal_status'),
    redundancy: text('redundancy').notNull().default('SingleInput'),
    latency: text('latency').notNull().default('NormalLatency'),
    activationMode: text('activation_mode').notNull().default('Manual'),
    transmissionType: text('transmission_type').notNull().default('Video'),
    environment: text('environment').notNull().default('ManagedLive'),
    packagingVersion: text('packaging_version').notNull().default('V1'),
    isWatermarkProtected: boolean('is_watermark_protected').notNull().default(false),
    aiLiveCaptioningLanguageCode: text('ai_live_captioning_language_code'),
    drmKeyMode: text('drm_key_mode'),
    broadcastStandard: text('broadcast_standard'),
    automationDisabled: boolean('automation_disabled').notNull().default(false),
    input: jsonb('input').$type<InputRow>().notNull(),
    endpoints: jsonb('endpoints').$type<ChannelEndpointRow[]>().notNull(),
    qualities: jsonb('qualities').$type<QualityRow[]>().notNull(),
    restreams: jsonb('restreams').$type<RestreamRow[]>().notNull().default([]),
    /** What the owner last saw of each restream destination (restream id → states by destination index). */
    restreamStatus: jsonb('restream_status').$type<Record<string, { status: string; lastError: string | null }[]>>().notNull().default({}),
    metadata: jsonb('metadata').$type<Record<string, string>>().notNull().default({}),
    accessPolicyId: uuid('access_policy_id'),
    autoRecord: jsonb('auto_record').$type<AutoRecordRow>().notNull().default(AUTO_RECORD_OFF),
    /**
     * The RTMP stream key: a secret the tenant must be able to read back (it is part of `transportPrimaryIngestUrl`),
     * so it is kept as it is, like the webhook signing secret; never logged. Unique so that a key names one channel.
     */
    streamKey: text('stream_key').notNull(),
    /**
     * An SRT channel's pair of listener ports (this one: primary input, the next: secondary), taken from
     * MEDIAPLANE_SRT_PORT_MIN..MAX when the channel turns SRT and kept for its life, so its ingest URLs never change.
     */
    srtPort: integer('srt_port'),
    /** The live process that runs the channel and until when its claim holds, on the database's clock. */
    ...leaseColumns(),
    createDate: createdAt(),
    lastModificationDate: modifiedAt(),
  },
  (t) => [
    index('live_channels_tenant_created').on(t.tenantId, t.createDate),
    uniqueIndex('live_channels_stream_key').on(t.streamKey),
    uniqueIndex('live_channels_srt_port').on(t.srtPort),
    index('live_channels_status_lease').on(t.status, t.leaseUntil),
  ],
);

/** One value of one metric of one channel for one minute, written by the channel's owner in batches. */
export const liveChannelStats = pgTable(
  'live_channel_stats',
  {
    channelId: uuid('channel_id')
      .notNull()
      .references(() => liveChannels.id, { onDelete: 'cascade' }),
    tenantId: uuid('tenant_id').notNull(),
    metric: text('metric').notNull(),
    minute: dateTime('minute').notNull(),
    value: doublePrecision('value').notNull(),
  },
  (t) => [primaryKey({ columns: [t.channelId, t.metric, t.minute] })],
);
