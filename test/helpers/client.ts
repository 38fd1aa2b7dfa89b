/** A tenant's developer calling the API over HTTP (no test runner needed: benchmarks use it too). */
export interface TestTenant {
  /** How this client reaches the platform: `fetch`, or app.inject() for a platform without a port (inject.ts). */
  fetch: (url: string | URL, init?: RequestInit) => Promise<Response>;
  id: string;
  name: string;
  key: string;
  /** Calls the API as this tenant, with X-Api-Key and X-Tenant-Id. */
  call(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<Response>;
  json<T = any>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }>;
}

export function tenantClient(baseUrl: string, id: string, name: string, key: string, send: TestTenant['fetch'] = fetch): TestTenant {
  const call = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    send(baseUrl + path, {
      method,
      headers: {
        'x-api-key': key,
        'x-tenant-id': id,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...headers,
      },
      body: body !== undefined ? JSON.stringify(body) : undefined,
    });
  return {
    fetch: send,
    id,
    name,
    key,
    call,
    async json(method, path, body) {
      const res = await call(method, path, body);
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : undefined };
    },
  };
}
