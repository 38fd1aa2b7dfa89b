import { Type } from 'typebox';
import { Paged, PagingQuery } from '../../platform/paging.ts';

export const PresetListQuery = Type.Object({
  limit: PagingQuery.limit,
  page: PagingQuery.page,
  mediaType: Type.Optional(Type.String({ maxLength: 32, description: 'video or audio (case-insensitive)' })),
});

const TranscodingPreset = Type.Object({
  id: Type.String(),
  name: Type.String(),
  description: Type.String(),
  createsDownload: Type.Boolean(),
  mediaType: Type.String(),
  noTranscoding: Type.Boolean(),
  hasVerticalOrientation: Type.Boolean(),
  allowedExtensionsFile: Type.Array(Type.String()),
  protection: Type.Optional(
    Type.Object({
      endpointType: Type.String({ description: '`HlsDrm` or `DashDrm` (a `cmaf` preset: `HlsDrm` for its HLS endpoint, `DashDrm` for its DASH one)' }),
      scheme: Type.String({ description: '`aes-128`, `cenc` or `cbcs`' }),
    }),
  ),
});

export const PresetList = Paged(TranscodingPreset);
