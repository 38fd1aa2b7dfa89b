import type { FastifyInstance } from 'fastify';
import { and, eq } from 'drizzle-orm';
import type { PlatformContext } from '../../context.ts';
import { isManifestPath, registerMediaDelivery } from '../../platform/mediaDelivery.ts';
import { splitToken } from '../../platform/playback.ts';
import { presetById } from '../transcoder/index.ts';
import { servesFile } from './drm.ts';
import { catchupPlayable } from './present.ts';
import { archivePrefix, mediaPrefix, outputPrefix } from './storageKeys.ts';
import { recorderOutputs, recorderRecordings } from './tables.ts';

/**
 * Serves recordings to players: `GET /media/recordings/{tenant}/{recording}/{media|archive|outputs/{id}}/{path}`,
 * through the platform's media delivery. Each request checks what it plays: the catch-up copy (`media`) only while
 * the catch-up is enabled and not expired, the archive once `Available` (with a playback token for the recording
 * unless `archive.public`), an output once `Available`. Anything else is 404, like a missing file. The playback guards
 * apply as to VOD and live media: a recording is a streaming asset, and its own settings (or the tenant's) may ask for
 * tokens on everything.
 */
export function registerRecordingDelivery(app: FastifyInstance, ctx: PlatformContext): void {
  const outputStatus = async (recordingId: string, outputId: string) =>
    (
      await ctx.db
        .select({ status: recorderOutputs.status, preset: recorderOutputs.preset })
        .from(recorderOutputs)
        .where(and(eq(recorderOutputs.recordingId, recordingId), eq(recorderOutputs.id, outputId)))
    )[0];

  registerMediaDelivery(app, ctx, {
    delivery: 'recording',
    urlName: 'recordings',
    async find(tenantId, recordingId, path) {
      const [rec] = await ctx.db
        .select()
        .from(recorderRecordings)
        .where(and(eq(recorderRecordings.tenantId, tenantId), eq(recorderRecordings.id, recordingId)));
      if (!rec) return undefined;
      const [part, outputId] = splitToken(path).path.split('/');
      // A DRM recording's outputs of clear presets are clear files (docs/decisions/recorder.md, "DRM channels"): they
      // play with a playback token for the recording only, whatever its settings; a DRM preset's are encrypted.
      const clearOutput = async () => {
        if (part !== 'outputs' || !outputId) return false;
        const output = await outputStatus(recordingId, outputId);
        return !output || !presetById(output.preset)?.protection;
      };
      const requiresToken = (part === 'archive' && !rec.archive.public) || (rec.drm !== null && (await clearOutput()));
      return { entity: { tenantId, rec }, requiresToken };
    },
    async locate({ tenantId, rec }, path) {
      const [part, ...rest] = path.split('/');
      const file = rest.join('/');
      let key: string;
      if (part === 'media' && rest.length) {
        // A DRM recording's clear copy is there for its outputs only: the catch-up plays encrypted.
        if (!catchupPlayable(rec) || !servesFile(rec.drm, file)) return undefined;
        key = mediaPrefix(tenantId, rec.id) + file;
      } else if (part === 'archive' && rest.length) {
        if (rec.archive.status !== 'Available' || !servesFile(rec.drm, file)) return undefined;
        key = archivePrefix(tenantId, rec.id) + file;
      } else if (part === 'outputs' && rest.length > 1) {
        if ((await outputStatus(rec.id, rest[0]!))?.status !== 'Available') return undefined;
        key = outputPrefix(tenantId, rec.id, rest[0]!) + rest.slice(1).join('/');
      } else return undefined;
      // A running recording's playlists grow; a finished copy's never change, but its catch-up may expire.
      return { key, cacheControl: isManifestPath(path) ? 'public, max-age=1' : 'public, max-age=3600' };
    },
  });
}
