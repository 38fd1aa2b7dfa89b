import { and, asc, eq, or } from 'drizzle-orm';
import type { PlatformContext } from '../../context.ts';
import { ApiError, conflict, validationError } from '../../platform/errors.ts';
import { isUuid, newId } from '../../platform/ids.ts';
import { streamingDomains } from './tables.ts';

/** How long a process trusts its copy of a tenant's domains (media requests read them on every request). */
const CACHE_MS = 5000;
const cache = new Map<string, { until: number; hosts: string[] }>();

const present = (r: typeof streamingDomains.$inferSelect) => ({ playerDomainId: r.id, analyticsDomainId: r.analyticsDomainId, url: r.url });

/**
 * The host a domain entry allows, from what the tenant wrote: `https://www.example.com/page`, `example.com`,
 * `*.example.com` (every subdomain, not the domain itself), `localhost:8080` (ports are ignored: a page's host decides).
 */
export function domainHost(url: string): string {
  const raw = url.trim();
  const wildcard = raw.replace(/^[a-z][a-z0-9+.-]*:\/\//i, '').startsWith('*.');
  const bare = raw.replace(/^([a-z][a-z0-9+.-]*:\/\/)?\*\./i, '$1');
  let host: string;
  try {
    host = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(bare) ? bare : `https://${bare}`).hostname.toLowerCase();
  } catch {
    throw validationError('url', `"${url}" is not a domain or URL (examples: example.com, https://www.example.com, *.example.com)`);
  }
  if (!host || !/^[a-z0-9.[\]:_-]+$/.test(host) || (!host.includes('.') && host !== 'localhost' && !host.startsWith('[')))
    throw validationError('url', `"${url}" is not a domain or URL (examples: example.com, https://www.example.com, *.example.com)`);
  return wildcard ? `*.${host}` : host;
}

export async function listDomains(ctx: PlatformContext, tenantId: string) {
  const rows = await ctx.db.select().from(streamingDomains).where(eq(streamingDomains.tenantId, tenantId)).orderBy(asc(streamingDomains.createDate));
  return rows.map(present);
}

export async function addDomain(ctx: PlatformContext, tenantId: string, url: string) {
  const host = domainHost(url);
  const [row] = await ctx.db
    .insert(streamingDomains)
    .values({ id: newId(), analyticsDomainId: newId(), tenantId, url: url.trim(), host })
    .onConflictDoNothing()
    .returning();
  if (!row) throw conflict('domain_already_allowed', `${host} is already an allowed domain of this tenant`);
  cache.delete(tenantId);
  return present(row);
}

/** Deletes the entry either id names (both may be given: they name the same entry). */
export async function deleteDomain(ctx: PlatformContext, tenantId: string, q: { playerDomainId?: string; analyticsDomainId?: string }) {
  if (!q.playerDomainId && !q.analyticsDomainId) throw validationError('playerDomainId', 'give playerDomainId or analyticsDomainId');
  const ids = [q.playerDomainId, q.analyticsDomainId].filter((x): x is string => !!x);
  const rows = ids.every(isUuid)
    ? await ctx.db
        .delete(streamingDomains)
        .where(
          and(
            eq(streamingDomains.tenantId, tenantId),
            or(
              q.playerDomainId ? eq(streamingDomains.id, q.playerDomainId) : undefined,
              q.analyticsDomainId ? eq(streamingDomains.analyticsDomainId, q.analyticsDomainId) : undefined,
            ),
          ),
        )
        .returning({ id: streamingDomains.id })
    : [];
  cache.delete(tenantId);
  if (!rows.length) throw new ApiError(404, 'domain_not_found', `Allowed domain ${ids.join(' / ')} was not found`);
}

async function allowedHosts(ctx: PlatformContext, tenantId: string): Promise<string[]> {
  const hit = cache.get(tenantId);
  if (hit && hit.until > Date.now()) return hit.hosts;
  const rows = await ctx.db.select({ host: streamingDomains.host }).from(streamingDomains).where(eq(streamingDomains.tenantId, tenantId));
  if (cache.size > 10_000) cache.clear();
  const hosts = rows.map((r) => r.host);
  cache.set(tenantId, { until: Date.now() + CACHE_MS, hosts });
  return hosts;
}

const hostMatches = (host: string, allowed: string) => (allowed.startsWith('*.') ? host.endsWith(allowed.slice(1)) : host === allowed);

/**
 * Whether a page at `originOrReferer` (an Origin or Referer header) may play the tenant's media: always when the tenant
 * has no allowed domains; otherwise when its host is one of them, or the platform's own (the embed player). A request
 * with neither header (a native player, ffprobe) is not a page and is allowed: tokens, not domains, protect content.
 */
export async function isOriginAllowed(ctx: PlatformContext, tenantId: string, originOrReferer: string | undefined): Promise<boolean> {
  const hosts = await allowedHosts(ctx, tenantId);
  if (!hosts.length || !originOrReferer) return true;
  let host: string;
  try {
    host = new URL(originOrReferer).hostname.toLowerCase();
  } catch {
    return false;
  }
  if (host === ctx.config.publicUrl.hostname.toLowerCase()) return true;
  return hosts.some((h) => hostMatches(host, h));
}

/** The refusal of a page from a domain the tenant did not allow. */
export function originRefused(originOrReferer: string | undefined): ApiError {
  let from = 'this origin';
  try {
    if (originOrReferer) from = new URL(originOrReferer).host;
  } catch {
    // an Origin such as `null` (a sandboxed frame) names no host
  }
  return new ApiError(
    403,
    'origin_not_allowed',
    `Pages from ${from} may not play this tenant's media: the tenant allows other domains (GET /streaming/v1/domains)`,
  );
}
