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

/** A Standard Webhooks secret: `whsec_` and 32 random bytes in base64. */
export const newSigningSecret = (): string => SECRET_PREFIX + randomBytes(32).toString('base64');

/**
 * The headers that sign one delivery attempt (key derivation in docs/decisions.md):
 * - `X_SVC_SIGNATURE_V1` (spec): hex HMAC-SHA256 of the raw body, keyed with the secret string as given.
 * - Standard Webhooks: `webhook-signature` is `v1,` + base64 HMAC-SHA256 of `<webhook-id>.<webhook-timestamp>.<body>`,
 *   keyed with the base64-decoded part of the secret after `whsec_`, so their libraries verify it unchanged.
 */
export function signatureHeaders(secret: string, eventId: string, body: string, now = new Date()): Record<string, string> {
  const timestamp = String(Math.floor(now.getTime() / 1000));
  const standardKey = Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');
  return {
    X_REQUEST_ID: newId(),
    X_SVC_SIGNATURE_V1: createHmac('sha256', secret).update(body).digest('hex'),
    'webhook-id': eventId,
    'webhook-timestamp': timestamp,
    'webhook-signature': `v1,${createHmac('sha256', standardKey).update(`${eventId}.${timestamp}.${body}`).digest('base64')}`,
  };
}
