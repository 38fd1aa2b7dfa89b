import type { FastifyInstance } from 'fastify';
import { and, eq } from 'drizzle-orm';
import type { PlatformContext } from '../../context.ts';
import { ApiError } from '../../platform/errors.ts';
import { isUuid } from '../../platform/ids.ts';
import { admitMedia, splitToken } from '../../platform/playback.ts';
import { contentTypeOf } from '../../storage/contentTypes.ts';
import { parseRange, rangeNotSatisfiable } from '../../storage/range.ts';
import { presetById } from '../transcoder/service.ts';
import { servesFile } from './drm.ts';
import { catchupPlayable } from './present.ts';
import { archivePrefix, mediaPrefix, outputPrefix } from './storageKeys.ts';
import { recorderOutputs, recorderRecordings } from './tables.ts';

const CORS = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'GET, HEAD, OPTIONS',
  'access-control-allow-headers': 'Range',
  // Date: dash.js falls back to the MPD response's Date when it cannot read the MPD's clock (MPDs stored before the
  // public clock, record.ts, named a HEAD of themselves).
  'access-control-expose-headers': 'Content-Length, Content-Range, Accept-Ranges, Date',
};

/**
 * Serves recordings to players: `GET /media/recordings/{tenant}/{recording}/{media|archive|outputs/{id}}/{path}`.
 * Each request checks what it plays: the catch-up copy (`media`) only while the catch-up is enabled and not expired,
 * the archive once `Available` (with a playback token for the recording unless `archive.public`), an output once
 * `Available`. Anything else is 404, like a missing file. The playback guards apply as to VOD and live media: a
 * recording is a streaming asset, and its own settings (or the tenant's) may ask for tokens on everything.
 */
export function registerRecordingDelivery(app: FastifyInstance, ctx: PlatformContext): void {
  const notFound = () => new ApiError(404, 'media_not_found', 'No such media file');

  // A DRM recording's outputs of clear presets are clear files (docs/decisions/recorder.md, "DRM channels"): they
  // play with a playback token for the recording only, whatever its settings; a DRM preset's are encrypted.
  const clearOutput = async (recordingId: string, path: string): Promise<boolean> => {
    const [part, outputId] = path.split('/');
    if (part !== 'outputs' || !outputId) return false;
    const [output] = await ctx.db
      .select({ preset: recorderOutputs.preset })
      .from(recorderOutputs)
      .where(and(eq(recorderOutputs.recordingId, recordingId), eq(recorderOutputs.id, outputId)));
    return !output || !presetById(output.preset)?.protection;
  };

  app.options('/media/recordings/*', { schema: { hide: true } }, async (_req, reply) =>
    reply
      .headers({ ...CORS, 'access-control-max-age': '86400' })
      .status(204)
      .send(),
  );

  app.route<{ Params: { tenantId: string; recordingId: string; '*': string } }>({
    method: ['GET', 'HEAD'],
    url: '/media/recordings/:tenantId/:recordingId/*',
    schema: { hide: true },
    handler: async (req, reply) => {
      const tenantId = req.params.tenantId.toLowerCase();
      const recordingId = req.params.recordingId.toLowerCase();
      const asked = req.params['*'] ?? '';
      if (!isUuid(tenantId) || !isUuid(recordingId) || asked.split('/').some((seg) => seg === '..' || seg === '' || seg === '.')) throw notFound();
      const [rec] = await ctx.db
        .select()
        .from(recorderRecordings)
        .where(and(eq(recorderRecordings.tenantId, tenantId), eq(recorderRecordings.id, recordingId)));
      // What does not exist is a 404 before any guard runs.
      if (!rec) throw notFound();
      // Tokens (the recording's settings, and a non-public archive always), allowed domains, observers; undefined when
      // it answered a redirect.
      const askedPath = splitToken(asked).path;
      const requiresToken = (askedPath.startsWith('archive/') && !rec.archive.public) || (rec.drm !== null && (await clearOutput(recordingId, askedPath)));
      const admitted = await admitMedia(ctx, req, reply, { delivery: 'recording', tenantId, assetId: recordingId, path: asked, requiresToken });
      if (admitted === undefined) return reply;
      const parts = admitted.split('/');
      let key: string;
      const [part, ...rest] = parts;
      if (part === 'media' && rest.length) {
        // A DRM recording's clear copy is there for its outputs only: the catch-up plays encrypted.
        if (!catchupPlayable(rec) || !servesFile(rec.drm, rest.join('/'))) throw notFound();
        key = mediaPrefix(tenantId, recordingId) + rest.join('/');
      } else if (part === 'archive' && rest.length) {
        if (rec.archive.status !== 'Available' || !servesFile(rec.drm, rest.join('/'))) throw notFound();
        key = archivePrefix(tenantId, recordingId) + rest.join('/');
      } else if (part === 'outputs' && rest.length > 1) {
        const [output] = await ctx.db
          .select({ status: recorderOutputs.status })
          .from(recorderOutputs)
          .where(and(eq(recorderOutputs.recordingId, recordingId), eq(recorderOutputs.id, rest[0]!)));
        if (output?.status !== 'Available') throw notFound();
        key = outputPrefix(tenantId, recordingId, rest[0]!) + rest.slice(1).join('/');
      } else throw notFound();
      const info = await ctx.store.head(key);
      if (!info) throw notFound();
      const path = parts.join('/');
      reply.headers({ ...CORS, 'accept-ranges': 'bytes' });
      const range = parseRange(req.headers.range, info.size);
      if (range === 'unsatisfiable') throw rangeNotSatisfiable(reply, req.headers.range, info.size);
      // A running recording's playlists grow; a finished copy's never change, but its catch-up may expire.
      reply.headers({ 'content-type': contentTypeOf(path), 'cache-control': /\.(m3u8|mpd)$/.test(path) ? 'public, max-age=1' : 'public, max-age=3600' });
      if (range) {
        reply
          .status(206)
          .header('content-range', `bytes ${range.start}-${range.end}/${info.size}`)
          .header('content-length', range.end - range.start + 1);
      } else {
        reply.header('content-length', info.size);
      }
      if (req.method === 'HEAD') return reply.send();
      return reply.send(await ctx.store.getStream(key, range ?? undefined));
    },
  });
}
