import { createHmac, randomBytes } from 'node:crypto';
import { newId } from '../../platform/ids.ts';

/** The spec's delivery body (part 1, "Events"). */
export interface EventPayload {
  id: string;
  time: string;
  dataContentType: 'application/json';
  source: string;
  specVersion: '1.0';
  type: string;
  data: { id: string } & Record<string, unknown>;
}

/** An outbox row, as delivered. */
export interface StoredEvent {
  id: string;
  tenantId: string;
  type: string;
  data: EventPayload['data'];
  occuredAt: Date;
  /** The request that caused it, when one did. */
  requestId?: string | null;
}

export function eventPayload(e: StoredEvent): EventPayload {
  return {
    id: e.id,
    time: e.occuredAt.toISOString(),
    dataContentType: 'application/json',
    source: `/tenant/${e.tenantId}`,
    specVersion: '1.0',
    type: e.type,
    data: e.data,
  };
}

const SECRET_PREFIX = 'whsec_';

/** The secrets that sign a tenant's deliveries: the current one, and during a rotation's overlap the one before. */
export interface SigningSecrets {
  current: string;
  previous?: string;
  /** When `previous` stops signing. */
  previousExpiresAt?: Date;
}

/** A Standard Webhooks secret: `whsec_` and 32 random bytes in base64. */
export const newSigningSecret = (): string => SECRET_PREFIX + randomBytes(32).toString('base64');

/**
 * The headers that sign one delivery attempt (key derivation in docs/decisions/notifications.md):
 * - `X_SVC_SIGNATURE_V1` (spec): hex HMAC-SHA256 of the raw body, keyed with the current secret string as given.
 *   The spec's header holds one signature: during a rotation's overlap it is the new secret's.
 * - Standard Webhooks: `webhook-signature` is `v1,` + base64 HMAC-SHA256 of `<webhook-id>.<webhook-timestamp>.<body>`,
 *   keyed with the base64-decoded part of the secret after `whsec_`, so their libraries verify it unchanged. During
 *   an overlap it lists one signature per secret, space-separated, the current one first (the standard allows several).
 */
export function signatureHeaders(secrets: SigningSecrets | string, eventId: string, body: string, now = new Date()): Record<string, string> {
  const { current, previous } = typeof secrets === 'string' ? { current: secrets, previous: undefined } : secrets;
  const timestamp = String(Math.floor(now.getTime() / 1000));
  const standard = (secret: string) =>
    `v1,${createHmac('sha256', Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64'))
      .update(`${eventId}.${timestamp}.${body}`)
      .digest('base64')}`;
  return {
    X_REQUEST_ID: newId(),
    X_SVC_SIGNATURE_V1: createHmac('sha256', current).update(body).digest('hex'),
    'webhook-id': eventId,
    'webhook-timestamp': timestamp,
    'webhook-signature': [current, ...(previous ? [previous] : [])].map(standard).join(' '),
  };
}
