import type { Config } from '../../config.ts';

/** The port of the RTMP ingest running in this process, when MEDIAPLANE_RTMP_PORT is 0 (any free port: tests). */
let boundRtmpPort: number | undefined;
export const setBoundRtmpPort = (port: number | undefined): void => {
  boundRtmpPort = port;
};

/** Where encoders push, before `/<streamKey>`: MEDIAPLANE_RTMP_PUBLIC_URL, or the public host on the RTMP port. */
function rtmpBaseUrl(config: Config): string {
  if (config.live.rtmpPublicUrl) return config.live.rtmpPublicUrl;
  const port = config.live.rtmpPort || boundRtmpPort || 1935;
  const host = config.publicUrl.hostname; // WHATWG keeps the brackets of an IPv6 literal
  return `rtmp://${host}:${port}/live`;
}

export const ingestUrl = (config: Config, streamKey: string): string => `${rtmpBaseUrl(config)}/${streamKey}`;

/**
 * A `DoubleInput` channel's secondary RTMP input is its stream key with this suffix (the primary is the key itself; a
 * name that is a key is always the primary, so a key that happens to end so is no problem).
 */
export const SECONDARY_SUFFIX = '-backup';

/** The stream name an encoder pushes to for a channel input. */
export const streamNameOf = (streamKey: string, slot: 'primary' | 'secondary'): string => (slot === 'secondary' ? streamKey + SECONDARY_SUFFIX : streamKey);

/** An SRT channel's listener port for an input: its pair's first port is the primary, the next the secondary. */
export const srtPortOf = (srtPort: number, slot: 'primary' | 'secondary'): number => (slot === 'secondary' ? srtPort + 1 : srtPort);

/**
 * `srt://<host>:<port>?streamid=<channel id>&passphrase=<stream key>`: the passphrase (SRT's encryption handshake) is
 * what authenticates the caller; `streamid` names the channel input for a routing SRT gateway in front (ours has a
 * port per input and does not need it).
 */
export function srtIngestUrl(config: Config, channelId: string, srtPort: number, slot: 'primary' | 'secondary', streamKey: string): string {
  const host = config.live.srtPublicHost ?? config.publicUrl.hostname;
  const streamId = slot === 'secondary' ? `${channelId}${SECONDARY_SUFFIX}` : channelId;
  return `srt://${host}:${srtPortOf(srtPort, slot)}?streamid=${streamId}&passphrase=${streamKey}`;
}

/** Where a channel's output lives in the store, and where players read it. */
export const channelPrefix = (tenantId: string, channelId: string): string => `tenants/${tenantId}/live/${channelId}/`;
/**
 * The packager's state of a channel, for the next process that runs it (a takeover continues the same playlists).
 * Outside the channel's public prefix: /media/live serves only what players need.
 */
export const checkpointKey = (tenantId: string, channelId: string): string => `tenants/${tenantId}/live-state/${channelId}.json`;
export const mediaUrl = (config: Config, tenantId: string, channelId: string, file: string): string =>
  `${config.publicUrl.origin}/media/live/${tenantId}/${channelId}/${file}`;

export const MASTER_PLAYLIST = 'master.m3u8';
export const DASH_MANIFEST = 'manifest.mpd';
