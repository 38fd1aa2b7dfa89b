import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { PlatformContext } from '../../context.ts';
import { isUuid } from '../../platform/ids.ts';
import { publicRouteLimit } from '../../platform/rateLimit.ts';
import { isOriginAllowed, originRefused } from '../streaming/index.ts';
import { BeaconBatch, rowOf } from './beacons.ts';
import { activeTenants } from './tenantCheck.ts';
import { clientOf } from './userAgent.ts';
import { BeaconWriter } from './writer.ts';

/** The host of the page that sent a request: its Origin, else its Referer; null when neither is a URL. */
export function pageHostOf(req: FastifyRequest): string | null {
  for (const header of [req.headers.origin, req.headers.referer]) {
    if (typeof header !== 'string') continue;
    try {
      return new URL(header).host || null;
    } catch {
      // Not a URL (or "null"): try the next one.
    }
  }
  return null;
}

const NoContent = Type.Unsafe<undefined>({ type: 'null', description: 'stored' });

/**
 * `POST /player/v1/{tenantId}/beacons`: what players report. Public (a viewer has no API key), so it is limited per
 * tenant (`MEDIAPLANE_BEACON_RATE_LIMIT_PER_MINUTE`), refused from pages outside the tenant's allowed domains,
 * validated beacon by beacon, and written in groups (writer.ts).
 */
export const beaconRoutes: FastifyPluginAsyncTypebox<{ ctx: PlatformContext; writer: BeaconWriter }> = async (app, { ctx, writer }) => {
  // navigator.sendBeacon, which a page sends as it goes away, can carry JSON only as text/plain without a CORS
  // preflight: in this route (and only here) a text/plain body is read as JSON.
  const json = app.getDefaultJsonParser('error', 'error');
  app.addContentTypeParser('text/plain', { parseAs: 'string' }, (req, body, done) => json(req, body as string, done));
  const checkTenant = activeTenants(ctx.db);
  const limit = publicRouteLimit(ctx.config.beaconRateLimitPerMinute, (req) => {
    const id = (req.params as { tenantId?: string }).tenantId ?? '';
    return `beacons:${isUuid(id) ? id.toLowerCase() : 'invalid'}`;
  });

  app.post(
    '/player/v1/:tenantId/beacons',
    {
      config: { rateLimit: limit },
      schema: {
        tags: ['Player'],
        summary: 'Send player beacons',
        description:
          'Stores up to 100 beacons of a player (no API key). Answers 204 once they are stored. The body is JSON, sent as application/json or, by navigator.sendBeacon, as text/plain.',
        security: [],
        consumes: ['application/json', 'text/plain'],
        params: Type.Object({ tenantId: Type.String({ format: 'uuid' }) }),
        body: BeaconBatch,
        response: { 204: NoContent, 400: Type.Ref('Error'), 403: Type.Ref('Error'), 404: Type.Ref('Error'), 429: Type.Ref('Error') },
      },
    },
    async (req, reply) => {
      const tenantId = req.params.tenantId.toLowerCase();
      await checkTenant(tenantId);
      const page = req.headers.origin ?? req.headers.referer;
      if (!(await isOriginAllowed(ctx, tenantId, page))) throw originRefused(page);
      const now = new Date();
      const client = clientOf(req.headers['user-agent']);
      const domain = pageHostOf(req);
      await writer.write(req.body.beacons.map((b) => rowOf(tenantId, now, b, client, domain)));
      return reply.status(204).send();
    },
  );
};
