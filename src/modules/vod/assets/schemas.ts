import { Type } from 'typebox';
import { ArrayQuery, DateRangeQuery, TagAttributeQuery } from '../../../platform/filters.ts';
import { Paged, PagingQuery } from '../../../platform/paging.ts';
import { Attributes, DateTime, Metadata, ProtectionDetails, Tags, Timestamp, Uuid } from '../../../platform/schemas.ts';
import { fixedAfterCreation } from '../../../platform/strictBodies.ts';
import { DetectedTrackFacts } from '../files.schemas.ts';

const TranscodingTrack = Type.Object({
  trackSelector: Type.Object({ trackId: Type.String({ minLength: 1, maxLength: 64 }) }),
  type: Type.String({ description: 'Video, Audio or Caption (Captions accepted)' }),
  language: Type.Optional(Type.String({ maxLength: 64 })),
  name: Type.Optional(Type.String({ maxLength: 256 })),
  // A track as `detect` answers it can be passed as it is: what detect read of it is accepted and not used (the
  // platform reads the file itself).
  ...Object.fromEntries(Object.entries(DetectedTrackFacts).map(([k, v]) => [k, Type.Optional(v)])),
});

const VodSource = Type.Object({
  fileId: Type.String({ minLength: 1, maxLength: 64 }),
  transcodingTracks: Type.Optional(Type.Array(TranscodingTrack, { maxItems: 64 })),
  fileTypesFlag: Type.Optional(Type.String()),
});

const Overlay = Type.Object({
  startTime: Type.String({
    minLength: 1,
    maxLength: 32,
    description:
      'when the overlay appears, from the start of the asset: milliseconds (`1500`), `HH:MM:SS.mmm` (`00:00:01.500`) or `HH:MM:SS:FF` (frames at the output frame rate)',
  }),
  duration: Type.Integer({ minimum: 1, maximum: 2147483647, description: 'milliseconds' }),
  input: Type.Optional(
    Type.Object({
      type: Type.Optional(Type.String({ description: 'URL or S3' })),
      url: Type.Optional(Type.String({ maxLength: 4096 })),
      s3BucketName: Type.Optional(Type.String()),
      s3ObjectKey: Type.Optional(Type.String()),
      s3Region: Type.Optional(Type.String()),
      s3RoleArn: Type.Optional(Type.String()),
      s3ExternalId: Type.Optional(Type.String()),
    }),
  ),
  imageX: Type.Optional(Type.Integer({ minimum: 0, maximum: 16384 })),
  imageY: Type.Optional(Type.Integer({ minimum: 0, maximum: 16384 })),
  width: Type.Integer({ minimum: 1, maximum: 16384 }),
  height: Type.Integer({ minimum: 1, maximum: 16384 }),
  fadeIn: Type.Optional(Type.Integer({ minimum: 0 })),
  fadeOut: Type.Optional(Type.Integer({ minimum: 0 })),
  opacity: Type.Optional(Type.Integer({ minimum: 0, maximum: 100 })),
  layer: Type.Optional(Type.Integer()),
});

export const VodAssetCreate = Type.Object({
  transcodedSources: Type.Array(VodSource, { minItems: 1, maxItems: 16 }),
  preset: Type.String({ minLength: 1, maxLength: 128 }),
  metadata: Type.Optional(Metadata),
  title: Type.Optional(Type.String({ maxLength: 1024 })),
  tags: Type.Optional(Tags),
  attributes: Type.Optional(Attributes),
  overlays: Type.Optional(Type.Array(Overlay, { maxItems: 16 })),
  distributionInfo: Type.Optional(Type.Object({ accessPolicyId: Type.Optional(Type.Union([Uuid, Type.Null()])) })),
  drmKeyMode: Type.Optional(
    Type.String({
      maxLength: 64,
      description:
        'The keys of the DRM outputs (HlsDrm, DashDrm presets) of the asset, also those added later: `SingleKey` (the default): one key for every track; `AudioVideoKeys`: one for the video tracks, another for the audio tracks',
    }),
  ),
  aiCaptioningLanguageCode: Type.Optional(
    Type.String({
      maxLength: 16,
      description:
        "Captions made from the speech of the asset's first audio track, in this language (one of `GET /live/v1/channels/ai-live-caption-languages`), added as a subtitle track to its HLS and DASH outputs once made",
    }),
  ),
});

const EndpointInfo = Type.Object({
  id: Type.String(),
  accessType: Type.String(),
  format: Type.String(),
  url: Type.String(),
  preset: Type.String(),
  protection: Type.String({ description: '`None`, `Aes128` (HlsDrm AES-128) or `ClearKey` (DashDrm, and HlsDrm SAMPLE-AES: EME ClearKey)' }),
  protectionDetails: Type.Optional(ProtectionDetails),
  type: Type.Optional(Type.String({ description: 'endpoint type of an encrypted output: `HlsDrm` or `DashDrm`' })),
  isDrmProtected: Type.Optional(Type.Boolean()),
  drmKeyMode: Type.Optional(
    Type.String({ description: '`SingleKey`: one key for every track; `AudioVideoKeys`: `keyIds` are the video key, then the audio key' }),
  ),
  durationMilliseconds: Type.Integer(),
  size: Type.Integer(),
  manifest: Type.String(),
  hasVerticalOrientation: Type.Boolean(),
});

const EntityTranscodingOutput = Type.Object({
  id: Type.String(),
  status: Type.String(),
  preset: Type.String(),
  expirationDate: Type.Union([Timestamp, Type.Null()]),
  completionDate: Type.Union([Timestamp, Type.Null()]),
  endpoints: Type.Array(EndpointInfo),
  errorMessage: Type.Optional(Type.Union([Type.String(), Type.Null()])),
});

export const VodAsset = Type.Object({
  id: Type.String(),
  preset: Type.String(),
  transcodedJobId: Type.Union([Type.String(), Type.Null()]),
  title: Type.Union([Type.String(), Type.Null()]),
  metadata: Metadata,
  tenantId: Type.String(),
  createDate: Timestamp,
  lastModificationDate: Timestamp,
  status: Type.String(),
  fileIds: Type.Record(Type.String(), Type.String()),
  sources: Type.Array(VodSource),
  endpoints: Type.Array(EndpointInfo),
  outputs: Type.Array(EntityTranscodingOutput),
  errorMessage: Type.Union([Type.String(), Type.Null()]),
  durationMilliseconds: Type.Union([Type.Integer(), Type.Null()]),
  tags: Type.Array(Type.String()),
  attributes: Type.Array(Type.String()),
  distribution: Type.Object({ accessPolicyId: Type.Union([Type.String(), Type.Null()]), accessPolicyName: Type.Union([Type.String(), Type.Null()]) }),
  sourceFileExtension: Type.Union([Type.String(), Type.Null()]),
  drmKeyMode: Type.String({ description: 'the key mode of its DRM outputs: `SingleKey` or `AudioVideoKeys`' }),
  aiCaptioning: Type.Object({
    isEnabled: Type.Boolean(),
    language: Type.Union([Type.Object({ name: Type.String(), code: Type.String(), code3Lettered: Type.String() }), Type.Null()]),
    status: Type.Union([Type.String({ description: '`Pending`, `Processing`, `Available` or `Error`' }), Type.Null()]),
    errorMessage: Type.Union([Type.String(), Type.Null()]),
  }),
});

const VodAssetSummary = Type.Object({
  id: Type.String(),
  preset: Type.String(),
  title: Type.Union([Type.String(), Type.Null()]),
  status: Type.String(),
  durationMilliseconds: Type.Union([Type.Integer(), Type.Null()]),
  metadata: Metadata,
  tags: Type.Array(Type.String()),
  attributes: Type.Array(Type.String()),
  createDate: Timestamp,
  lastModificationDate: Timestamp,
});

export const VodAssetListQuery = Type.Object({
  ...PagingQuery,
  ...DateRangeQuery,
  ...TagAttributeQuery,
  statuses: Type.Optional(ArrayQuery),
  fileId: Type.Optional(Uuid),
  ids: Type.Optional(ArrayQuery),
  // The column is a bigint read as a JS number: beyond 2^53 - 1 neither side holds the value exactly.
  durationFrom: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER })),
  durationTo: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER })),
  presets: Type.Optional(ArrayQuery),
});
export const VodAssetList = Paged(VodAssetSummary);

export const VodAssetPatch = Type.Object(
  {
    metadata: Type.Optional(Metadata),
    title: Type.Optional(Type.String({ maxLength: 1024 })),
    tags: Type.Optional(Tags),
    attributes: Type.Optional(Attributes),
    accessPolicyId: Type.Optional(Type.Union([Uuid, Type.Null()])),
  },
  // Outputs are added and removed through their own operations; the sources and key mode are the asset's identity.
  fixedAfterCreation('transcodedSources', 'preset', 'overlays', 'drmKeyMode', 'aiCaptioningLanguageCode'),
);

export const OutputCreate = Type.Object({
  preset: Type.String({ minLength: 1, maxLength: 128 }),
  assetId: Type.Optional({ ...Uuid, description: 'the asset of the path; another asset is refused' }),
  overlays: Type.Optional(Type.Array(Overlay, { maxItems: 16 })),
  id: Type.Optional(Type.String({ pattern: '^[a-zA-Z0-9_-]{1,128}$' })),
  expirationDate: Type.Optional(DateTime),
});

export const AssetParams = Type.Object({ id: Uuid });
export const OutputParams = Type.Object({ id: Uuid, outputId: Type.String({ minLength: 1, maxLength: 128 }) });
export const ProgressParams = Type.Object({ assetId: Uuid, outputId: Type.String({ minLength: 1, maxLength: 128 }) });
export const Progress = Type.Object({ progressPercent: Type.Integer({ minimum: 0, maximum: 100 }) });
export const ProgressManyBody = Type.Array(
  Type.Object({ id: Type.String({ minLength: 1 }), outputs: Type.Array(Type.Object({ id: Type.String({ minLength: 1 }) }), { maxItems: 100 }) }),
  { maxItems: 100 },
);
export const ProgressMany = Type.Array(
  Type.Object({ id: Type.String(), outputs: Type.Array(Type.Object({ id: Type.String(), progressPercent: Type.Integer() })) }),
);
