import type { SQL } from 'drizzle-orm';
import type { PlatformContext } from '../../../context.ts';
import { recordEvent } from '../../../platform/events.ts';
import { vodOutputs } from './tables.ts';

/** The output row's `progressPercent` is written at most this often (polling clients read it). */
const WRITE_INTERVAL_MS = 500;
/** `vod.output.progress` is sent when the progress reaches a new whole step of this many percent... */
const PROGRESS_EVENT_STEP = 10;
/** ...and at most once per this many milliseconds per output, so that a receiver is never flooded (docs/decisions). */
const PROGRESS_EVENT_INTERVAL_MS = 5_000;

export interface ProgressWriter {
  /** ffmpeg's progress in percent: written to the output row, and sent as an event on a new step. */
  report(percent: number): void;
  /** Resolves once every write asked for has been made: the caller finishes the output after it. */
  settled(): Promise<void>;
}

/**
 * Progress of one output's transcode, written in order (one write at a time) so that no late write overtakes the
 * output's completion. `owned` selects the output row while this worker holds it: a write after the output was
 * finished, deleted or taken over changes nothing and sends nothing. An event is written in the same transaction as
 * the progress it reports (the outbox).
 */
export function progressWriter(ctx: PlatformContext, tenantId: string, assetId: string, outputId: string, owned: SQL | undefined): ProgressWriter {
  let written = -1;
  let lastWrite = 0;
  let sentStep = 0;
  let lastEvent = 0;
  let chain: Promise<void> = Promise.resolve();

  const write = async (progressPercent: number, step: number | undefined) => {
    if (step === undefined) return void (await ctx.db.update(vodOutputs).set({ progressPercent }).where(owned));
    await ctx.db.transaction(async (tx) => {
      const rows = await tx.update(vodOutputs).set({ progressPercent }).where(owned).returning({ id: vodOutputs.id });
      if (rows.length) await recordEvent(tx, tenantId, 'vod.output.progress', { id: outputId, assetId, progressPercent: step });
    });
  };

  return {
    report(percent) {
      // 100 is written with the output's completion, with its endpoints.
      const p = Math.min(99, Math.floor(percent));
      const now = Date.now();
      if (p <= written) return;
      const step = Math.floor(p / PROGRESS_EVENT_STEP) * PROGRESS_EVENT_STEP;
      const send = step > sentStep && now - lastEvent >= PROGRESS_EVENT_INTERVAL_MS;
      // A new step is never skipped for the row's own pace: the last report (99) of a short encode is one.
      if (!send && now - lastWrite < WRITE_INTERVAL_MS) return;
      written = p;
      lastWrite = now;
      if (send) {
        sentStep = step;
        lastEvent = now;
      }
      // Progress is a hint: a failed write is not worth failing the transcode for.
      chain = chain.then(() => write(p, send ? step : undefined)).catch(() => {});
    },
    settled: () => chain,
  };
}
