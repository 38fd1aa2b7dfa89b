import { Type } from 'typebox';
import { ArrayQuery, DateRangeQuery, TagAttributeQuery } from '../../platform/filters.ts';
import { Paged, PagingQuery } from '../../platform/paging.ts';
import {
  Attributes,
  DateTime,
  Metadata,
  ProtectionDetails,
  RecordingArchiveRequest,
  RecordingOutputRequest,
  Tags,
  Timestamp,
  Uuid,
} from '../../platform/schemas.ts';

/** Recorder overlays start at `HH:MM:SS:FF` (frames) or `HH:MM:SS.mmm` into the recording (spec, Overlay). */
const Overlay = Type.Object({
  startTime: Type.String({
    minLength: 1,
    maxLength: 32,
    description:
      'when the overlay appears, from the start of the recording: milliseconds (`1500`), `HH:MM:SS.mmm` (`00:00:01.500`) or `HH:MM:SS:FF` (frames at the output frame rate)',
  }),
  duration: Type.Integer({ minimum: 1, maximum: 2147483647, description: 'milliseconds' }),
  input: Type.Optional(
    Type.Object({
      type: Type.Optional(Type.String({ description: 'URL or S3' })),
      url: Type.Optional(Type.String({ maxLength: 4096 })),
      s3BucketName: Type.Optional(Type.String({ maxLength: 256 })),
      s3ObjectKey: Type.Optional(Type.String({ maxLength: 1024 })),
      s3Region: Type.Optional(Type.String({ maxLength: 64 })),
      s3RoleArn: Type.Optional(Type.String({ maxLength: 2048 })),
      s3ExternalId: Type.Optional(Type.String({ maxLength: 1224 })),
    }),
  ),
  imageX: Type.Optional(Type.Integer({ minimum: 0, maximum: 16384 })),
  imageY: Type.Optional(Type.Integer({ minimum: 0, maximum: 16384 })),
  width: Type.Integer({ minimum: 1, maximum: 16384 }),
  height: Type.Integer({ minimum: 1, maximum: 16384 }),
  fadeIn: Type.Optional(Type.Integer({ minimum: 0, maximum: 2147483647 })),
  fadeOut: Type.Optional(Type.Integer({ minimum: 0, maximum: 2147483647 })),
  opacity: Type.Optional(Type.Integer({ minimum: 0, maximum: 100 })),
  layer: Type.Optional(Type.Integer({ minimum: -1000, maximum: 1000 })),
});

const LiveChannelDetails = Type.Object({
  channelId: Uuid,
  start: Type.Optional(DateTime),
  end: Type.Optional(DateTime),
});

const Source = Type.Object({
  type: Type.Optional(Type.String({ enum: ['LiveChannel'], description: 'LiveChannel' })),
  liveChannelDetails: LiveChannelDetails,
});

const DelaySeconds = Type.Integer({ minimum: 0, maximum: 2592000, description: 'seconds between the end of the recording and the archive' });

const OutputRequest = RecordingOutputRequest;

export const RecordingCreate = Type.Object({
  source: Source,
  catchup: Type.Optional(Type.Object({ enabled: Type.Optional(Type.Boolean()) })),
  archive: Type.Optional(RecordingArchiveRequest),
  expirationDate: Type.Optional(DateTime),
  outputs: Type.Optional(Type.Array(OutputRequest, { maxItems: 16 })),
  output: Type.Optional(OutputRequest),
  metadata: Type.Optional(Metadata),
  title: Type.Optional(Type.String({ maxLength: 1024 })),
  tags: Type.Optional(Tags),
  attributes: Type.Optional(Attributes),
  overlays: Type.Optional(Type.Array(Overlay, { maxItems: 16 })),
  distributionInfo: Type.Optional(Type.Object({ accessPolicyId: Type.Optional(Type.Union([Uuid, Type.Null()])) })),
});

export const RecordingPatch = Type.Object({
  source: Type.Optional(
    Type.Object({
      type: Type.String({ enum: ['LiveChannel'], description: 'required when source is given' }),
      liveChannelDetails: LiveChannelDetails,
    }),
  ),
  catchup: Type.Optional(Type.Object({ enabled: Type.Optional(Type.Boolean()) })),
  archive: Type.Optional(
    Type.Object({
      enabled: Type.Optional(Type.Boolean()),
      public: Type.Optional(Type.Boolean()),
      delaySeconds: Type.Optional(DelaySeconds),
    }),
  ),
  title: Type.Optional(Type.String({ maxLength: 1024 })),
  metadata: Type.Optional(Metadata),
  tags: Type.Optional(Tags),
  attributes: Type.Optional(Attributes),
});

const EndpointInfo = Type.Object({
  id: Type.String(),
  accessType: Type.String(),
  format: Type.String(),
  url: Type.String(),
  preset: Type.Optional(Type.String()),
  protection: Type.String({ description: '`None`; of a recording of a DRM channel, `Aes128` (HLS) or `ClearKey` (DASH CENC)' }),
  protectionDetails: Type.Optional(ProtectionDetails),
  type: Type.Optional(Type.String({ description: 'of an encrypted endpoint: `HlsDrm` or `DashDrm`' })),
  isDrmProtected: Type.Optional(Type.Boolean()),
  drmKeyMode: Type.Optional(Type.String({ description: "the channel's: `SingleKey` or `AudioVideoKeys`" })),
  durationMilliseconds: Type.Optional(Type.Integer()),
  size: Type.Optional(Type.Integer()),
  manifest: Type.String(),
  hasVerticalOrientation: Type.Boolean(),
});

const Output = Type.Object({
  id: Type.String(),
  status: Type.String(),
  preset: Type.String(),
  expirationDate: Type.Union([Timestamp, Type.Null()]),
  completionDate: Type.Union([Timestamp, Type.Null()]),
  endpoints: Type.Array(EndpointInfo),
  errorMessage: Type.Optional(Type.Union([Type.String(), Type.Null()])),
});

const Nullable = <T extends ReturnType<typeof Type.String>>(t: T) => Type.Union([t, Type.Null()]);

export const Recording = Type.Object({
  id: Type.String(),
  tenantId: Type.String(),
  source: Type.Object({
    type: Type.String(),
    liveChannelDetails: Type.Object({ channelId: Type.String(), start: Timestamp, end: Type.Union([Timestamp, Type.Null()]) }),
  }),
  catchup: Type.Object({ enabled: Type.Boolean(), expirationTime: Timestamp, endpoints: Type.Array(EndpointInfo) }),
  archive: Type.Object({
    enabled: Type.Boolean(),
    delaySeconds: Type.Integer(),
    public: Type.Boolean(),
    expirationDate: Type.Union([Timestamp, Type.Null()]),
    status: Type.Union([Type.String(), Type.Null()]),
    endpoints: Type.Array(EndpointInfo),
    archivisationCompletedDate: Type.Union([Timestamp, Type.Null()]),
  }),
  outputs: Type.Array(Output),
  expirationDate: Type.Union([Timestamp, Type.Null()]),
  status: Type.String(),
  metadata: Metadata,
  errorMessage: Nullable(Type.String()),
  createDate: Timestamp,
  lastModificationDate: Timestamp,
  durationMilliseconds: Type.Union([Type.Integer(), Type.Null()]),
  title: Nullable(Type.String()),
  tags: Type.Array(Type.String()),
  attributes: Type.Array(Type.String()),
  overlays: Type.Array(Overlay),
  distribution: Type.Object({ accessPolicyId: Type.Union([Type.String(), Type.Null()]), accessPolicyName: Type.Union([Type.String(), Type.Null()]) }),
});

export const RecordingSummary = Type.Object({
  id: Type.String(),
  title: Nullable(Type.String()),
  status: Type.String(),
  createDate: Timestamp,
  lastModificationDate: Timestamp,
  durationMilliseconds: Type.Union([Type.Integer(), Type.Null()]),
  metadata: Metadata,
});

export const RecordingListQuery = Type.Object({
  ...PagingQuery,
  ...DateRangeQuery,
  ...TagAttributeQuery,
  searchStart: Type.Optional(DateTime),
  searchEnd: Type.Optional(DateTime),
  channelId: Type.Optional(Uuid),
  ids: Type.Optional(ArrayQuery),
  statuses: Type.Optional(ArrayQuery),
  channels: Type.Optional(ArrayQuery),
});
export const RecordingList = Paged(RecordingSummary);

export const OutputCreate = Type.Object({
  preset: Type.String({ minLength: 1, maxLength: 128 }),
  id: Type.Optional(Type.String({ pattern: '^[a-zA-Z0-9_-]{1,128}$' })),
  expirationDate: Type.Optional(DateTime),
  overlays: Type.Optional(Type.Array(Overlay, { maxItems: 16 })),
});
export const OutputIds = Paged(Type.Object({ id: Type.String() }));

export const RecordingParams = Type.Object({ id: Uuid });
export const OutputParams = Type.Object({ recordingId: Uuid, id: Type.String({ minLength: 1, maxLength: 128 }) });
export const ProgressParams = Type.Object({ recordingId: Uuid, outputId: Type.String({ minLength: 1, maxLength: 128 }) });
export const Progress = Type.Object({ progressPercent: Type.Integer({ minimum: 0, maximum: 100 }) });
export const ProgressManyBody = Type.Array(
  Type.Object({
    id: Type.String({ minLength: 1, maxLength: 128 }),
    outputs: Type.Array(Type.Object({ id: Type.String({ minLength: 1, maxLength: 128 }) }), { maxItems: 100 }),
  }),
  { maxItems: 100 },
);
export const ProgressMany = Type.Array(
  Type.Object({ id: Type.String(), outputs: Type.Array(Type.Object({ id: Type.String(), progressPercent: Type.Integer() })) }),
);
