import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * Outbound requests the platform makes on a tenant's behalf (webhook deliveries, overlay pictures) must not reach the
 * platform's own network: a tenant could otherwise read internal services or a cloud's metadata endpoint (SSRF).
 */

/** Why an address may not be reached, or undefined when it is a public unicast address. */
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
 * Why a URL whose host is an address literal may not be reached, or undefined: a public address, or a host name (a
 * name is judged on connect, on the addresses it resolves to then: `guardedLookup`).
 */
export function literalBlockedReason(url: URL): string | undefined {
  const host = bareHost(url).toLowerCase();
  return isIP(host) ? blockedReason(host) : undefined;
}

export class BlockedAddressError extends Error {
  readonly code = 'EADDRBLOCKED';
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;
export type Lookup = (hostname: string, options: { family?: number | string; all?: boolean }, callback: LookupCallback) => void;

/**
 * A `lookup` for http(s) agents: resolves the host and refuses the connection when any of its addresses is private,
 * naming `setting`, the switch that allows them. Checking at connect time, on the addresses actually used, leaves no
 * gap for DNS rebinding between check and use.
 */
export function guardedLookup(setting: string): Lookup {
  return (hostname, options, callback) => {
    const family = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : Number(options.family ?? 0);
    dnsLookup(hostname, { all: true, family: family as 0 | 4 | 6 }, (err, addresses) => {
      if (err) return callback(err, []);
      for (const a of addresses) {
        const reason = blockedReason(a.address);
        if (reason) return callback(new BlockedAddressError(`refused: ${hostname} resolves to ${reason}; set ${setting} to allow`), []);
      }
      if (options.all) return callback(null, addresses);
      callback(null, addresses[0].address, addresses[0].family);
    });
  };
}
