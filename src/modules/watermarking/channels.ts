import { and, eq } from 'drizzle-orm';
import type { PlatformContext } from '../../context.ts';
import type { LiveRendition, LiveWatermark } from '../../media/live/index.ts';
import { gridSignature, patternFrame, patternValues } from '../../media/watermark/pattern.ts';
import { recordEvent } from '../../platform/events.ts';
import { newId } from '../../platform/ids.ts';
import { getSettings } from './settings.service.ts';
import { watermarkingAssets } from './tables.ts';

/** The marked rendition of a channel: the smallest rung of at least 360p (two more encodes on a small machine), else the tallest. */
function markedRung(ladder: LiveRendition[]): LiveRendition | undefined {
  const sorted = [...ladder].sort((a, b) => a.height - b.height);
  return sorted.find((r) => r.height >= 360) ?? sorted.at(-1);
}

const even = (n: number) => Math.max(2, Math.round(n / 2) * 2);

/**
 * The watermarking asset of a channel with `isWatermarkProtected`, made on its first start and kept after (sessions
 * and tokens outlive restarts; the pattern, its size and the code length never change under them). Answers what the
 * live pipeline needs to mark its output; undefined for a channel without video.
 */
export async function channelWatermark(
  ctx: PlatformContext,
  tenantId: string,
  channelId: string,
  title: string,
  ladder: LiveRendition[],
  segmentSeconds: number,
): Promise<LiveWatermark | undefined> {
  const where = and(eq(watermarkingAssets.tenantId, tenantId), eq(watermarkingAssets.channelId, channelId));
  let [row] = await ctx.db.select().from(watermarkingAssets).where(where);
  if (!row) {
    const rung = markedRung(ladder);
    if (!rung) return undefined;
    const settings = await getSettings(ctx.db, tenantId);
    const id = newId();
    const [width, height] = [even(rung.width), even(rung.height)];
    const signature = gridSignature(patternFrame(patternValues(id, width, height), width, height, settings.strength, 1), width, height);
    await ctx.db.transaction(async (tx) => {
      const made = await tx
        .insert(watermarkingAssets)
        .values({
          id,
          tenantId,
          channelId,
          metadata: { title },
          status: 'Available',
          progress: 100,
          width,
          height,
          videoBitrateKbps: Math.round(rung.videoBitrate / 1000),
          segmentDuration: Math.max(1, Math.round(segmentSeconds)),
          userNumberBits: settings.userNumberBits,
          strength: settings.strength,
          signature: Array.from(signature),
        })
        .onConflictDoNothing()
        .returning({ id: watermarkingAssets.id });
      if (made.length) await recordEvent(tx, tenantId, 'watermarking.asset.available', { id, channelId });
    });
    [row] = await ctx.db.select().from(watermarkingAssets).where(where);
  }
  const frameRate = markedRung(ladder)?.frameRate ?? 25;
  return { seed: row.id, strength: row.strength, width: row.width!, height: row.height!, videoBitrate: (row.videoBitrateKbps ?? 700) * 1000, frameRate };
}
