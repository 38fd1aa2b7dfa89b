import { Type } from 'typebox';
import { ArrayQuery } from '../../platform/filters.ts';
import { Paged, PagingQuery } from '../../platform/paging.ts';
import { Timestamp, Uuid } from '../../platform/schemas.ts';
import { DEFAULT_OVERLAP_SECONDS, MAX_OVERLAP_SECONDS } from './secrets.ts';
import { DELIVERY_STATUSES, WEBHOOK_STATUSES } from './tables.ts';

const Name = Type.String({ minLength: 1, maxLength: 256 });
const Url = Type.String({ minLength: 1, maxLength: 2048, description: 'http or https URL that receives the events' });
const EventTypes = Type.Array(Type.String({ minLength: 1, maxLength: 128 }), {
  minItems: 1,
  maxItems: 100,
  description: 'event types to receive, from GET /notifications/v1/webhook-events/types (VodAssetCreated and VodAssetDeleted are accepted too)',
});
const NullableTimestamp = Type.Unsafe<string | null>({ type: ['string', 'null'], format: 'date-time' });

export const WebhookParams = Type.Object({ id: Uuid });
export const WebhookListQuery = Type.Object({ ...PagingQuery });

export const WebhookCreate = Type.Object({ name: Name, url: Url, eventTypes: EventTypes, isEnabled: Type.Optional(Type.Boolean()) });
export const WebhookUpdate = Type.Object({
  name: Type.Optional(Name),
  url: Type.Optional(Url),
  eventTypes: Type.Optional(EventTypes),
  isEnabled: Type.Optional(Type.Boolean({ description: 'true also makes an Unhealthy webhook Healthy again and resumes its deliveries' })),
});

export const Webhook = Type.Object({
  id: Type.String(),
  name: Type.String(),
  url: Type.String(),
  isEnabled: Type.Boolean(),
  status: Type.String({ description: WEBHOOK_STATUSES.join(' or ') }),
  createDate: Timestamp,
  lastModificationDate: Timestamp,
  eventTypes: Type.Array(Type.String()),
});
export const WebhookList = Paged(Webhook);

export const SignatureSecret = Type.Object({ secret: Type.String() });
export const SignatureSecretRotate = Type.Object({
  overlapSeconds: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: MAX_OVERLAP_SECONDS,
      description: `how long the replaced secret keeps signing deliveries too (default ${DEFAULT_OVERLAP_SECONDS}, 24 h; 0 ends it at once)`,
    }),
  ),
});
export const SignatureSecretRotated = Type.Object({
  secret: Type.String({ description: 'the new secret; X_SVC_SIGNATURE_V1 is signed with it from now on' }),
  previousSecretExpirationDate: Type.Unsafe<string | null>({
    type: ['string', 'null'],
    format: 'date-time',
    description: 'until then webhook-signature also carries a signature with the replaced secret; null without overlap',
  }),
});
export const EventTypeList = Type.Object({ data: Type.Array(Type.String()) });
export const WebhookTestResult = Type.Object({ responseCode: Type.Integer(), responseContent: Type.String() });

export const WebhookEventQuery = Type.Object({
  ...PagingQuery,
  start: Type.Optional(Type.String({ maxLength: 64, description: 'events that occured at or after this date (ISO 8601)' })),
  end: Type.Optional(Type.String({ maxLength: 64, description: 'events that occured at or before this date (ISO 8601)' })),
  statuses: Type.Optional(ArrayQuery),
  webhookId: Type.Optional(Uuid),
});

const Payload = Type.Object({
  id: Type.String(),
  time: Type.String(),
  dataContentType: Type.String(),
  source: Type.String(),
  specVersion: Type.String(),
  type: Type.String(),
  data: Type.Object({ id: Type.String() }, { additionalProperties: true }),
});

const WebhookEvent = Type.Object({
  id: Type.String({ description: 'the event id, as delivered' }),
  webhookId: Type.String(),
  lastSendAttempt: NullableTimestamp,
  type: Type.String(),
  status: Type.String({ description: DELIVERY_STATUSES.join(', ') }),
  payload: Payload,
  sendAttempts: Type.Array(Type.Object({ time: Type.String(), responseCode: Type.Integer(), responseContent: Type.String() })),
  occuredAt: Timestamp,
});
export const WebhookEventList = Paged(WebhookEvent);
