import type { ChannelRun } from './channelRun.ts';
import { minuteOf, type MinuteStats } from './stats.ts';

interface Minute {
  channelId: string;
  tenantId: string;
  minute: Date;
  bitrateSum: number;
  frameRateSum: number;
  samples: number;
  /** Samples taken while an encoder was connected: the input's frame rate averages over these only. */
  connectedSamples: number;
  droppedFrames: number;
  segmentsWritten: number;
  ingestConnectedSeconds: number;
  restreamsActiveSum: number;
}

/**
 * The owner's statistics, kept in memory per channel and minute from the pipelines' counters (sampled each pass) and
 * written in one statement every few seconds: never a database round trip per segment.
 */
export class MinuteStatsBook {
  private readonly minutes = new Map<string, Minute>();

  sample(run: ChannelRun, now = Date.now()): void {
    const s = run.sample();
    if (!s) return;
    const minute = minuteOf(now);
    const key = `${run.id}/${minute.getTime()}`;
    let m = this.minutes.get(key);
    if (!m) {
      m = {
        channelId: run.id,
        tenantId: run.tenantId,
        minute,
        bitrateSum: 0,
        frameRateSum: 0,
        samples: 0,
        connectedSamples: 0,
        droppedFrames: 0,
        segmentsWritten: 0,
        ingestConnectedSeconds: 0,
        restreamsActiveSum: 0,
      };
      this.minutes.set(key, m);
    }
    // The input's bitrate and frame rate are its own: they average over the samples with an encoder connected only,
    // and a minute without any has none (a 25 fps source read 17.6 fps when minutes of slate counted as 0 fps). How
    // long an encoder was connected is `ingestConnectedSeconds`.
    if (s.stats.inputConnected) {
      m.bitrateSum += s.stats.inputBitrateKbps;
      m.frameRateSum += s.stats.inputFrameRate;
      m.connectedSamples += 1;
    }
    m.restreamsActiveSum += run.restreams?.activeCount() ?? 0;
    m.samples += 1;
    m.droppedFrames += s.delta.droppedFrames;
    m.segmentsWritten += s.delta.segmentsWritten;
    m.ingestConnectedSeconds += s.delta.inputConnectedSeconds;
  }

  /** Every minute with samples, as rows; minutes that are over are forgotten once taken. */
  take(now = Date.now()): MinuteStats[] {
    const current = minuteOf(now).getTime();
    const rows: MinuteStats[] = [];
    for (const [key, m] of this.minutes) {
      rows.push({
        channelId: m.channelId,
        tenantId: m.tenantId,
        minute: m.minute,
        values: {
          ...(m.connectedSamples ? { inputBitrate: m.bitrateSum / m.connectedSamples, inputFrameRate: m.frameRateSum / m.connectedSamples } : {}),
          droppedFrames: m.droppedFrames,
          segmentsWritten: m.segmentsWritten,
          ingestConnectedSeconds: Math.round(m.ingestConnectedSeconds * 1000) / 1000,
          restreamsActive: m.samples ? m.restreamsActiveSum / m.samples : 0,
        },
      });
      if (m.minute.getTime() < current) this.minutes.delete(key);
    }
    return rows;
  }

  /** Rows taken but not written (the database did not answer): kept for the next flush unless newer ones exist. */
  giveBack(rows: MinuteStats[]): void {
    for (const r of rows) {
      const key = `${r.channelId}/${r.minute.getTime()}`;
      if (this.minutes.has(key)) continue;
      const v = r.values;
      this.minutes.set(key, {
        channelId: r.channelId,
        tenantId: r.tenantId,
        minute: r.minute,
        bitrateSum: v.inputBitrate ?? 0,
        frameRateSum: v.inputFrameRate ?? 0,
        samples: 1,
        connectedSamples: v.inputFrameRate === undefined && v.inputBitrate === undefined ? 0 : 1,
        droppedFrames: v.droppedFrames ?? 0,
        segmentsWritten: v.segmentsWritten ?? 0,
        ingestConnectedSeconds: v.ingestConnectedSeconds ?? 0,
        restreamsActiveSum: v.restreamsActive ?? 0,
      });
    }
  }
}
