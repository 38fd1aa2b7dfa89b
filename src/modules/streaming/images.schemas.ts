import { Type } from 'typebox';
import { ArrayQuery, DateRangeQuery } from '../../platform/filters.ts';
import { Paged, PagingQuery } from '../../platform/paging.ts';
import { Timestamp, Uuid } from '../../platform/schemas.ts';
import { MAX_PARTS } from '../vod/index.ts';
import { AssetId } from './schemas.ts';

const MAX_IMAGE_SIZE = 50 * 1024 * 1024;

export const ImageParams = Type.Object({ assetId: AssetId, fileId: Type.String({ minLength: 1, maxLength: 64 }) });
export const ImagePartParams = Type.Object({
  assetId: AssetId,
  fileId: Type.String({ minLength: 1, maxLength: 64 }),
  partNumber: Type.Integer({ minimum: 1, maximum: MAX_PARTS }),
});

export const ImageStartBody = Type.Object({
  name: Type.String({
    pattern: '^[A-Za-z0-9_]{1,128}(\\.[A-Za-z0-9]{1,8})?$',
    description: 'letters, digits and underscores (an extension such as .png is accepted too)',
  }),
  fileSize: Type.Integer({ minimum: 1, maximum: MAX_IMAGE_SIZE, description: 'bytes; an image is at most 50 MiB' }),
});
export const ImageStartResult = Type.Object({
  fileId: Type.String(),
  multipartUrls: Type.Array(Type.String()),
  fileKey: Type.String(),
  partSize: Type.Integer(),
  lastPartSize: Type.Integer(),
  partsCount: Type.Integer(),
});
export const ImageCompleteBody = Type.Object({
  fileId: Uuid,
  parts: Type.Array(
    Type.Object({
      partNumber: Type.Integer({ minimum: 1, maximum: MAX_PARTS }),
      eTag: Type.Optional(Type.String({ maxLength: 256, description: 'the ETag header of the part upload response' })),
    }),
    { minItems: 1, maxItems: MAX_PARTS },
  ),
});
export const ImageCompleteResult = Type.Object({ fileId: Type.String(), fileKey: Type.String(), url: Type.String() });

export const UploadedImage = Type.Object({
  id: Type.String(),
  fileKey: Type.String(),
  status: Type.String(),
  fileSize: Type.Integer(),
  s3Uri: Type.String(),
  url: Type.String(),
  bucket: Type.String(),
  orginalFileName: Type.String(),
  name: Type.String(),
  fileType: Type.Union([Type.String(), Type.Null()]),
  createDate: Timestamp,
  lastModificationDate: Timestamp,
});
export const ImageListQuery = Type.Object({
  ...PagingQuery,
  ...DateRangeQuery,
  fileType: Type.Optional(ArrayQuery),
  status: Type.Optional(ArrayQuery),
  ids: Type.Optional(ArrayQuery),
});
export const ImageList = Paged(UploadedImage);
export const DeletedFile = Type.Object({ deletedFileKey: Type.String() });

export const Frame = Type.Object({
  id: Type.String(),
  name: Type.String(),
  fileKey: Type.String(),
  bucket: Type.String(),
  s3Uri: Type.String(),
  url: Type.String(),
  second: Type.Union([Type.Integer(), Type.Null()]),
  createDate: Timestamp,
});
export { MAX_IMAGE_SIZE };
