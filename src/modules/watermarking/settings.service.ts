import { eq } from 'drizzle-orm';
import type { PlatformContext } from '../../context.ts';
import type { Queryable } from '../../db/client.ts';
import { recordEvent } from '../../platform/events.ts';
import { watermarkingSettings } from './tables.ts';

export interface WatermarkingSettings {
  /** Bits of the user number spelled by the segments (numbers 0 to 2^bits - 1); a CRC-8 follows them. */
  userNumberBits: number;
  /** Seconds per segment of newly prepared assets: one bit per segment. */
  segmentDuration: number;
  /** Luma levels of the mark at its peaks in newly prepared assets (1-6). */
  strength: number;
  /** Lifetime of redirector tokens, in seconds. */
  tokenTtlSeconds: number;
  /** Smallest mean vote (in units of the full mark) every bit needs before detection names anyone. */
  minConfidence: number;
}

export const DEFAULT_SETTINGS: WatermarkingSettings = { userNumberBits: 16, segmentDuration: 2, strength: 3, tokenTtlSeconds: 86_400, minConfidence: 0.4 };

export async function getSettings(db: Queryable, tenantId: string): Promise<WatermarkingSettings> {
  const [row] = await db.select().from(watermarkingSettings).where(eq(watermarkingSettings.tenantId, tenantId));
  if (!row) return { ...DEFAULT_SETTINGS };
  const { userNumberBits, segmentDuration, strength, tokenTtlSeconds, minConfidence } = row;
  return { userNumberBits, segmentDuration, strength, tokenTtlSeconds, minConfidence };
}

export async function updateSettings(ctx: PlatformContext, tenantId: string, patch: Partial<WatermarkingSettings>): Promise<WatermarkingSettings> {
  return ctx.db.transaction(async (tx) => {
    const next = { ...(await getSettings(tx, tenantId)), ...Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)) };
    await tx
      .insert(watermarkingSettings)
      .values({ tenantId, ...next })
      .onConflictDoUpdate({ target: watermarkingSettings.tenantId, set: { ...next, lastModificationDate: new Date() } });
    await recordEvent(tx, tenantId, 'watermarking.settings.updated', { id: tenantId, ...next });
    return next;
  });
}
