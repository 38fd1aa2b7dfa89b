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

class BlockedAddressError extends Error {
  readonly code = 'EADDRBLOCKED';
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;
export type Lookup = (hostname: string, options: { family?: number | string; all?: boolean }, callback: LookupCallback) => void;

/** `localhost` and every name under `.localhost` are loopback (RFC 6761), whatever a resolver says of them. */
function isLocalhostName(hostname: string): boolean {
  const h = hostname.toLowerCase().replace(/\.$/, '');
  return h === 'localhost' || h.endsWith('.localhost');
}

const LOOPBACK: LookupAddress[] = [
  { address: '127.0.0.1', family: 4 },
  { address: '::1', family: 6 },
];

/**
 * The addresses a host name stands for: loopback for `localhost` names (many resolvers know none for
 * `acme.localhost`, and a delivery to it would fail for a reason nobody sees), the system resolver's otherwise.
 */
function resolveName(hostname: string, family: 0 | 4 | 6, callback: (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void): void {
  if (isLocalhostName(hostname))
    return callback(
      null,
      LOOPBACK.filter((a) => family === 0 || a.family === family),
    );
  dnsLookup(hostname, { all: true, family }, (err, addresses) => callback(err, addresses ?? []));
}

const familyOf = (options: { family?: number | string }): 0 | 4 | 6 =>
  (options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : Number(options.family ?? 0)) as 0 | 4 | 6;

function answer(options: { all?: boolean }, addresses: LookupAddress[], callback: LookupCallback): void {
  if (options.all) return callback(null, addresses);
  callback(null, addresses[0].address, addresses[0].family);
}

/** The first of `addresses` that may not be reached, as the reason naming `setting`; undefined when all may. */
function refusal(hostname: string, addresses: LookupAddress[], setting: string): string | undefined {
  for (const a of addresses) {
    const reason = blockedReason(a.address);
    if (reason) return `${hostname} resolves to ${reason}; set ${setting} to allow`;
  }
  return undefined;
}

/**
 * A `lookup` for http(s) agents: resolves the host and refuses the connection when any of its addresses is private,
 * naming `setting`, the switch that allows them. Checking at connect time, on the addresses actually used, leaves no
 * gap for DNS rebinding between check and use.
 */
export function guardedLookup(setting: string): Lookup {
  return (hostname, options, callback) => {
    resolveName(hostname, familyOf(options), (err, addresses) => {
      if (err) return callback(err, []);
      if (!addresses.length) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), []);
      const reason = refusal(hostname, addresses, setting);
      if (reason) return callback(new BlockedAddressError(`refused: ${reason}`), []);
      answer(options, addresses, callback);
    });
  };
}

/** The `lookup` when private addresses are allowed: unguarded, but `localhost` names still reach loopback. */
export const openLookup: Lookup = (hostname, options, callback) => {
  resolveName(hostname, familyOf(options), (err, addresses) => {
    if (err) return callback(err, []);
    if (!addresses.length) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), []);
    answer(options, addresses, callback);
  });
};

/**
 * Judges a URL's host before it is stored, as a delivery to it would be judged: an address literal or a name whose
 * addresses include a private one is refused (the reason, naming `setting`). A name that does not resolve (yet), or
 * not within `timeoutMs`, passes: it is judged again at every connection.
 */
export function hostRefusal(url: URL, setting: string, timeoutMs = 2000): Promise<string | undefined> {
  const host = bareHost(url);
  if (isIP(host)) {
    const reason = blockedReason(host);
    return Promise.resolve(reason ? `${reason}; set ${setting} to allow` : undefined);
  }
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(undefined), timeoutMs);
    resolveName(host, 0, (err, addresses) => {
      clearTimeout(timer);
      resolve(err ? undefined : refusal(host, addresses, setting));
    });
  });
}
