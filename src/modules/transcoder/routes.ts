import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { withErrors } from '../../platform/schemas.ts';
import * as s from './schemas.ts';
import { listPresets } from './service.ts';

export const transcoderRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/transcoder/v1/presets', {
    config: { access: 'read' },
    schema: { tags: ['Transcoder'], summary: 'List available presets', querystring: s.PresetListQuery, response: withErrors({ 200: s.PresetList }) },
  }, async (req) => listPresets(req.query));
};
