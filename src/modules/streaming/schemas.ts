import { Type } from 'typebox';
import { ArrayQuery, DateRangeQuery, TagAttributeQuery } from '../../platform/filters.ts';
import { Paged, PagingQuery } from '../../platform/paging.ts';
import { DateTime, Metadata, Timestamp } from '../../platform/schemas.ts';
import { SettingState } from './settings.routes.ts';

const Str = Type.Union([Type.String(), Type.Null()]);
const Int = Type.Union([Type.Integer(), Type.Null()]);
const When = Type.Union([Timestamp, Type.Null()]);

/** A streaming asset id (spec: `^[a-zA-Z0-9_-]{1,128}$`). */
export const AssetId = Type.String({ pattern: '^[a-zA-Z0-9_-]{1,128}$' });
export const AssetParams = Type.Object({ assetId: AssetId });

const EndpointInfo = Type.Object({
  id: Type.Optional(Type.String()),
  accessType: Type.String(),
  format: Type.String(),
  url: Type.String(),
  protection: Type.String(),
  preset: Type.Optional(Str),
  manifest: Type.Optional(Str),
  durationMilliseconds: Type.Optional(Int),
  size: Type.Optional(Int),
  hasVerticalOrientation: Type.Optional(Type.Boolean()),
});

const Output = Type.Object({ id: Type.String(), status: Type.String(), preset: Str, expirationDate: When, endpoints: Type.Array(EndpointInfo) });
const StateValues = Type.Object({ asset: Type.Union([SettingState, Type.Null()]), tenant: SettingState });
export const Image = Type.Object({ Id: Str, Name: Str, Url: Type.String() });
export const Chapter = Type.Object({ id: Type.String(), title: Str, startSecond: Type.Integer(), endSecond: Type.Integer() });
export const Tag = Type.Object({ id: Type.String(), name: Type.String() });

export const StreamingAsset = Type.Object({
  id: Type.String(),
  status: Type.String(),
  metadata: Metadata,
  outputs: Type.Array(Output),
  createDate: Timestamp,
  lastModificationDate: Timestamp,
  durationMilliseconds: Int,
  source: Type.String({ description: 'Vod, Live or Recorder' }),
  type: Type.String({ description: 'Vod, LiveChannel, LiveEvent or Recording' }),
  channelId: Str,
  start: When,
  end: When,
  isDrm: Type.Boolean(),
  preset: Str,
  tokenRequiredPolicy: Type.Object({ asset: Type.Union([SettingState, Type.Null()]), tenant: SettingState }),
  title: Str,
  description: Str,
  tags: Type.Array(Tag),
  images: Type.Record(Type.String(), Image),
  chapters: Type.Array(Chapter),
  settings: Type.Object({
    tokenRequired: StateValues,
    devToolsAccess: StateValues,
    cap: StateValues,
    analytics: StateValues,
    codeObfuscation: StateValues,
  }),
});

export const StreamingAssetListQuery = Type.Object({
  ...PagingQuery,
  ...DateRangeQuery,
  ...TagAttributeQuery,
  ids: Type.Optional(ArrayQuery),
  channelId: Type.Optional(Type.String({ maxLength: 128 })),
  channels: Type.Optional(ArrayQuery),
  isDrm: Type.Optional(Type.Boolean()),
  source: Type.Optional(Type.String({ maxLength: 32, description: 'obsolete: Live, Recorder or Vod' })),
  status: Type.Optional(Type.String({ maxLength: 32 })),
  statuses: Type.Optional(ArrayQuery),
  type: Type.Optional(Type.String({ maxLength: 32 })),
  types: Type.Optional(ArrayQuery),
  durationFrom: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER })),
  durationTo: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER })),
  searchStart: Type.Optional(DateTime),
  searchEnd: Type.Optional(DateTime),
});
export const StreamingAssetList = Paged(StreamingAsset);

export const StreamingAssetPatch = Type.Object({
  title: Type.Optional(Type.Union([Type.String({ maxLength: 1024 }), Type.Null()])),
  description: Type.Optional(Type.Union([Type.String({ maxLength: 10_000 }), Type.Null()])),
  metadata: Type.Optional(Metadata),
  tags: Type.Optional(Type.Array(Type.Object({ name: Type.String({ minLength: 1, maxLength: 256 }) }), { maxItems: 100 })),
});

/** An asset's own state of a setting; `null` (not in the spec) takes it away: the tenant's default applies again. */
const AssetSettingState = Type.Union([SettingState, Type.Null()]);
export const SettingsPatch = Type.Object({
  tokenRequired: Type.Optional(AssetSettingState),
  devToolsAccess: Type.Optional(AssetSettingState),
  cap: Type.Optional(AssetSettingState),
  analytics: Type.Optional(AssetSettingState),
  codeObfuscation: Type.Optional(AssetSettingState),
});

export const ChaptersBody = Type.Object({
  chapters: Type.Array(
    Type.Object({
      title: Type.Optional(Type.String({ maxLength: 1024 })),
      startSecond: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER })),
      endSecond: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER })),
    }),
    { maxItems: 500 },
  ),
});
export const TagsBody = Type.Object({ tags: Type.Array(Type.Object({ name: Type.String({ minLength: 1, maxLength: 256 }) }), { maxItems: 100 }) });
export const ImagesBody = Type.Object({
  images: Type.Record(
    Type.String({ pattern: '^[a-zA-Z0-9_.-]{1,128}$' }),
    Type.Object({
      Id: Type.Optional(Type.Union([Type.String({ maxLength: 128 }), Type.Null()])),
      Name: Type.Optional(Type.Union([Type.String({ maxLength: 256 }), Type.Null()])),
      Url: Type.String({ minLength: 1, maxLength: 4096 }),
    }),
  ),
});
