import { Type } from 'typebox';
import { ArrayQuery, DateRangeQuery, TagAttributeQuery } from '../../platform/filters.ts';
import { Paged, PagingQuery } from '../../platform/paging.ts';
import { Attributes, Metadata, Tags, Timestamp, Uuid } from '../../platform/schemas.ts';
import { MAX_FILE_SIZE, MAX_PARTS } from './files.parts.ts';

const FileName = Type.String({ minLength: 1, maxLength: 1024 });

export const FileIdParams = Type.Object({ id: Uuid });
export const PartParams = Type.Object({ id: Uuid, partNumber: Type.Integer({ minimum: 1, maximum: MAX_PARTS }) });

export const StartBody = Type.Object({
  name: FileName,
  friendlyName: FileName,
  fileSize: Type.Integer({ minimum: 1, maximum: MAX_FILE_SIZE, description: 'bytes' }),
  metadata: Type.Optional(Metadata),
  tags: Type.Optional(Tags),
  attributes: Type.Optional(Attributes),
});
export const StartResult = Type.Object({
  fileId: Type.String(),
  multipartUrls: Type.Array(Type.String()),
  fileKey: Type.String(),
  partSize: Type.Integer(),
  lastPartSize: Type.Integer(),
  partsCount: Type.Integer(),
});

export const PartUrl = Type.Object({ url: Type.String() });

export const CompleteBody = Type.Object({
  fileId: Uuid,
  parts: Type.Array(
    Type.Object({
      partNumber: Type.Integer({ minimum: 1, maximum: MAX_PARTS }),
      eTag: Type.Optional(Type.String({ maxLength: 256, description: 'the ETag header of the part upload response' })),
    }),
    { minItems: 1, maxItems: MAX_PARTS },
  ),
});
export const CompleteResult = Type.Object({ fileId: Type.String(), fileKey: Type.String() });

export const ImportBody = Type.Object({
  url: Type.String({ minLength: 1, maxLength: 4096, description: 'an http or https URL the platform fetches the file from' }),
  name: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 1024,
      description: "the file's name, whose extension must be accepted (GET /vod/v1/filetypes); default: the URL's last path segment",
    }),
  ),
  friendlyName: Type.Optional(Type.String({ minLength: 1, maxLength: 1024, description: 'default: the name' })),
  metadata: Type.Optional(Metadata),
  tags: Type.Optional(Tags),
  attributes: Type.Optional(Attributes),
});
export const ImportResult = CompleteResult;
const ImportProgress = Type.Object(
  {
    url: Type.String({ description: 'the URL the file is fetched from' }),
    bytesReceived: Type.Integer(),
    progressPercent: Type.Optional(Type.Integer({ minimum: 0, maximum: 100, description: 'once the origin announced the size (Content-Length)' })),
  },
  { description: 'present on a file imported from a URL' },
);

export const CancelBody = Type.Object({
  delete: Type.Optional(Type.Boolean({ default: false, description: 'true deletes the file at once; false (or no body) marks it Error' })),
});

const ErrorMessage = Type.Union([Type.String(), Type.Null()], { description: 'why the file is in Error, in words (an import that failed or was cancelled)' });

const TranscodingTrack = Type.Object({
  trackSelector: Type.Object({ trackId: Type.String() }),
  type: Type.String({ description: 'Video, Audio or Caption' }),
  language: Type.Optional(Type.String()),
  name: Type.Optional(Type.String()),
});

const Common = {
  id: Type.String(),
  fileKey: Type.String(),
  status: Type.String({ description: 'Uploading, Completed or Error' }),
  fileSize: Type.Integer(),
  name: Type.String(),
  friendlyName: Type.String(),
  tags: Type.Array(Type.String()),
  attributes: Type.Array(Type.String()),
  createDate: Timestamp,
  lastModificationDate: Timestamp,
};

export const UploadedFile = Type.Object({
  ...Common,
  tenantId: Type.String(),
  metadata: Metadata,
  vodAssets: Type.Array(Type.String()),
  fileTypes: Type.String({ description: 'Video, Audio or Caption' }),
  s3Uri: Type.String(),
  location: Type.String(),
  bucket: Type.String(),
  orginalFileName: Type.String(),
  tracks: Type.Array(TranscodingTrack),
  errorMessage: ErrorMessage,
  import: Type.Optional(ImportProgress),
});

export const PatchBody = Type.Object({
  metadata: Type.Optional(Metadata),
  name: Type.Optional(FileName),
  friendlyName: Type.Optional(FileName),
  tags: Type.Optional(Tags),
  attributes: Type.Optional(Attributes),
});
export const FileSummary = Type.Object({ ...Common, metadata: Metadata, fileTypes: Type.String(), errorMessage: ErrorMessage });

export const DeleteResult = Type.Object({ deletedFileKey: Type.String() });

export const FileListQuery = Type.Object({
  ...PagingQuery,
  ...DateRangeQuery,
  ...TagAttributeQuery,
  fileType: Type.Optional(Type.String({ maxLength: 32, description: 'Video, Audio or Caption' })),
  status: Type.Optional(Type.String({ maxLength: 32, description: 'Uploading, Completed or Error' })),
  statuses: Type.Optional(ArrayQuery),
  ids: Type.Optional(ArrayQuery),
  allowedExtensionsFile: Type.Optional(ArrayQuery),
});
export const FileList = Paged(FileSummary);

export const Preview = Type.Object({ link: Type.String(), expirationDate: Timestamp });
/** What `detect` reads of each track beyond its TranscodingTrack: what a tenant checks before choosing tracks. */
export const DetectedTrackFacts = {
  codec: Type.String({ description: "ffprobe's codec name: h264, hevc, aac, opus, subrip, ..." }),
  width: Type.Optional(Type.Integer({ description: 'video: pixels' })),
  height: Type.Optional(Type.Integer({ description: 'video: pixels' })),
  frameRate: Type.Optional(Type.Number({ description: 'video: average frames per second, to 3 decimals (29.97)' })),
  durationMilliseconds: Type.Optional(Type.Integer({ description: "the track's own duration, when the file says" })),
  bitRate: Type.Optional(Type.Integer({ description: 'bits per second, when the file says (MP4 per stream; Matroska only with statistics tags)' })),
  channels: Type.Optional(Type.Integer({ description: 'audio: channel count' })),
  sampleRate: Type.Optional(Type.Integer({ description: 'audio: samples per second' })),
};
const DetectedTrack = Type.Object({ ...TranscodingTrack.properties, ...DetectedTrackFacts });
export const Tracks = Type.Object({
  tracks: Type.Array(DetectedTrack),
  durationMilliseconds: Type.Optional(Type.Integer({ description: "the file's duration; absent for a file without timing (captions)" })),
  bitRate: Type.Optional(Type.Integer({ description: "the file's bits per second" })),
  format: Type.String({ description: "ffprobe's container name: mov,mp4,m4a,3gp,3g2,mj2 / matroska,webm / srt ..." }),
});
export const Duration = Type.Object({ duration: Type.Integer({ description: 'milliseconds' }) });
export const FileTypes = Type.Object({ fileTypes: Type.Record(Type.String(), Type.Array(Type.String())) });
export const Languages = Type.Object({ languages: Type.Array(Type.String()) });
