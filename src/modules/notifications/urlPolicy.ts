import { guardedLookup, literalBlockedReason } from '../../platform/addressGuard.ts';
import { validationError } from '../../platform/errors.ts';

export const ALLOW_PRIVATE_SETTING = 'MEDIAPLANE_WEBHOOK_ALLOW_PRIVATE=true';

/**
 * Checks a webhook URL when it is written: http or https, and, unless private targets are allowed, not a private
 * address literal. Host names are checked where it matters, on the addresses they resolve to at each delivery
 * (addressGuard): a name's addresses can change after the check.
 */
export function checkWebhookUrl(raw: string, allowPrivate: boolean): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw validationError('url', 'must be an absolute http or https URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw validationError('url', 'must use http or https');
  if (!allowPrivate) {
    const reason = literalBlockedReason(url);
    if (reason) throw validationError('url', `${reason}; deliveries to private addresses are refused unless ${ALLOW_PRIVATE_SETTING}`);
  }
  return url.toString();
}

/** The `lookup` of the agents that deliver webhooks (see platform/addressGuard.ts). */
export const addressGuard = guardedLookup(ALLOW_PRIVATE_SETTING);
