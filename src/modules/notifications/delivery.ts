import type { FastifyBaseLogger } from 'fastify';
import type { Metrics } from '../../platform/metrics.ts';
import { postJson, type SendOptions } from './sender.ts';
import { eventPayload, signatureHeaders, type SigningSecrets, type StoredEvent } from './signing.ts';
import type { SendAttempt } from './tables.ts';

/** Where a delivery attempt is logged (pino's or Fastify's logger) and counted. */
export interface DeliveryObservers {
  log?: Pick<FastifyBaseLogger, 'info'>;
  metrics?: Metrics;
}

/**
 * One signed delivery attempt of one event to one URL, as the event log records it. The attempt is logged with its
 * own `X_REQUEST_ID` (`deliveryRequestId`) and the `requestId` of the request that caused the event, which relates
 * what a receiver saw to what the platform did.
 */
export async function sendEvent(
  url: string,
  secrets: SigningSecrets,
  event: StoredEvent,
  opts: SendOptions,
  { log, metrics }: DeliveryObservers = {},
): Promise<{ ok: boolean; attempt: SendAttempt }> {
  const body = JSON.stringify(eventPayload(event));
  const time = new Date();
  const headers = signatureHeaders(secrets, event.id, body, time);
  const result = await postJson(url, body, headers, opts);
  log?.info(
    {
      ...(event.requestId ? { requestId: event.requestId } : {}),
      deliveryRequestId: headers.X_REQUEST_ID,
      eventId: event.id,
      eventType: event.type,
      responseCode: result.responseCode,
      ok: result.ok,
      ms: Date.now() - time.getTime(),
    },
    'webhook delivery',
  );
  metrics?.webhookDeliveries.inc({ outcome: result.ok ? 'delivered' : 'failed' });
  if (result.ok && event.type !== 'webhook.test') metrics?.webhookLag.observe((Date.now() - event.occuredAt.getTime()) / 1000);
  return { ok: result.ok, attempt: { time: time.toISOString(), responseCode: result.responseCode, responseContent: result.responseContent } };
}
