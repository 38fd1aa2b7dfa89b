import { Type } from 'typebox';
import { ArrayQuery, DateRangeQuery } from '../../platform/filters.ts';
import { Paged, PagingQuery } from '../../platform/paging.ts';
import { DateTime, Metadata, ProtectionDetails, RecordingArchiveRequest, RecordingOutputRequest, Timestamp, Uuid } from '../../platform/schemas.ts';
import { fixedAfterCreation } from '../../platform/strictBodies.ts';

const Str = (maxLength = 256) => Type.String({ maxLength });
const Enum = <T extends string>(values: readonly T[]) => Type.Unsafe<T>({ type: 'string', enum: [...values], description: values.join(', ') });

const REDUNDANCY = ['SingleInput', 'DoubleInput'] as const;
const LATENCY = ['NormalLatency', 'ReducedLatency'] as const;
const ACTIVATION_MODE = ['EventBased', 'Manual'] as const;
const TRANSMISSION_TYPE = ['Video', 'Audio'] as const;
const ENVIRONMENT = ['ManagedLive', 'ManagedLiveAnywhere'] as const;
const PACKAGING_VERSION = ['V1', 'V2'] as const;
const INPUT_LOSS_TYPE = ['COLOR', 'SLATE'] as const;
/** Plain HLS and DASH; `HlsDrm` (AES-128 or SAMPLE-AES) and `DashDrm` (CENC) are encrypted with the DRM module's key. */
const ENDPOINT_TYPES = ['Hls', 'Dash', 'HlsDrm', 'DashDrm'] as const;

export const Mp4Source = Type.Object({
  url: Type.String({ minLength: 1, maxLength: 4096 }),
  username: Type.Optional(Str(256)),
  password: Type.Optional(Str(1024)),
});

const InputLoss = (typeRequired: boolean) =>
  Type.Object({
    type: typeRequired ? Enum(INPUT_LOSS_TYPE) : Type.Optional(Enum(INPUT_LOSS_TYPE)),
    imageSlateUri: Type.Optional(Type.String({ maxLength: 4096 })),
    color: Type.Optional(Type.String({ maxLength: 16, description: 'hex colour, #RRGGBB' })),
  });

const Input = (lossRequired: boolean) =>
  Type.Object({
    type: Type.Optional(Type.String({ maxLength: 64, description: 'RTMP_PUSH (the default) or MP4_FILE' })),
    mp4Sources: Type.Optional(Type.Array(Mp4Source, { maxItems: 10 })),
    whitelistCidr: Type.Optional(Type.String({ maxLength: 64 })),
    inputLoss: lossRequired ? InputLoss(true) : Type.Optional(InputLoss(false)),
    transportInputProtocol: Type.Optional(Type.String({ maxLength: 32, description: 'RTMP (default) or SRT' })),
  });

export const ChannelEndpointRequest = Type.Object({
  type: Enum(ENDPOINT_TYPES),
  hasVerticalOrientation: Type.Optional(Type.Boolean()),
  isDrmProtected: Type.Optional(Type.Boolean()),
  /** Encryption of a DRM endpoint, as a VOD preset's `protection.scheme`: `aes-128` (HlsDrm's default), `cenc` (DashDrm's default) or `cbcs` (HlsDrm: SAMPLE-AES). */
  scheme: Type.Optional(Enum(['aes-128', 'cenc', 'cbcs'] as const)),
});

export const Quality = Type.Object({
  resolution: Type.Optional(
    Type.Union([
      Type.String({ maxLength: 16, description: 'a label such as 360p, 720p, 1080p, 2160p' }),
      Type.Object({ intValue: Type.Integer({ minimum: 1, maximum: 100000 }), qualityType: Type.Optional(Str(32)) }),
    ]),
  ),
  frameRate: Type.Optional(
    Type.Number({ minimum: 1, maximum: 60, description: "frames per second, exactly; absent: the encoder's own rate, up to 30 (the default)" }),
  ),
});

const Restream = Type.Object({
  protocol: Enum(['RTMP'] as const),
  id: Type.String({ minLength: 1, maxLength: 128 }),
  destination: Type.String({ minLength: 1, maxLength: 256 }),
  label: Type.Optional(Str(256)),
  rtmpDestinations: Type.Array(
    Type.Object({ url: Type.String({ minLength: 1, maxLength: 4096 }), streamKey: Type.String({ minLength: 1, maxLength: 1024 }) }),
    { minItems: 1, maxItems: 10 },
  ),
  hasVerticalOrientation: Type.Optional(Type.Boolean()),
});
export const Restreams = Type.Array(Restream, { maxItems: 10 });

/**
 * Every on-air session of the channel recorded (docs/decisions/recorder.md, "Automatic recording"): `archive` and
 * `outputs[]` are a recording's own (POST /cvr/v1/recordings). On update, each field given replaces the stored one.
 */
const AutoRecord = Type.Object({
  enabled: Type.Optional(Type.Boolean({ description: 'record every session (default false)' })),
  archive: Type.Optional(RecordingArchiveRequest),
  outputs: Type.Optional(Type.Array(RecordingOutputRequest, { maxItems: 16 })),
});

const Common = {
  drmKeyMode: Type.Optional(
    Type.String({
      maxLength: 64,
      description: '`SingleKey`: one key for every track of the DRM endpoints; `AudioVideoKeys`: one for the video tracks, another for the audio track',
    }),
  ),
  broadcastStandard: Type.Optional(Type.String({ maxLength: 64 })),
  aiLiveCaptioningLanguageCode: Type.Optional(Type.Union([Type.String({ maxLength: 16 }), Type.Null()])),
  endpoints: Type.Optional(Type.Array(ChannelEndpointRequest, { maxItems: 8 })),
  qualities: Type.Optional(Type.Array(Quality, { maxItems: 8 })),
  restreams: Type.Optional(Restreams),
  autoRecord: Type.Optional(AutoRecord),
};

export const ChannelCreate = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 1024 }),
  redundancy: Type.Optional(Enum(REDUNDANCY)),
  latency: Type.Optional(Enum(LATENCY)),
  input: Input(true),
  activationMode: Type.Optional(Enum(ACTIVATION_MODE)),
  transmissionType: Type.Optional(Enum(TRANSMISSION_TYPE)),
  environment: Type.Optional(Enum(ENVIRONMENT)),
  packagingVersion: Type.Optional(Enum(PACKAGING_VERSION)),
  isWatermarkProtected: Type.Optional(Type.Boolean()),
  metadata: Type.Optional(Metadata),
  distributionInfo: Type.Optional(Type.Object({ accessPolicyId: Type.Optional(Type.Union([Uuid, Type.Null()])) })),
  ...Common,
});

export const ChannelPatch = Type.Object(
  {
    automationDisabled: Type.Optional(Type.Boolean()),
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 1024 })),
    input: Type.Optional(Input(false)),
    metadata: Type.Optional(Metadata),
    accessPolicyId: Type.Optional(Type.Union([Uuid, Type.Null()])),
    ...Common,
  },
  fixedAfterCreation('redundancy', 'latency', 'activationMode', 'transmissionType', 'environment', 'packagingVersion', 'isWatermarkProtected'),
);

const EndpointInfo = Type.Object({
  id: Type.String(),
  accessType: Type.String(),
  format: Type.String(),
  url: Type.String(),
  protection: Type.String({ description: '`None`, `Aes128` (HlsDrm, AES-128) or `ClearKey` (HlsDrm SAMPLE-AES, DashDrm: EME ClearKey)' }),
  protectionDetails: Type.Optional(ProtectionDetails),
  type: Type.Optional(Type.String({ description: 'endpoint type of a protected endpoint: `HlsDrm` or `DashDrm`' })),
  isDrmProtected: Type.Optional(Type.Boolean()),
  drmKeyMode: Type.Optional(
    Type.String({
      description: '`SingleKey`: one key for every track; `AudioVideoKeys`: video and audio keys (`protectionDetails.keyIds`: video, then audio)',
    }),
  ),
  manifest: Type.String(),
  hasVerticalOrientation: Type.Boolean(),
});

export const Channel = Type.Object({
  id: Type.String(),
  name: Type.String(),
  endpoints: Type.Optional(Type.Array(EndpointInfo)),
  archiveEndpointIds: Type.Array(Type.String()),
  transcodeEndpointId: Type.Union([Type.String(), Type.Null()]),
  cdn: Type.Object({ enabled: Type.Boolean() }),
  inputs: Type.Optional(
    Type.Array(
      Type.Object({
        id: Type.String(),
        type: Type.String(),
        destinations: Type.Array(Type.Object({ url: Type.String() })),
        details: Type.Object({ securityGroupIps: Type.Array(Type.String()) }),
      }),
    ),
  ),
  encoding: Type.Object({ preset: Type.String(), pipelines: Type.Integer() }),
  status: Type.String(),
  internalStatus: Type.Union([Type.String(), Type.Null()]),
  metadata: Metadata,
  createDate: Timestamp,
  lastModificationDate: Timestamp,
  automationDisabled: Type.Boolean(),
  distribution: Type.Object({ accessPolicyId: Type.Union([Type.String(), Type.Null()]), accessPolicyName: Type.Union([Type.String(), Type.Null()]) }),
});

export const ChannelUpdated = Type.Object({
  id: Type.String(),
  endpoints: Type.Array(EndpointInfo),
  archiveEndpoints: Type.Array(EndpointInfo),
});

export const ChannelListQuery = Type.Object({
  ...PagingQuery,
  ...DateRangeQuery,
  ids: Type.Optional(ArrayQuery),
  includeCloudData: Type.Optional(Type.Boolean({ default: true })),
});
export const ChannelList = Paged(Channel);

export const ChannelParams = Type.Object({ id: Uuid });

export const ChannelStatusBody = Type.Object({ id: Type.String(), status: Type.String() });
export const ChannelsStatusQuery = Type.Object({ ids: Type.Optional(ArrayQuery) });

export const StatsQuery = Type.Object({
  start: Type.Optional(DateTime),
  end: Type.Optional(DateTime),
  periodSeconds: Type.Optional(Type.Integer({ minimum: 60, maximum: 31 * 86400, default: 60, description: 'a multiple of 60' })),
  aggregationFunction: Type.Optional(Enum(['Sum', 'Avg'] as const)),
});

export const Stats = Type.Object({
  metrics: Type.Record(
    Type.String(),
    Type.Object({
      id: Type.String(),
      description: Type.String(),
      unitName: Type.String(),
      unitSymbol: Type.String(),
      data: Type.Array(Type.Object({ time: Timestamp, value: Type.Number() })),
    }),
  ),
});

export const ChannelsLimit = Type.Object({ channelsLimit: Type.Integer() });
export const CaptionLanguages = Type.Array(Type.Object({ name: Type.String(), code: Type.String() }));

export const StreamKeyRotated = Type.Object({ id: Type.String(), transportPrimaryIngestUrl: Type.String() });

export const Configuration = Type.Object({
  id: Type.String(),
  name: Type.String(),
  codeName: Type.String(),
  endpoints: Type.Array(
    Type.Object({ type: Type.String(), hasVerticalOrientation: Type.Boolean(), isDrmProtected: Type.Boolean(), scheme: Type.Optional(Type.String()) }),
  ),
  qualities: Type.Array(
    Type.Object({
      resolution: Type.String(),
      frameRate: Type.Integer({ description: 'frames per second; with followsSourceFrameRate, the most' }),
      followsSourceFrameRate: Type.Boolean({
        description: "true when the quality names no frameRate: encoded at the encoder's own rate, up to frameRate (30)",
      }),
    }),
  ),
  restreams: Type.Array(
    Type.Object({
      id: Type.String(),
      destination: Type.String(),
      label: Type.Union([Type.String(), Type.Null()]),
      rtmpDestinations: Type.Array(
        Type.Object({
          url: Type.String(),
          streamKey: Type.String(),
          /** `Off` (the channel does not run), `WaitingForInput`, `Connecting`, `Active`, `Retrying`. */
          status: Type.String(),
          lastError: Type.Union([Type.String(), Type.Null()]),
        }),
      ),
      protocol: Type.String(),
      hasVerticalOrientation: Type.Boolean(),
    }),
  ),
  input: Type.Object({
    type: Type.String(),
    mp4Sources: Type.Array(
      Type.Object({
        url: Type.String(),
        username: Type.Union([Type.String(), Type.Null()]),
        password: Type.Union([Type.String(), Type.Null()]),
        hasExistingPassword: Type.Boolean(),
      }),
    ),
    whiteListCidr: Type.Union([Type.String(), Type.Null()]),
    inputLoss: Type.Object({ type: Type.String(), imageSlateUri: Type.Union([Type.String(), Type.Null()]), color: Type.Union([Type.String(), Type.Null()]) }),
    transportInputProtocol: Type.String(),
    transportPrimaryIngestUrl: Type.Union([Type.String(), Type.Null()]),
    transportSecondaryIngestUrl: Type.Union([Type.String(), Type.Null()]),
    inputDevices: Type.Array(Type.String()),
  }),
  redundancy: Type.String(),
  activationMode: Type.String(),
  transmissionType: Type.String(),
  environment: Type.String(),
  latency: Type.String(),
  isConfiguredExternally: Type.Boolean(),
  stackName: Type.String(),
  channelGroupStackName: Type.String(),
  templateVersion: Type.String(),
  status: Type.Object({ value: Type.String() }),
  requiresCloudUpdate: Type.Boolean(),
  packagingVersion: Type.String(),
  isWatermarkProtected: Type.Boolean(),
  drmKeyMode: Type.Union([Type.String(), Type.Null()]),
  aiLiveCaptioning: Type.Object({
    isEnabled: Type.Boolean(),
    language: Type.Union([Type.Object({ name: Type.String(), code: Type.String(), code3Lettered: Type.String() }), Type.Null()]),
  }),
  broadcastStandard: Type.Union([Type.String(), Type.Null()]),
  highestVideoResolution: Type.Union([Type.String(), Type.Null()]),
  specificationId: Type.String(),
  autoRecord: Type.Object({
    enabled: Type.Boolean(),
    archive: Type.Object({
      enabled: Type.Boolean(),
      delaySeconds: Type.Integer(),
      public: Type.Boolean(),
      expirationDate: Type.Union([Timestamp, Type.Null()]),
    }),
    outputs: Type.Array(Type.Object({ preset: Type.String(), expirationDate: Type.Union([Timestamp, Type.Null()]) })),
  }),
});
