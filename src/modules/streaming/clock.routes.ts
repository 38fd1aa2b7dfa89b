import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { MEDIA_CLOCK_PATH } from '../../platform/playback.ts';
import { mediaResponse } from '../../platform/schemas.ts';

const Clock = mediaResponse('text/plain', Type.Unsafe<string>({ type: 'string', format: 'date-time' }), 'the time, e.g. `2026-11-24T22:10:00.123Z`');

/**
 * The delivery's clock for players (`MEDIA_CLOCK_PATH`): a stored dynamic MPD (a running recording's) names it in its
 * UTCTiming. It is tenant-free and needs no credentials or token, so a player of a token-protected catch-up reaches it
 * too (a HEAD of the MPD's own address, the other way a stored MPD could give the time, is refused without the token
 * the MPD cannot carry). It tells the time only: nothing of any tenant.
 */
export const mediaClockRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    MEDIA_CLOCK_PATH,
    {
      schema: {
        tags: ['Streaming delivery'],
        summary: 'Get media clock',
        description:
          "The server's time as ISO 8601 UTC with milliseconds (text/plain), for players of dynamic DASH manifests (UTCTiming `urn:mpeg:dash:utc:http-iso:2014`); public, from any origin, never cached.",
        security: [],
        // 400: what the HTTP layer refuses of any request (no Host header), in the one error shape.
        response: { 200: Clock, 400: Type.Ref('Error') },
      },
    },
    async (_req, reply) =>
      reply
        .headers({
          'content-type': 'text/plain; charset=utf-8',
          'access-control-allow-origin': '*',
          // A cached answer is a wrong time.
          'cache-control': 'no-store',
        })
        .send(new Date().toISOString()),
  );
};
