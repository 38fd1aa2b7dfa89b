import { sleep } from './abort.ts';
import type { Client } from './client.ts';
import { ProcessingFailedError } from './errors.ts';
import type { ResponseOf } from './types.ts';

export type Asset = ResponseOf<'GET', '/vod/v1/assets/{id}'>;
export type Recording = ResponseOf<'GET', '/cvr/v1/recordings/{id}'>;

export interface WaitOptions<T> {
  signal?: AbortSignal;
  /** Pause between two reads, in milliseconds (default 1000). */
  intervalMs?: number;
  /** Called with every read, e.g. to show the status. */
  onUpdate?: (resource: T) => void;
}

export const waitForAsset = (client: Client, id: string, options: WaitOptions<Asset> = {}): Promise<Asset> =>
  waitUntilDone('asset', () => client.request('GET', '/vod/v1/assets/{id}', undefined, { params: { id }, signal: options.signal }), id, options);

export const waitForRecording = (client: Client, id: string, options: WaitOptions<Recording> = {}): Promise<Recording> =>
  waitUntilDone('recording', () => client.request('GET', '/cvr/v1/recordings/{id}', undefined, { params: { id }, signal: options.signal }), id, options);

async function waitUntilDone<T extends { status: string; errorMessage: string | null }>(
  kind: 'asset' | 'recording',
  read: () => Promise<T>,
  id: string,
  { signal, intervalMs = 1000, onUpdate }: WaitOptions<T>,
): Promise<T> {
  for (;;) {
    const resource = await read();
    onUpdate?.(resource);
    if (resource.status === 'Available') return resource;
    if (resource.status === 'Error') throw new ProcessingFailedError(kind, id, resource.errorMessage ?? `the ${kind} ${id} failed`, resource);
    await sleep(intervalMs, signal);
  }
}
