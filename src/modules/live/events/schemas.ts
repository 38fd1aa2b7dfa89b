import { Type } from 'typebox';
import { ArrayQuery, DateRangeQuery, TagAttributeQuery } from '../../../platform/filters.ts';
import { Paged, PagingQuery } from '../../../platform/paging.ts';
import { Attributes, DateTime, Metadata, ProtectionDetails, Tags, Timestamp, Uuid } from '../../../platform/schemas.ts';
import { fixedAfterCreation } from '../../../platform/strictBodies.ts';

/** Event ids (spec, Event and Limits); a path with another id is a 400, not a 404. */
export const EVENT_ID_PATTERN = '^[a-zA-Z0-9_-]{1,128}$';
export const EventId = Type.String({ pattern: EVENT_ID_PATTERN, description: 'pattern ^[a-zA-Z0-9_-]{1,128}$' });

const Title = Type.String({ maxLength: 1024 });

export const EventCreate = Type.Object({
  channelId: Uuid,
  start: DateTime,
  end: { ...DateTime, description: 'after start' },
  title: Type.Optional(Title),
  ensureChannel: Type.Optional(
    Type.Boolean({ description: 'the channel (activationMode EventBased) is started before start and stopped after end, for the event' }),
  ),
  metadata: Type.Optional(Metadata),
  tags: Type.Optional(Tags),
  attributes: Type.Optional(Attributes),
  distributionInfo: Type.Optional(Type.Object({ accessPolicyId: Type.Optional(Type.Union([Uuid, Type.Null()])) })),
});

export const EventPatch = Type.Object(
  {
    start: Type.Optional({ ...DateTime, description: 'only while the event is Scheduled' }),
    end: Type.Optional({ ...DateTime, description: 'after start; not once the event is Finished' }),
    title: Type.Optional(Type.Union([Title, Type.Null()])),
    ensureChannel: Type.Optional(Type.Boolean()),
    metadata: Type.Optional(Metadata),
    tags: Type.Optional(Tags),
    attributes: Type.Optional(Attributes),
    accessPolicyId: Type.Optional(Type.Union([Uuid, Type.Null()], { description: 'null removes the policy; omitted leaves it' })),
  },
  fixedAfterCreation('channelId'),
);

const EndpointInfo = Type.Object({
  id: Type.Optional(Type.String()),
  accessType: Type.String(),
  format: Type.String(),
  url: Type.Optional(Type.String()),
  preset: Type.Optional(Type.String()),
  protection: Type.String({ description: '`None`, or of a channel with DRM endpoints `Aes128` (HlsDrm, AES-128) or `ClearKey` (HlsDrm SAMPLE-AES, DashDrm)' }),
  protectionDetails: Type.Optional(ProtectionDetails),
  durationMilliseconds: Type.Optional(Type.Union([Type.Integer(), Type.Null()])),
  size: Type.Optional(Type.Union([Type.Integer(), Type.Null()])),
  manifest: Type.Optional(Type.String()),
  hasVerticalOrientation: Type.Optional(Type.Boolean()),
});

export const Event = Type.Object({
  id: Type.String(),
  channelId: Type.String(),
  start: Timestamp,
  end: Timestamp,
  title: Type.Union([Type.String(), Type.Null()]),
  ensureChannel: Type.Boolean(),
  catchup: Type.Object({ endpoints: Type.Array(EndpointInfo) }),
  metadata: Metadata,
  tags: Type.Array(Type.String()),
  attributes: Type.Array(Type.String()),
  createDate: Timestamp,
  lastModificationDate: Timestamp,
  status: Type.String({ description: 'Scheduled, Live or Finished' }),
  distribution: Type.Object({
    accessPolicyId: Type.Union([Type.String(), Type.Null()]),
    accessPolicyName: Type.Union([Type.String(), Type.Null()]),
  }),
});

export const EventListQuery = Type.Object({
  ...PagingQuery,
  ...DateRangeQuery,
  ...TagAttributeQuery,
  channelId: Type.Optional(Uuid),
  searchStart: Type.Optional({ ...DateTime, description: 'events whose time range overlaps [searchStart, searchEnd]' }),
  searchEnd: Type.Optional(DateTime),
  ids: Type.Optional(ArrayQuery),
  channels: Type.Optional(ArrayQuery),
  statuses: Type.Optional(ArrayQuery),
});
export const EventList = Paged(Event);

export const EventParams = Type.Object({ id: EventId });
