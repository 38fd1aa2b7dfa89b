import { guardedLookup, hostRefusal, openLookup } from '../../platform/addressGuard.ts';
import { validationError } from '../../platform/errors.ts';

export const ALLOW_PRIVATE_SETTING = 'MEDIAPLANE_WEBHOOK_ALLOW_PRIVATE=true';

/**
 * Checks a webhook URL when it is written, the way a delivery to it is judged (platform/addressGuard.ts): http or
 * https, no credentials in it (docs/decisions/webhooks.md), and, unless private targets are allowed, a host that is
 * neither a private address nor a name resolving to one (`localhost` and `*.localhost` are loopback). A name that does
 * not resolve yet is accepted: every delivery resolves it again, and its addresses can change after this check.
 */
export async function checkWebhookUrl(raw: string, allowPrivate: boolean): Promise<string> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw validationError('url', 'must be an absolute http or https URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw validationError('url', 'must use http or https');
  if (url.username || url.password) {
    throw validationError(
      'url',
      'must not carry credentials (user:password@): they would be stored and shown in clear; receivers verify the signature headers instead',
    );
  }
  if (!allowPrivate) {
    const reason = await hostRefusal(url, ALLOW_PRIVATE_SETTING);
    if (reason) throw validationError('url', `${reason}: deliveries to private addresses are refused`);
  }
  return url.toString();
}

/** The `lookup` of the agents that deliver webhooks (see platform/addressGuard.ts). */
export const addressGuard = guardedLookup(ALLOW_PRIVATE_SETTING);
export { openLookup };
