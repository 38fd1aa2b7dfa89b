import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { cachedList, type ListCache } from '../../platform/listCache.ts';
import { withErrors } from '../../platform/schemas.ts';
import * as s from './schemas.ts';
import { listPresets } from './service.ts';

export const transcoderRoutes: FastifyPluginAsyncTypebox<{ listCache?: ListCache }> = async (app, { listCache }) => {
  app.get(
    '/transcoder/v1/presets',
    {
      // The catalogue is data in the code: no trigger bumps it, its pages are rendered once per process.
      config: { access: 'read', listCache: 'transcoder.presets' },
      schema: {
        tags: ['Transcoder'],
        summary: 'List available presets',
        description: 'Lists the transcoding presets a VOD asset or output can name, filtered by media type.',
        querystring: s.PresetListQuery,
        response: withErrors({ 200: s.PresetList }),
      },
    },
    (req, reply) => cachedList(listCache, req, reply, async () => listPresets(req.query)),
  );
};
