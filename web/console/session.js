// Signing in: the tenant id and API key are checked against the API and kept in sessionStorage only (this tab, until
// it closes), never in localStorage or a cookie.
import { createClient, MediaplaneError } from '/console/sdk/index.js';

const STORAGE_KEY = 'mediaplane.console.session';

/**
 * Asks the API who the key is (`GET /core/v1/settings/tenant/{id}`): a wrong key throws the API's error. Answers the
 * session: the SDK client, the tenant, and whether the key may change content.
 */
export async function signIn(tenantId, apiKey) {
  const client = createClient({ baseUrl: location.origin, tenantId: tenantId.trim(), apiKey: apiKey.trim() });
  const tenant = await client.request('GET', '/core/v1/settings/tenant/{id}', undefined, { params: { id: tenantId.trim() } });
  sessionStorage.setItem(STORAGE_KEY, JSON.stringify({ tenantId: tenantId.trim(), apiKey: apiKey.trim() }));
  const canWrite = tenant.grants.includes('write');
  return {
    client,
    download: (path, options) => download(client, apiKey.trim(), path, options),
    tenant,
    canWrite,
    readOnlyReason: canWrite ? '' : `This API key's role is ${tenant.roleType}: it can read but not change content.`,
  };
}

/** The session kept in this tab, signed in again (the key may have been revoked meanwhile); undefined when none. */
export async function resume() {
  const saved = JSON.parse(sessionStorage.getItem(STORAGE_KEY) ?? 'null');
  if (!saved) return undefined;
  try {
    return await signIn(saved.tenantId, saved.apiKey);
  } catch {
    signOut();
    return undefined;
  }
}

export function signOut() {
  sessionStorage.removeItem(STORAGE_KEY);
}

/**
 * An operation whose answer is not JSON (`GET /streaming/v1/qrcode/{id}`, a PNG), as a Blob: the SDK reads every
 * answer as text, which would garble its bytes. Sent with the headers the SDK sends; a refusal throws the API's error.
 */
async function download(client, apiKey, path, { params = {}, query = {}, signal } = {}) {
  const url = new URL(client.baseUrl + path.replace(/\{([^}]+)\}/g, (_, name) => encodeURIComponent(String(params[name]))));
  for (const [name, value] of Object.entries(query)) if (value !== undefined) url.searchParams.set(name, String(value));
  const res = await fetch(url, { headers: { 'x-api-key': apiKey, 'x-tenant-id': client.tenantId }, signal });
  if (res.ok) return res.blob();
  const body = await res.json().catch(() => undefined);
  throw new MediaplaneError(res.status, body?.status?.code ?? 'http_error', body?.status?.message ?? `${path}: the API answered ${res.status}`);
}
