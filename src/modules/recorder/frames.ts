import { and, eq } from 'drizzle-orm';
import type { PlatformContext } from '../../context.ts';
import { isUuid } from '../../platform/ids.ts';
import type { FrameSource } from '../../platform/playables.ts';
import { tallestVideoTrack } from './outputs.ts';
import { archivePrefix, mediaPrefix, outputPrefix } from './storageKeys.ts';
import { recorderOutputs, recorderRecordings, recorderSegments } from './tables.ts';

/**
 * What the streaming frames are taken from for a recording once it is `Available`: the tallest recorded rendition's
 * playlist (the catch-up copy while it is kept, else the archive), else the first available transcoded output.
 */
export async function recordingFrameSource(ctx: PlatformContext, tenantId: string, id: string): Promise<FrameSource | undefined> {
  if (!isUuid(id)) return undefined;
  const [rec] = await ctx.db
    .select({ id: recorderRecordings.id, status: recorderRecordings.status })
    .from(recorderRecordings)
    .where(and(eq(recorderRecordings.tenantId, tenantId), eq(recorderRecordings.id, id.toLowerCase())));
  if (rec?.status !== 'Available') return undefined;
  const tracks = await ctx.db.selectDistinct({ track: recorderSegments.track }).from(recorderSegments).where(eq(recorderSegments.recordingId, rec.id));
  // An audio-only recording has no picture to take.
  const tallest = tallestVideoTrack(tracks.map((t) => t.track));
  if (tallest) {
    for (const prefix of [mediaPrefix(tenantId, rec.id), archivePrefix(tenantId, rec.id)]) {
      const key = `${prefix}${tallest}.m3u8`;
      if (await ctx.store.head(key)) return { location: await ctx.store.readableLocation(key), final: true };
    }
  }
  const outputs = await ctx.db
    .select({ id: recorderOutputs.id, endpoints: recorderOutputs.endpoints })
    .from(recorderOutputs)
    .where(and(eq(recorderOutputs.recordingId, rec.id), eq(recorderOutputs.status, 'Available')));
  for (const o of outputs) {
    const manifest = o.endpoints[0]?.manifest;
    if (manifest) return { location: await ctx.store.readableLocation(outputPrefix(tenantId, rec.id, o.id) + manifest), final: true };
  }
  return undefined;
}
