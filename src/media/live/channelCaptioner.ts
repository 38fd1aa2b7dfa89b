import { join } from 'node:path';
import type { Logger } from 'pino';
import { LiveCaptioner } from './captions/captions.ts';
import { protectedPrefixes } from './protection/protect.ts';
import { CAPTION_TRACK } from './captions/subtitles.ts';
import type { CaptionModel } from './captions/captionModels.ts';
import type { LivePipelineOptions } from './types.ts';
import { WVTT_INIT, WVTT_TIMESCALE, wvttKey, wvttSpan } from './captions/wvtt.ts';

/**
 * A channel's live captions: recognized beside its pipeline from the audio segments it publishes
 * (docs/decisions/live.md), published clear beside the clear files and every protected endpoint's (their manifests name
 * the captions relatively), and put on the channel's timeline beside the audio segment of the same number.
 */
export function channelCaptioner(o: LivePipelineOptions, model: CaptionModel, availabilityStart: number, log: Logger): LiveCaptioner {
  const prefixes = ['', ...(o.protection ? protectedPrefixes(o.protection) : [])];
  return new LiveCaptioner({
    model,
    workDir: join(o.workDir, 'captions'),
    segmentSeconds: o.segmentSeconds,
    windowSegments: o.windowSegments,
    retentionSeconds: o.retentionSeconds ?? 3600,
    availabilityStart,
    publish: async (key, body, type) => void (await Promise.all(prefixes.map((prefix) => o.publish(prefix + key, body, type)))),
    remove: (keys) => o.remove(prefixes.flatMap((prefix) => keys.map((k) => prefix + k))),
    // Same span and wall-clock start as the audio segment of the same number.
    onPublished: (c) =>
      o.onEvent({
        type: 'segment',
        rendition: CAPTION_TRACK,
        sequence: c.sequence,
        durationSeconds: c.duration,
        key: wvttKey(c.sequence),
        initKey: WVTT_INIT,
        startMs: Math.round(availabilityStart + c.start * 1000),
        decodeTime: wvttSpan(c).start,
        timescale: WVTT_TIMESCALE,
        run: c.run,
      }),
    log: log.child({ component: 'captions' }),
  });
}
