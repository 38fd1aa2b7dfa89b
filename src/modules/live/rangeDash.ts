import { readDecodeTime, readInit } from '../../media/live/packaging/mp4.ts';
import { captionRendition, masterTracks } from '../../media/live/packaging/rangePlaylist.ts';
import { masterVariants, type RangeMpdSegment, type RangeMpdTrack } from '../../media/live/packaging/rangeMpd.ts';

/** A range's segment as its copy or its channel has it: `decodeTime` when known (the timeline has it; a recording's rows do not). */
export type DashSource = Omit<RangeMpdSegment, 'decodeTime'> & { track: string; decodeTime?: number };

/** An audio rendition's bandwidth when the master playlist does not say it (it names audio only as EXT-X-MEDIA). */
const AUDIO_BANDWIDTH = 128_000;
/** Captions: a few words a second (the channel's own MPD says the same). */
const TEXT_BANDWIDTH = 1000;

/**
 * The tracks of a range's MPD: the variants of the channel's master playlist (their size, rate and bandwidth; its caption
 * rendition, if the range has one, is the text track) with the
 * codec and timescale of their init segments (`read` answers an object of the range's copy by its URI). A segment
 * without a decode time takes the one of the segment that begins its run, read from the segment itself, plus its
 * wall-clock offset (both come from the same decode time in the packager, so the offset is exact to the millisecond).
 */
export async function rangeDashTracks(master: string, segments: DashSource[], read: (uri: string) => Promise<Buffer | undefined>): Promise<RangeMpdTrack[]> {
  const variants = masterVariants(master);
  const language = /LANGUAGE="([^"]*)"/.exec(captionRendition(master) ?? '')?.[1];
  const tracks: RangeMpdTrack[] = [];
  for (const name of masterTracks(master)) {
    const own = segments.filter((s) => s.track === name);
    if (own.length === 0) continue;
    const init = await read(own[0]!.initUri);
    if (!init) continue;
    const info = readInit(init);
    const kind = info.codec === 'wvtt' ? 'text' : info.codec.startsWith('mp4a') ? 'audio' : 'video';
    const v = variants.get(name) ?? {};
    const withTimes: RangeMpdSegment[] = [];
    let anchor: { decodeTime: number; startMs: number } | undefined;
    for (const [i, s] of own.entries()) {
      const prev = own[i - 1];
      let decodeTime = s.decodeTime;
      if (decodeTime === undefined) {
        if (!anchor || !prev || prev.run !== s.run || prev.initUri !== s.initUri) {
          const body = await read(s.uri);
          if (!body) continue;
          anchor = { decodeTime: readDecodeTime(body), startMs: s.startMs };
        }
        decodeTime = anchor.decodeTime + Math.round(((s.startMs - anchor.startMs) * info.timescale) / 1000);
      }
      withTimes.push({ ...s, decodeTime });
    }
    tracks.push({
      name,
      kind,
      codec: info.codec,
      timescale: info.timescale,
      bandwidth: v.bandwidth ?? (kind === 'text' ? TEXT_BANDWIDTH : AUDIO_BANDWIDTH),
      ...(kind === 'text' ? { language } : {}),
      width: v.width,
      height: v.height,
      frameRate: v.frameRate,
      segments: withTimes,
    });
  }
  return tracks;
}
