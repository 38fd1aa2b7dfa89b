import type { BodyOf, ResponseOf } from '../../sdk/src/types.ts';
import type { TestTenant } from './client.ts';
import { until } from './until.ts';

/*
 * Typed test clients, one per module, one command per call (as PeerTube's `server-commands`): bodies and answers are
 * typed by the platform's OpenAPI document (the SDK's types), and a call that does not answer 200 fails. A test about
 * the status codes themselves uses `t.json`.
 */

/** A channel as `GET /live/v1/channels/{id}` answers it. */
export type Channel = ResponseOf<'GET', '/live/v1/channels/{id}'>;
export type ChannelConfiguration = ResponseOf<'GET', '/live/v1/channels/{id}/configuration'>;

/** Calls the API and answers the body; any answer but 200 fails with its status and body. */
async function ok<T>(t: TestTenant, method: string, path: string, body?: unknown): Promise<T> {
  const res = await t.json<T>(method, path, body);
  if (res.status !== 200) throw new Error(`${method} ${path} answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body;
}

/** The live module's channel calls as a test makes them. */
export function liveChannels(t: TestTenant) {
  const path = (id: string, rest = '') => `/live/v1/channels/${id}${rest}`;
  const status = async (id: string) => (await ok<ResponseOf<'GET', '/live/v1/channels/{id}/status'>>(t, 'GET', path(id, '/status'))).status;
  const configuration = (id: string) => ok<ChannelConfiguration>(t, 'GET', path(id, '/configuration'));
  return {
    create: (body: BodyOf<'POST', '/live/v1/channels'>) => ok<ResponseOf<'POST', '/live/v1/channels'>>(t, 'POST', '/live/v1/channels', body),
    get: (id: string) => ok<Channel>(t, 'GET', path(id)),
    configuration,
    status,
    start: (id: string) => ok<undefined>(t, 'POST', path(id, '/start')),
    stop: (id: string) => ok<undefined>(t, 'POST', path(id, '/stop')),
    /** Waits until the channel's status is `wanted` (On after a start, Off after a stop). */
    waitStatus: (id: string, wanted: string, timeoutMs = 60_000) =>
      until(
        () => status(id),
        (s) => s === wanted,
        { timeoutMs, what: `channel ${id} ${wanted}` },
      ),
    /** Waits until the channel's encoder is on air: the first segment encoded from it is published. */
    waitInputConnected: (id: string, timeoutMs = 60_000) =>
      until(
        async () => (await ok<Channel>(t, 'GET', path(id))).internalStatus,
        (s) => s === 'InputConnected',
        { timeoutMs, everyMs: 200, what: `channel ${id} InputConnected` },
      ),
    /** Where a test's encoder pushes: the channel's primary ingest URL, on 127.0.0.1 where the test's platform listens. */
    ingestUrl: async (id: string) => (await configuration(id)).input.transportPrimaryIngestUrl!.replace('localhost', '127.0.0.1'),
  };
}

/** An asset as `GET /vod/v1/assets/{id}` answers it. */
export type Asset = ResponseOf<'GET', '/vod/v1/assets/{id}'>;

/** The VOD module's asset calls as a test makes them. */
export function vodAssets(t: TestTenant) {
  const get = (id: string) => ok<Asset>(t, 'GET', `/vod/v1/assets/${id}`);
  return {
    create: (body: BodyOf<'POST', '/vod/v1/assets'>) => ok<ResponseOf<'POST', '/vod/v1/assets'>>(t, 'POST', '/vod/v1/assets', body),
    get,
    /** Waits until the asset's processing ends, Available or Error, and answers it. */
    settled: (id: string, timeoutMs = 60_000) =>
      until(
        () => get(id),
        (a) => ['Available', 'Error'].includes(a.status),
        { timeoutMs, what: `asset ${id} Available or Error` },
      ),
  };
}

/** The first endpoint of `format` of a channel or an asset. */
export function endpointOf(of: Channel | Asset, format: 'HLS' | 'DASH') {
  const endpoint = of.endpoints?.find((e) => e.format === format);
  if (!endpoint) throw new Error(`${of.id} has no ${format} endpoint`);
  return endpoint;
}
