import { buffer } from 'node:stream/consumers';
import type { ObjectStore } from './objectStore.ts';

/** A whole object in memory: playlists, init segments, checkpoints, references. Anything large is streamed (`getStream`). */
export async function readObject(store: ObjectStore, key: string): Promise<Buffer> {
  return buffer(await store.getStream(key));
}

/**
 * `readObject`, or undefined when there is no such object, including one deleted while it was being opened (a live
 * channel's retention deletes segments at any moment: as good as never there).
 */
export async function readObjectIfAny(store: ObjectStore, key: string): Promise<Buffer | undefined> {
  try {
    return await readObject(store, key);
  } catch (e) {
    const code = (e as { code?: string }).code;
    if (code === 'NoSuchKey' || code === 'ENOENT') return undefined;
    throw e;
  }
}
