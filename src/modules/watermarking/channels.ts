import { and, eq } from 'drizzle-orm';
import type { PlatformContext } from '../../context.ts';
import type { LiveRendition, LiveWatermark } from '../../media/live/index.ts';
import { gridSignature, patternFrame, patternValues } from '../../media/watermark/pattern.ts';
import { recordEvent } from '../../platform/events.ts';
import { newId } from '../../platform/ids.ts';
import { getSettings } from './settings.service.ts';
import { watermarkingAssets } from './tables.ts';

const even = (n: number) => Math.max(2, Math.round(n / 2) * 2);

/**
 * The marked rungs of a channel, at most `count` (each costs two more encodes of its size): the smallest rung of at
 * least 360p (else the tallest), the next ones up, then the ones below it, tallest first. Every rung when the ladder
 * is no longer than `count`.
 */
export function markedRungs(ladder: LiveRendition[], count: number): LiveRendition[] {
  const sorted = [...ladder].sort((a, b) => a.height - b.height);
  const first360 = sorted.findIndex((r) => r.height >= 360);
  const from = first360 === -1 ? Math.max(0, sorted.length - 1) : first360;
  const chosen = [...sorted.slice(from), ...sorted.slice(0, from).reverse()].slice(0, Math.max(1, count));
  return chosen.sort((a, b) => b.height - a.height).map((r) => ({ ...r, width: even(r.width), height: even(r.height) }));
}

/**
 * The watermarking asset of a channel with `isWatermarkProtected`, made on its first start and kept after (sessions
 * and tokens outlive restarts; the pattern, its size and the code length never change under them). Answers what the
 * live pipeline needs to mark its output (the rungs are chosen at every start: the ladder and the operator's
 * `MEDIAPLANE_LIVE_WATERMARK_RUNGS` may change between runs); undefined for a channel without video.
 */
export async function channelWatermark(
  ctx: PlatformContext,
  tenantId: string,
  channelId: string,
  title: string,
  ladder: LiveRendition[],
  segmentSeconds: number,
  rungCount: number,
): Promise<LiveWatermark | undefined> {
  const rungs = markedRungs(ladder, rungCount);
  if (rungs.length === 0) return undefined;
  const where = and(eq(watermarkingAssets.tenantId, tenantId), eq(watermarkingAssets.channelId, channelId));
  let [row] = await ctx.db.select().from(watermarkingAssets).where(where);
  if (!row) {
    // The asset's size is its tallest marked rung's: the pattern's signature on the grid (the same at every size) and
    // the rung detection rebuilds its reference from.
    const rung = rungs[0];
    const settings = await getSettings(ctx.db, tenantId);
    const id = newId();
    const { width, height } = rung;
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
  return { seed: row.id, strength: row.strength, rungs };
}
