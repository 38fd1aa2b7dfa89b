import { postJson, type SendOptions } from './sender.ts';
import { eventPayload, signatureHeaders, type StoredEvent } from './signing.ts';
import type { SendAttempt } from './tables.ts';

/** One signed delivery attempt of one event to one URL, as the event log records it. */
export async function sendEvent(url: string, secret: string, event: StoredEvent, opts: SendOptions): Promise<{ ok: boolean; attempt: SendAttempt }> {
  const body = JSON.stringify(eventPayload(event));
  const time = new Date();
  const result = await postJson(url, body, signatureHeaders(secret, event.id, body, time), opts);
  return { ok: result.ok, attempt: { time: time.toISOString(), responseCode: result.responseCode, responseContent: result.responseContent } };
}
