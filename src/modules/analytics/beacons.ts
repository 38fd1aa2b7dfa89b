import { Type, type Static } from 'typebox';
import { Uuid } from '../../platform/schemas.ts';
import type { BeaconRow } from './tables.ts';
import type { Client } from './userAgent.ts';

/** What a player reports, one beacon per event (docs/decisions/analytics.md, "Beacons"). */
export const BEACON_KINDS = ['start', 'heartbeat', 'buffering', 'error', 'end', 'adStart', 'adEnd', 'adClick', 'adSkip', 'adError'] as const;

const seconds = Type.Number({ minimum: 0, maximum: 86_400 });
const ms = Type.Integer({ minimum: 0, maximum: 86_400_000 });
const label = (maxLength = 64) => Type.String({ minLength: 1, maxLength });

export const Beacon = Type.Object({
  impressionId: { ...Uuid, description: 'A random uuid the player draws once per playback session' },
  kind: Type.Enum([...BEACON_KINDS]),
  assetId: Type.Optional(Type.String({ pattern: '^[a-zA-Z0-9_-]{1,128}$' })),
  assetType: Type.Optional(Type.Enum(['Vod', 'Recording', 'LiveChannel', 'LiveEvent'])),
  playerTech: Type.Optional(label(32)),
  playedSeconds: Type.Optional({ ...seconds, description: 'Seconds of content played since the previous beacon' }),
  videoBitrate: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000_000, description: 'bits/s of the rendition playing' })),
  bufferingMs: Type.Optional({ ...ms, description: 'buffering: how long the player waited for data' }),
  startupTimeMs: Type.Optional({ ...ms, description: 'start: from the request to play to the first frame' }),
  errorCode: Type.Optional(label()),
  videoStarted: Type.Optional(Type.Boolean({ description: 'end: whether a frame was ever shown' })),
  failed: Type.Optional(Type.Boolean({ description: 'end: whether a fatal error ended the playback' })),
  adId: Type.Optional(label(128)),
  adPosition: Type.Optional(Type.Enum(['preroll', 'midroll', 'postroll'])),
  adPlayedSeconds: Type.Optional(seconds),
});
export type Beacon = Static<typeof Beacon>;

export const BeaconBatch = Type.Object({
  beacons: Type.Array(Beacon, { minItems: 1, maxItems: 100 }),
});

const flag = (b: boolean | undefined) => (b === undefined ? null : b ? 1 : 0);

/** A beacon as its row: the measures its kind carries, and the context the request tells (browser, page's host). */
export function rowOf(tenantId: string, time: Date, b: Beacon, client: Client, domain: string | null): BeaconRow {
  const end = b.kind === 'end';
  return {
    time,
    tenantId,
    impressionId: b.impressionId.toLowerCase(),
    kind: b.kind,
    source: 'beacon',
    assetId: b.assetId ?? null,
    assetType: b.assetType ?? null,
    playerTech: b.playerTech ?? null,
    browser: client.browser,
    os: client.os,
    deviceType: client.deviceType,
    domain,
    playedSeconds: b.playedSeconds ?? null,
    videoBitrate: b.videoBitrate ?? null,
    // Only buffering beacons carry it, so that its count is the rebuffer count.
    bufferingMs: b.kind === 'buffering' ? (b.bufferingMs ?? 0) : null,
    startupTimeMs: b.kind === 'start' ? (b.startupTimeMs ?? null) : null,
    errorCode: b.kind === 'error' || b.kind === 'adError' ? (b.errorCode ?? 'unknown') : null,
    exitedBeforeStart: end ? flag(b.videoStarted === false) : null,
    playbackFailed: end ? flag(b.failed === true) : null,
    adId: b.adId ?? null,
    adPosition: b.adPosition ?? null,
    adPlayedSeconds: b.kind.startsWith('ad') ? (b.adPlayedSeconds ?? null) : null,
    adClicked: b.kind === 'adClick' ? 1 : null,
    adSkipped: b.kind === 'adSkip' ? 1 : b.kind === 'adEnd' ? 0 : null,
  };
}
