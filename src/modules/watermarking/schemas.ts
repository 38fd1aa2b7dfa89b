import { Type } from 'typebox';
import { Paged, PagingQuery } from '../../platform/paging.ts';
import { DateTime, Metadata, Timestamp, Uuid } from '../../platform/schemas.ts';
import { MAX_FILE_SIZE, MAX_PARTS } from '../vod/index.ts';

export const IdParams = Type.Object({ id: Uuid });
const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);

// --- assets ---------------------------------------------------------------------------------------------------------

export const AssetCreate = Type.Object({
  vodAssetId: Uuid,
  metadata: Type.Optional(Metadata),
});
export const AssetCreated = Type.Object({ id: Type.String() });

export const Asset = Type.Object({
  id: Type.String({ format: 'uuid' }),
  createDate: Timestamp,
  metadata: Metadata,
  vodAssetId: Nullable(Type.String({ description: 'the VOD asset prepared; null for a live channel' })),
  channelId: Nullable(Type.String({ description: 'the live channel with isWatermarkProtected this asset marks; null for a VOD asset' })),
  status: Type.String({ description: 'Pending, Processing, Available or Error' }),
  progress: Type.Integer({ description: 'percent of the preparation done' }),
  errorMessage: Nullable(Type.String()),
  width: Nullable(Type.Integer()),
  height: Nullable(Type.Integer()),
  segmentDuration: Type.Integer({ description: 'seconds; one bit of the user number per segment' }),
  segmentCount: Type.Integer(),
  userNumberBits: Type.Integer(),
  lastModificationDate: Timestamp,
});

export const AssetListQuery = Type.Object({
  ...PagingQuery,
  createDateStart: Type.Optional(DateTime),
  createDateEnd: Type.Optional(DateTime),
});
export const AssetList = Paged(Asset);

// --- settings -------------------------------------------------------------------------------------------------------

const SettingsFields = {
  userNumberBits: Type.Integer({ minimum: 4, maximum: 40, description: 'bits of the user number; a CRC-8 follows them' }),
  segmentDuration: Type.Integer({ minimum: 1, maximum: 10, description: 'seconds per segment of newly prepared assets' }),
  strength: Type.Integer({ minimum: 1, maximum: 6, description: 'luma levels of the mark at its peaks' }),
  tokenTtlSeconds: Type.Integer({ minimum: 60, maximum: 31_536_000 }),
  minConfidence: Type.Number({ minimum: 0.1, maximum: 1, description: 'smallest mean vote every bit needs, 1 being the full mark' }),
};
export const Settings = Type.Object(SettingsFields);
export const SettingsPatch = Type.Partial(Type.Object(SettingsFields));

// --- sessions and tokens --------------------------------------------------------------------------------------------

export const TokenCreate = Type.Object({
  assetId: Uuid,
  userNumber: Type.Integer({ minimum: 0, maximum: 2 ** 40 - 1 }),
  userName: Type.String({ minLength: 1, maxLength: 256 }),
  expiresInSeconds: Type.Optional(Type.Integer({ minimum: 60, maximum: 31_536_000 })),
});
export const TokenCreated = Type.Object({
  token: Type.String(),
  sessionId: Type.String(),
  expirationDate: Timestamp,
  playbackUrl: Type.String({ description: 'the HLS playlist through the redirector' }),
});

export const Session = Type.Object({
  id: Type.String(),
  assetId: Type.String(),
  userNumber: Type.Integer(),
  userName: Type.String(),
  revoked: Type.Boolean(),
  revokeDate: Nullable(Timestamp),
  createDate: Timestamp,
  lastModificationDate: Timestamp,
});
export const SessionListQuery = Type.Object({
  ...PagingQuery,
  assetId: Type.Optional(Type.String({ maxLength: 64 })),
  userNumber: Type.Optional(Type.Integer({ minimum: 0, maximum: 2 ** 40 - 1 })),
  revoked: Type.Optional(Type.Boolean()),
  createDateStart: Type.Optional(DateTime),
  createDateEnd: Type.Optional(DateTime),
});
export const SessionList = Paged(Session);

export const RedirectorParams = Type.Object({ token: Type.String({ minLength: 1, maxLength: 2048 }) });
export const SegmentParams = Type.Object({
  token: Type.String({ minLength: 1, maxLength: 2048 }),
  segment: Type.String({ pattern: '^([0-9]{1,7}\\.ts|[0-9]{1,10}\\.m4s)$', description: '<index>.ts (VOD), <media sequence number>.m4s (live)' }),
});

export const RedirectorQuery = Type.Object({
  rendition: Type.Optional(
    Type.String({
      pattern: '^([0-9]{3,4}p|audio)$',
      description: "a live channel's marked rung (`240p`) or its audio (`audio`), as the master playlist names them; the tallest rung when left out",
    }),
  ),
});

// --- files and detection --------------------------------------------------------------------------------------------

export const StartBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 1024, description: 'the file name; kept as orginalFileName' }),
  fileSize: Type.Integer({ minimum: 1, maximum: MAX_FILE_SIZE, description: 'bytes' }),
});
export const StartResult = Type.Object({
  fileId: Type.String(),
  multipartUrls: Type.Array(Type.String()),
  fileKey: Type.String(),
  partSize: Type.Integer(),
  lastPartSize: Type.Integer(),
  partsCount: Type.Integer(),
});
export const PartParams = Type.Object({ id: Uuid, nr: Type.Integer({ minimum: 1, maximum: MAX_PARTS }) });
export const PartUrl = Type.Object({ url: Type.String() });
export const CompleteBody = Type.Object({
  fileId: Uuid,
  parts: Type.Array(Type.Object({ partNumber: Type.Integer({ minimum: 1, maximum: MAX_PARTS }), eTag: Type.Optional(Type.String({ maxLength: 256 })) }), {
    minItems: 1,
    maxItems: MAX_PARTS,
  }),
});
export const CompleteResult = Type.Object({ fileId: Type.String(), fileKey: Type.String() });

const Detection = Type.Object({
  status: Type.String({ description: 'Pending, Processing, Detected, NoMarkFound or Error' }),
  progress: Type.Integer({ description: 'percent' }),
  jobId: Type.String(),
  assetId: Type.Optional(Nullable(Type.String())),
  userNumber: Type.Optional(Nullable(Type.Integer())),
  userName: Type.Optional(Nullable(Type.String())),
  sessionId: Type.Optional(Nullable(Type.String())),
  confidence: Type.Optional(Nullable(Type.Number())),
  message: Type.Optional(Nullable(Type.String())),
  completionDate: Type.Optional(Nullable(Type.String())),
});
export const SuspectFile = Type.Object({
  id: Type.String(),
  orginalFileName: Type.String(),
  createDate: Timestamp,
  uploadStatus: Type.String({ description: 'Uploading or Completed' }),
  fileSize: Type.Integer(),
  detection: Nullable(Detection),
  lastModificationDate: Timestamp,
});
export const FileListQuery = Type.Object({ ...PagingQuery });
export const FileList = Paged(SuspectFile);

export const DetectBody = Type.Object({ fileId: Uuid });
export const DetectCreated = Type.Object({ jobId: Type.String({ format: 'uuid' }) });
