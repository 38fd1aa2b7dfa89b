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

/** Where a channel's output lives in the store, and where players read it. */
export const channelPrefix = (tenantId: string, channelId: string): string => `tenants/${tenantId}/live/${channelId}/`;
export const mediaUrl = (config: Config, tenantId: string, channelId: string, file: string): string =>
  `${config.publicUrl.origin}/media/live/${tenantId}/${channelId}/${file}`;

export const MASTER_PLAYLIST = 'master.m3u8';
export const DASH_MANIFEST = 'manifest.mpd';
