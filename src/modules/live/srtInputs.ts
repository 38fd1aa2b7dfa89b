import type { Config } from '../../config.ts';
import type { Logger } from '../../platform/logger.ts';
import type { InputSlot, LiveMedia, RtmpIngest, SrtRelay } from './media.ts';
import type { ChannelRow } from './present.ts';
import { srtPortOf, streamNameOf } from './urls.ts';

/** The inputs a channel takes: the primary, and the secondary for `redundancy: DoubleInput`. */
export const slotsOf = (row: ChannelRow): InputSlot[] => (row.redundancy === 'DoubleInput' ? ['primary', 'secondary'] : ['primary']);

/**
 * An SRT channel's listeners, one per input, each relaying into this process's RTMP ingest under the channel's stream
 * name (docs/decisions/live.md, "SRT"). Started when the channel starts here, restarted when its key is rotated.
 */
export function startSrtInputs(media: LiveMedia, ingest: RtmpIngest, config: Config, row: ChannelRow, log: Logger): SrtRelay[] {
  if (row.input.type !== 'RTMP_PUSH' || row.input.transportInputProtocol !== 'SRT' || !row.srtPort) return [];
  if (!media.startSrtRelay) throw new Error('this media layer takes no SRT');
  const start = media.startSrtRelay;
  return slotsOf(row).map((slot) =>
    start({
      host: config.live.srtHost,
      port: srtPortOf(row.srtPort!, slot),
      passphrase: row.streamKey,
      target: ingest.relayUrl(streamNameOf(row.streamKey, slot)),
      log: log.child({ component: 'srt', slot }),
    }),
  );
}
