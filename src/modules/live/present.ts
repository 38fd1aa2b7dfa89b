import type { Config } from '../../config.ts';
import { captioningOf } from '../../media/live/index.ts';
import { keyIdsOf } from '../drm/index.ts';
import { drmEndpointIdOf, drmPrefixOf, schemeOf } from './drm.ts';
import { DEFAULT_FRAME_RATE, qualityLabel } from './ladder.ts';
import { DASH_MANIFEST, ingestUrl, MASTER_PLAYLIST, mediaUrl, srtIngestUrl, streamNameOf } from './urls.ts';
import { MASK } from './validate.ts';
import type { liveChannels } from './tables.ts';

export type ChannelRow = typeof liveChannels.$inferSelect;

/**
 * A channel's endpoints as EndpointInfo: one per endpoint type asked for, with stable URLs for the channel's life
 * (the same whether the channel is Off, On, or was restarted). `id` is the endpoint's name (`hls`, `dash`): the
 * spec's `archiveEndpointIds` and `transcodeEndpointId` name endpoints by it.
 */
export function endpointsOf(config: Config, row: ChannelRow) {
  return row.endpoints.map((e) => {
    const hls = e.type.startsWith('Hls');
    const file = hls ? MASTER_PLAYLIST : DASH_MANIFEST;
    // A protected endpoint (docs/decisions/drm.md, "Live channels"): its own encrypted files, the channel's key.
    const drm = e.isDrmProtected && e.keyId ? e.keyId : undefined;
    const url = mediaUrl(config, row.tenantId, row.id, drm ? drmPrefixOf(e) + file : file);
    return {
      ...(drm ? drmEndpointIdOf(e) : { id: hls ? 'hls' : 'dash', protection: 'None' }),
      accessType: 'Http',
      format: hls ? 'HLS' : 'DASH',
      url,
      ...(drm
        ? {
            protectionDetails: { keyIds: keyIdsOf(row.id, drm, row.drmKeyMode), contentId: row.id },
            type: e.type,
            isDrmProtected: true,
            drmKeyMode: row.drmKeyMode ?? 'SingleKey',
          }
        : {}),
      manifest: url,
      hasVerticalOrientation: e.hasVerticalOrientation,
    };
  });
}

/**
 * The ingest URL as the caller may see it: a key that can push to the channel is a write permission, so a read-only
 * (Viewer) key sees it masked.
 */
export function ingestUrlFor(config: Config, row: ChannelRow, showKey: boolean, slot: 'primary' | 'secondary' = 'primary'): string | null {
  if (row.input.type !== 'RTMP_PUSH') return null;
  if (slot === 'secondary' && row.redundancy !== 'DoubleInput') return null;
  const key = showKey ? row.streamKey : MASK;
  if (row.input.transportInputProtocol === 'SRT') return row.srtPort ? srtIngestUrl(config, row.id, row.srtPort, slot, key) : null;
  return ingestUrl(config, streamNameOf(key, slot));
}

export function presentChannel(config: Config, row: ChannelRow, showKey: boolean, includeCloudData = true) {
  const endpoints = endpointsOf(config, row);
  return {
    id: row.id,
    name: row.name,
    ...(includeCloudData ? { endpoints } : {}),
    // The Recorder (issue 17) records from the retained segments every endpoint plays; the first one is transcoded.
    archiveEndpointIds: endpoints.map((e) => e.id),
    transcodeEndpointId: endpoints[0]?.id ?? null,
    cdn: { enabled: false },
    ...(includeCloudData
      ? {
          inputs: (['primary', 'secondary'] as const)
            .filter((slot) => slot === 'primary' || row.redundancy === 'DoubleInput')
            .map((slot) => {
              const url = ingestUrlFor(config, row, showKey, slot);
              return {
                id: slot,
                type: row.input.type,
                destinations: url ? [{ url }] : [],
                details: { securityGroupIps: row.input.whitelistCidr ? [row.input.whitelistCidr] : [] },
              };
            }),
        }
      : {}),
    encoding: { preset: row.transmissionType === 'Audio' ? 'audio' : row.qualities.map(qualityLabel).join(','), pipelines: 1 },
    status: row.status,
    internalStatus: row.internalStatus,
    metadata: row.metadata,
    createDate: row.createDate,
    lastModificationDate: row.lastModificationDate,
    automationDisabled: row.automationDisabled,
    distribution: { accessPolicyId: row.accessPolicyId, accessPolicyName: null },
  };
}

export function presentUpdated(config: Config, row: ChannelRow) {
  const endpoints = endpointsOf(config, row);
  return { id: row.id, endpoints, archiveEndpoints: endpoints };
}

const slug = (name: string) =>
  name
    .normalize('NFKD')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 63) || 'channel';

export function presentConfiguration(config: Config, row: ChannelRow, showKey: boolean) {
  const video = row.transmissionType !== 'Audio';
  const running = row.status === 'Starting' || row.status === 'On';
  const highest = video && row.qualities.length ? qualityLabel({ height: Math.max(...row.qualities.map((q) => q.height)) }) : null;
  return {
    id: row.id,
    name: row.name,
    codeName: slug(row.name),
    endpoints: row.endpoints.map((e) => ({
      type: e.type,
      hasVerticalOrientation: e.hasVerticalOrientation,
      isDrmProtected: e.isDrmProtected,
      ...(e.isDrmProtected ? { scheme: schemeOf(e) } : {}),
    })),
    qualities: row.qualities.map((q) => ({
      resolution: qualityLabel(q),
      frameRate: Math.round(q.frameRate ?? DEFAULT_FRAME_RATE),
      followsSourceFrameRate: q.frameRate === undefined,
    })),
    restreams: row.restreams.map((r) => ({
      id: r.id,
      destination: r.destination,
      label: r.label ?? null,
      rtmpDestinations: r.rtmpDestinations.map((d, j) => {
        // Written by the channel's owner while it runs; a channel that does not run sends nothing.
        const state = running ? row.restreamStatus[r.id]?.[j] : undefined;
        return { url: d.url, streamKey: MASK, status: state?.status ?? (running ? 'Connecting' : 'Off'), lastError: state?.lastError ?? null };
      }),
      protocol: r.protocol,
      hasVerticalOrientation: r.hasVerticalOrientation ?? false,
    })),
    input: {
      type: row.input.type,
      mp4Sources: row.input.mp4Sources.map((src) => ({
        url: src.url,
        username: src.username ?? null,
        password: src.password ? MASK : null,
        hasExistingPassword: !!src.password,
      })),
      whiteListCidr: row.input.whitelistCidr ?? null,
      inputLoss: { type: row.input.inputLoss.type, imageSlateUri: row.input.inputLoss.imageSlateUri ?? null, color: row.input.inputLoss.color ?? null },
      transportInputProtocol: row.input.transportInputProtocol ?? 'RTMP',
      transportPrimaryIngestUrl: ingestUrlFor(config, row, showKey),
      transportSecondaryIngestUrl: ingestUrlFor(config, row, showKey, 'secondary'),
      inputDevices: [],
    },
    redundancy: row.redundancy,
    activationMode: row.activationMode,
    transmissionType: row.transmissionType,
    environment: row.environment,
    latency: row.latency,
    isConfiguredExternally: false,
    stackName: `mediaplane-live-${row.id}`,
    channelGroupStackName: '',
    templateVersion: '1',
    status: { value: row.status },
    requiresCloudUpdate: false,
    packagingVersion: row.packagingVersion,
    isWatermarkProtected: row.isWatermarkProtected,
    drmKeyMode: row.drmKeyMode,
    aiLiveCaptioning: captioningOf(row.aiLiveCaptioningLanguageCode),
    broadcastStandard: row.broadcastStandard,
    highestVideoResolution: highest,
    specificationId: '',
    autoRecord: row.autoRecord,
  };
}
