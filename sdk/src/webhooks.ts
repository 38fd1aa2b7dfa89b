// Checks the signatures of a Mediaplane webhook delivery with WebCrypto (Node 20, browsers, edge runtimes alike).

/** Headers as Node gives them (`req.headers`), as `fetch` gives them (`Headers`), or any name → value record. */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

export interface VerifyWebhookOptions {
  /**
   * How far `webhook-timestamp` may be from now, in seconds, before the delivery is refused as a replay (default 300,
   * the Standard Webhooks recommendation).
   */
  toleranceSeconds?: number;
  /**
   * Refuse deliveries that carry only the spec's `X_SVC_SIGNATURE_V1` (no timestamp, so no replay protection).
   * Mediaplane always sends both schemes; default false.
   */
  requireTimestamp?: boolean;
  /** The receiver's clock, in milliseconds (tests). */
  now?: number;
}

const encoder = new TextEncoder();

/**
 * Whether a delivery was signed by Mediaplane with one of `secrets` (several during a rotation: the signature
 * secret before and after `POST /notifications/v1/webhook/signature-secret/rotate`).
 *
 * Standard Webhooks (`webhook-id`, `webhook-timestamp`, `webhook-signature`) when the delivery carries them: a
 * timestamp within `toleranceSeconds`, and `v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">` keyed with the
 * base64-decoded part of the secret after `whsec_`, among the space-separated signatures. Otherwise the spec's
 * `X_SVC_SIGNATURE_V1`: hex HMAC-SHA256 of the raw body keyed with the secret string as it is.
 *
 * `rawBody` must be the bytes as received: a body parsed and serialised again no longer matches.
 */
export async function verifyWebhook(
  rawBody: string | Uint8Array | ArrayBuffer,
  headers: WebhookHeaders,
  secrets: string | readonly string[],
  { toleranceSeconds = 300, requireTimestamp = false, now = Date.now() }: VerifyWebhookOptions = {},
): Promise<boolean> {
  const keys = (typeof secrets === 'string' ? [secrets] : [...secrets]).filter((s) => s.length > 0);
  if (keys.length === 0) throw new TypeError('verifyWebhook: no secret given');
  const body = typeof rawBody === 'string' ? encoder.encode(rawBody) : new Uint8Array(rawBody);
  const header = headerReader(headers);

  const signatures = header('webhook-signature');
  if (signatures !== undefined) {
    const id = header('webhook-id');
    const timestamp = header('webhook-timestamp');
    if (!id || !timestamp || !/^\d+$/.test(timestamp)) return false;
    if (Math.abs(now / 1000 - Number(timestamp)) > toleranceSeconds) return false;
    const offered = signatures.split(' ').filter((s) => s.startsWith('v1,'));
    const signed = concat(encoder.encode(`${id}.${timestamp}.`), body);
    for (const secret of keys) {
      const key = standardKey(secret);
      if (!key) continue;
      const expected = `v1,${toBase64(await hmac(key, signed))}`;
      if (offered.some((s) => equalInConstantTime(s, expected))) return true;
    }
    return false;
  }

  const spec = header('x_svc_signature_v1') ?? header('x-svc-signature-v1');
  if (spec === undefined || requireTimestamp) return false;
  for (const secret of keys) {
    if (equalInConstantTime(spec.toLowerCase(), toHex(await hmac(encoder.encode(secret), body)))) return true;
  }
  return false;
}

function headerReader(headers: WebhookHeaders): (name: string) => string | undefined {
  if (typeof (headers as Headers).get === 'function' && typeof (headers as Headers).has === 'function') {
    return (name) => (headers as Headers).get(name) ?? undefined;
  }
  const lower = new Map(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), Array.isArray(v) ? v.join(' ') : v]));
  return (name) => lower.get(name) ?? undefined;
}

/** The Standard Webhooks key: the base64 after `whsec_` (or the whole secret without the prefix); none if not base64. */
function standardKey(secret: string): Uint8Array | undefined {
  try {
    return fromBase64(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret);
  } catch {
    return undefined;
  }
}

async function hmac(key: Uint8Array, data: Uint8Array): Promise<Uint8Array> {
  const k = await crypto.subtle.importKey('raw', key as Uint8Array<ArrayBuffer>, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  return new Uint8Array(await crypto.subtle.sign('HMAC', k, data as Uint8Array<ArrayBuffer>));
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

/** Compares every character whatever the first difference, so that the time taken says nothing about the signature. */
function equalInConstantTime(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

const toHex = (bytes: Uint8Array) => Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
const toBase64 = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes));
const fromBase64 = (text: string) => Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
