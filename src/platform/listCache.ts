import type { FastifyReply, FastifyRequest } from 'fastify';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The collection a list operation answers from (`core.api-keys`): its rendered pages are cached per tenant under
     * the collection's version, which the auth lookup reads in the same round trip. Only for lists whose body depends
     * on nothing but the tenant and the query string. A collection no trigger ever bumps (a catalogue that is data in
     * the code) stays at version 0 for the life of the process.
     */
    listCache?: string;
  }
}

/**
 * Rendered list pages (the JSON body), least recently used out first, bounded by the bytes of the bodies. A key names
 * the collection's version, so a change never has to find and evict anything: the next request reads the new
 * version and misses; old versions age out.
 */
export class ListCache {
  private readonly bodies = new Map<string, string>();
  private bytes = 0;

  constructor(private readonly maxBytes: number) {}

  get(key: string): string | undefined {
    const body = this.bodies.get(key);
    if (body !== undefined) {
      this.bodies.delete(key);
      this.bodies.set(key, body);
    }
    return body;
  }

  set(key: string, body: string): void {
    if (body.length > this.maxBytes) return;
    const old = this.bodies.get(key);
    if (old !== undefined) {
      this.bodies.delete(key);
      this.bytes -= old.length;
    }
    this.bodies.set(key, body);
    this.bytes += body.length;
    for (const [oldest, value] of this.bodies) {
      if (this.bytes <= this.maxBytes) break;
      this.bodies.delete(oldest);
      this.bytes -= value.length;
    }
  }
}

/**
 * Answers a list operation from the cache when the tenant's collection is still at the version this request's auth
 * lookup read, else computes the page, renders it with the route's response schema and keeps it. A page computed
 * after a newer change is kept under the older version: never staler than the version it is filed under.
 */
export async function cachedList(cache: ListCache | undefined, request: FastifyRequest, reply: FastifyReply, compute: () => Promise<unknown>) {
  const collection = request.routeOptions.config.listCache;
  if (!cache || !collection) return compute();
  const { tenantId, collectionVersion } = request.principal;
  const key = `${tenantId}\u0000${collection}\u0000${collectionVersion ?? 0}\u0000${JSON.stringify(request.query)}`;
  let body = cache.get(key);
  if (body === undefined) {
    body = String(reply.serialize(await compute()));
    cache.set(key, body);
  }
  return reply.type('application/json; charset=utf-8').send(body);
}
