import { join } from 'node:path';
import { and, desc, eq, sql } from 'drizzle-orm';
import type { PlatformContext } from '../../context.ts';
import { readObject } from '../../storage/readObject.ts';
import { MediaError } from '../../media/ffmpeg.ts';
import { codeLength, decodeVotes, refusal } from '../../media/watermark/code.ts';
import { isIdentity } from '../../media/watermark/geometry.ts';
import { locate, placedVotes, recognised, type Placement } from '../../media/watermark/locate.ts';
import { readSuspect, SUSPECT_FPS, SUSPECT_H, SUSPECT_W } from '../../media/watermark/suspect.ts';
import { recordEvent } from '../../platform/events.ts';
import { liveReference, type LiveReference } from './liveReference.ts';
import { getSettings } from './settings.service.ts';
import { preparedPrefix } from './storageKeys.ts';
import { watermarkingAssets, watermarkingFiles, watermarkingSessions, type DetectionRow } from './tables.ts';

/** The job that reads one suspect file (`jobId`: the detection it writes; a newer job for the file replaces it). */
export interface DetectJob {
  tenantId: string;
  fileId: string;
  jobId: string;
}

/** The newest prepared assets a suspect is compared with; an older leak needs a narrower search (not offered yet). */
const MAX_CANDIDATES = 200;

/**
 * Reads the marks of a suspect file: finds which of the tenant's prepared assets it shows and where on that asset's
 * timeline it starts (non-blind: against the unmarked reference), takes one vote per segment, and decodes the user
 * number only when every bit of the code word is clear and the CRC holds; anything less is "no mark found".
 */
export async function runDetection(ctx: PlatformContext, j: DetectJob): Promise<void> {
  const fileWhere = and(eq(watermarkingFiles.tenantId, j.tenantId), eq(watermarkingFiles.id, j.fileId));
  const write = async (detection: DetectionRow, final = false) => {
    await ctx.db.transaction(async (tx) => {
      // Only this job's detection: a newer job for the same file replaces it.
      const rows = await tx
        .update(watermarkingFiles)
        .set({ detection, lastModificationDate: new Date() })
        .where(and(fileWhere, sql`${watermarkingFiles.detection}->>'jobId' = ${j.jobId}`))
        .returning({ id: watermarkingFiles.id });
      if (rows.length && final) await recordEvent(tx, j.tenantId, 'watermarking.detection.completed', { id: j.fileId, ...detection });
    });
  };
  const [file] = await ctx.db.select().from(watermarkingFiles).where(fileWhere);
  if (!file || file.detection?.jobId !== j.jobId) return;
  const base = { jobId: j.jobId };
  await write({ ...base, status: 'Processing', progress: 5 });
  let grid: Buffer;
  try {
    grid = await readSuspect(await ctx.store.readableLocation(file.fileKey));
  } catch (e) {
    if (!(e instanceof MediaError)) throw e;
    return write(
      { ...base, status: 'Error', progress: 100, message: `The file could not be read as video: ${e.message}`, completionDate: new Date().toISOString() },
      true,
    );
  }
  await write({ ...base, status: 'Processing', progress: 50 });

  const settings = await getSettings(ctx.db, j.tenantId);
  const candidates = await ctx.db
    .select()
    .from(watermarkingAssets)
    .where(and(eq(watermarkingAssets.tenantId, j.tenantId), eq(watermarkingAssets.status, 'Available')))
    .orderBy(desc(watermarkingAssets.createDate))
    .limit(MAX_CANDIDATES);
  let best: { asset: (typeof candidates)[number]; reference: Buffer; live?: LiveReference; at: Placement } | undefined;
  const score = (p: Placement) => (recognised(p) ? 1 : 0) * 1e6 + p.pairs.length * p.match;
  for (const asset of candidates) {
    const live = asset.channelId
      ? await liveReference(ctx, j.tenantId, asset.channelId, asset.height, join(ctx.config.dataDir, 'work', 'watermarking', `detect-${j.jobId}`))
      : undefined;
    const reference = live?.reference ?? (await readObject(ctx.store, `${preparedPrefix(j.tenantId, asset.id)}reference.gray`).catch(() => undefined));
    const at = reference && locate(grid, reference);
    if (reference && at && (!best || score(at) > score(best.at))) best = { asset, reference, live, at };
  }
  const done = (d: Omit<DetectionRow, 'jobId' | 'progress'>) => write({ ...base, progress: 100, completionDate: new Date().toISOString(), ...d }, true);
  const seconds = (grid.length / (SUSPECT_W * SUSPECT_H) / SUSPECT_FPS).toFixed(1);
  if (!best || !recognised(best.at)) {
    const figures = best
      ? ` (the closest, asset ${best.asset.id}: ${best.at.pairs.length} of ${best.at.coverable} pictures lined up, content match ${best.at.match.toFixed(2)}; 3 s and 30% at 0.90 needed)`
      : '';
    return done({
      status: 'NoMarkFound',
      message: `The file shows none of the prepared assets${figures}`,
      assetId: null,
      userNumber: null,
      userName: null,
      confidence: 0,
    });
  }
  const { asset, reference, live, at } = best;
  const segmentVotesOf = placedVotes(at, {
    id: asset.id,
    reference,
    signature: asset.signature,
    segmentDurations: live?.segmentDurations ?? asset.segmentDurations,
    segmentStarts: live?.segmentStarts,
  });
  // Live: a segment's bit is its media sequence number's place in the code word (a sparse array: the gaps vote nothing).
  const votes = live ? segmentVotesOf.reduce<(number | undefined)[]>((v, vote, k) => ((v[live.sequences[k]] = vote), v), []) : segmentVotesOf;
  const decoded = decodeVotes(votes, asset.userNumberBits, settings.minConfidence);
  const confidence = Math.round(decoded.confidence * 1000) / 1000;
  if (decoded.userNumber === undefined) {
    const geometry = isIdentity(at.geometry) ? '' : ', picture re-framed (fitted)';
    const lined = `${at.pairs.length} of ${at.coverable} pictures lined up${geometry}`;
    const wordSeconds = codeLength(asset.userNumberBits) * asset.segmentDuration;
    let why = refusal(decoded, settings.minConfidence);
    if (decoded.reason === 'the file is shorter than one code word')
      why =
        Number(seconds) < wordSeconds
          ? `the file (${seconds} s) is shorter than one code word (${wordSeconds} s): ${why}`
          : `too few pictures lined up to read every bit: ${why}`;
    return done({
      status: 'NoMarkFound',
      message: `Asset ${asset.id} matched (${lined}), but ${why}`,
      assetId: asset.id,
      userNumber: null,
      userName: null,
      confidence,
    });
  }
  const [session] = await ctx.db
    .select()
    .from(watermarkingSessions)
    .where(
      and(eq(watermarkingSessions.tenantId, j.tenantId), eq(watermarkingSessions.assetId, asset.id), eq(watermarkingSessions.userNumber, decoded.userNumber)),
    );
  return done({
    status: 'Detected',
    assetId: asset.id,
    userNumber: decoded.userNumber,
    userName: session?.userName ?? null,
    sessionId: session?.id ?? null,
    confidence,
    message: session ? null : 'The mark is valid but no session of this asset has that user number',
  });
}
