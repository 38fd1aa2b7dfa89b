import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { PlatformContext } from '../../context.ts';
import type { MediaRequest } from '../../platform/playback.ts';
import { isUuid } from '../../platform/ids.ts';
import type { BeaconRow } from './tables.ts';
import { clientOf } from './userAgent.ts';

/** CMCD's four header shards (CTA-5004 §2): each holds keys in the same `key=value,...` form as the query parameter. */
const CMCD_HEADERS = ['cmcd-object', 'cmcd-request', 'cmcd-session', 'cmcd-status'];
const MAX_CMCD_LENGTH = 4096;

export type CmcdData = Record<string, string | number | boolean>;

/**
 * CMCD data (CTA-5004 §3): comma-separated `key=value`; strings are quoted (with `\"` and `\\` escaped), tokens and
 * numbers are bare, and a key without a value is a boolean true. Reading stops at the first piece it cannot read.
 */
export function parseCmcd(text: string): CmcdData {
  const data: CmcdData = {};
  const re = /\s*([a-z][a-z0-9-]*)(?:=("(?:[^"\\]|\\.)*"|[^,]*))?\s*(?:,|$)/giy;
  for (let m = re.exec(text); m && m[0] !== ''; m = re.exec(text)) {
    const [, key, raw] = m;
    if (raw === undefined) data[key] = true;
    else if (raw.startsWith('"')) data[key] = raw.slice(1, -1).replace(/\\(.)/g, '$1');
    else if (/^-?\d+(\.\d+)?$/.test(raw)) data[key] = Number(raw);
    else data[key] = raw;
  }
  return data;
}

/** The CMCD data of a media request: the `CMCD` query parameter, else the CMCD-* headers; undefined when none. */
export function cmcdOf(query: Record<string, unknown>, headers: IncomingHttpHeaders): CmcdData | undefined {
  const fromQuery = typeof query.CMCD === 'string' ? query.CMCD : undefined;
  const fromHeaders = CMCD_HEADERS.map((h) => headers[h])
    .filter((v): v is string => typeof v === 'string')
    .join(',');
  const text = fromQuery ?? fromHeaders;
  if (!text || text.length > MAX_CMCD_LENGTH) return undefined;
  const data = parseCmcd(text);
  return Object.keys(data).length ? data : undefined;
}

/** A session id as an impression id: a uuid as it is, anything else hashed into one (stable for the session). */
function impressionIdOf(sid: unknown): string | undefined {
  if (typeof sid !== 'string' || !sid) return undefined;
  if (isUuid(sid)) return sid.toLowerCase();
  const h = createHash('sha256').update(sid).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : undefined);

/**
 * One media request's CMCD data as a beacon row (BEACON_TYPE `cmcd`): the session is the impression, a video
 * object's duration (`d`, ms) counts as seconds played, its encoded bitrate (`br`, kbit/s) as the video bitrate,
 * buffer starvation (`bs`) as one rebuffering of unknown length (0 ms). The asset is the one the URL names, not `cid`.
 * Requests without a session id are not an impression and give no row.
 */
export function cmcdRow(media: MediaRequest, data: CmcdData, time: Date): BeaconRow | undefined {
  const impressionId = impressionIdOf(data.sid);
  if (!impressionId) return undefined;
  const video = data.ot === undefined || data.ot === 'v' || data.ot === 'av';
  const duration = num(data.d);
  const bitrate = num(data.br);
  const client = clientOf(typeof media.headers['user-agent'] === 'string' ? media.headers['user-agent'] : undefined);
  let domain: string | null = null;
  for (const h of [media.headers.origin, media.headers.referer]) {
    if (typeof h !== 'string' || domain) continue;
    try {
      domain = new URL(h).host || null;
    } catch {
      // not a URL
    }
  }
  return {
    time,
    tenantId: media.tenantId,
    impressionId,
    kind: 'cmcd',
    source: 'cmcd',
    assetId: media.assetId,
    assetType: data.st === 'l' || media.delivery === 'live' ? 'LiveChannel' : 'Vod',
    playerTech: data.sf === 'h' ? 'cmcd-hls' : data.sf === 'd' ? 'cmcd-dash' : 'cmcd',
    ...client,
    domain,
    playedSeconds: video && duration !== undefined && !media.isManifest ? Math.min(duration / 1000, 86_400) : null,
    videoBitrate: video && bitrate !== undefined ? Math.min(Math.round(bitrate * 1000), 2_000_000_000) : null,
    bufferingMs: data.bs === true ? 0 : null,
  };
}

/** The media delivery observer (platform/playback.ts): CMCD-carrying requests join the beacons, written in groups. */
export const cmcdObserver =
  (write: (ctx: PlatformContext, rows: BeaconRow[]) => void) =>
  (ctx: PlatformContext, media: MediaRequest): void => {
    if (media.method !== 'GET') return;
    const data = cmcdOf(media.query, media.headers);
    const row = data && cmcdRow(media, data, new Date());
    if (row) write(ctx, [row]);
  };
