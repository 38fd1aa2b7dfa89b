// Signing in: the tenant id and API key are checked against the API and kept in sessionStorage only (this tab, until
// it closes), never in localStorage or a cookie.
import { createClient } from '/console/sdk/index.js';

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
