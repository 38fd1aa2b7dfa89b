import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { validationError } from '../../platform/errors.ts';

export const ALLOW_PRIVATE_SETTING = 'MEDIAPLANE_WEBHOOK_ALLOW_PRIVATE=true';

/** Why an address may not receive webhooks, or undefined when it is a public unicast address. */
export function blockedReason(address: string): string | undefined {
  if (!ipaddr.isValid(address)) return `"${address}" is not an IP address`;
  // IPv4-mapped IPv6 addresses (::ffff:10.0.0.1) are judged as the IPv4 address they carry.
  const ip = ipaddr.process(address);
  const range = ip.range();
  // Only plain unicast is public: private, loopback, link-local, unique-local, CGNAT, multicast, reserved, and the
  // IPv6 transition ranges (6to4, Teredo, NAT64) that can carry an internal IPv4 address, are all refused.
  return range === 'unicast' ? undefined : `${address} is a ${range} address`;
}

/** The host of a URL as `net` sees it: without the brackets of an IPv6 literal. */
export const bareHost = (url: URL): string => url.hostname.replace(/^\[(.*)\]$/, '$1');

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
    const host = bareHost(url).toLowerCase();
    const reason = isIP(host) ? blockedReason(host) : undefined;
    if (reason) throw validationError('url', `${reason}; deliveries to private addresses are refused unless ${ALLOW_PRIVATE_SETTING}`);
  }
  return url.toString();
}

export class BlockedAddressError extends Error {
  readonly code = 'EWEBHOOKBLOCKED';
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for http(s) agents: resolves the host and refuses the connection when any of its addresses is private.
 * Checking at connect time, on the addresses actually used, leaves no gap for DNS rebinding between check and use.
 */
export function addressGuard(hostname: string, options: { family?: number | string; all?: boolean }, callback: LookupCallback): void {
  const family = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : Number(options.family ?? 0);
  dnsLookup(hostname, { all: true, family: family as 0 | 4 | 6 }, (err, addresses) => {
    if (err) return callback(err, []);
    for (const a of addresses) {
      const reason = blockedReason(a.address);
      if (reason) {
        return callback(new BlockedAddressError(`refused: ${hostname} resolves to ${reason}; set ${ALLOW_PRIVATE_SETTING} to allow`), []);
      }
    }
    if (options.all) return callback(null, addresses);
    callback(null, addresses[0].address, addresses[0].family);
  });
}
