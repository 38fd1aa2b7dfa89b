import { Readable } from 'node:stream';
import type { ObjectStore } from '../../storage/objectStore.ts';
import { readObjectIfAny } from '../../storage/readObject.ts';

/**
 * Low-latency delivery (RFC 8216bis 6.2.5): blocking playlist reloads, and parts or segments asked for just before
 * the live process publishes them. Every API process serves from the object store, which the live process writes, so
 * a request waits by polling the store: one poll per object and process, shared by every request waiting on it, so the
 * store sees a few reads per second per waited-on playlist whatever the number of viewers. (A wake-up through the
 * database would cost a notification per part and track from the live process, which PGlite cannot send across
 * processes; the store is the one thing every deployment shares.)
 */
const POLL_MS = 50;
/** How long a part or a segment not yet published is waited for (then 404): a little more than a segment. */
export const MEDIA_WAIT_MS = 3000;

interface Watch<V> {
  load: () => Promise<V>;
  waiters: Set<{ ok: (v: V) => boolean; resolve: (v: V | undefined) => void }>;
}

export class StoreWaiter {
  private readonly watches = new Map<string, Watch<unknown>>();
  private closed = false;

  constructor(private readonly store: ObjectStore) {}

  /** Resolves with the first loaded value `ok` accepts, or `undefined` after `timeoutMs`. `key` names the watch: one `load` per key. */
  wait<V>(key: string, load: () => Promise<V>, ok: (v: V) => boolean, timeoutMs: number): Promise<V | undefined> {
    return new Promise((resolve) => {
      let watch = this.watches.get(key) as Watch<V> | undefined;
      const fresh = !watch;
      if (!watch) this.watches.set(key, (watch = { load, waiters: new Set() }) as Watch<unknown>);
      const waiter = {
        ok,
        resolve: (v: V | undefined) => {
          clearTimeout(timer);
          watch!.waiters.delete(waiter);
          resolve(v);
        },
      };
      const timer = setTimeout(() => waiter.resolve(undefined), timeoutMs);
      watch.waiters.add(waiter);
      if (fresh) void this.run(key, watch);
    });
  }

  private async run<V>(key: string, watch: Watch<V>): Promise<void> {
    while (watch.waiters.size > 0 && !this.closed) {
      await new Promise((r) => setTimeout(r, POLL_MS));
      const value = await watch.load().catch(() => undefined as V);
      for (const w of [...watch.waiters]) if (w.ok(value)) w.resolve(value);
    }
    this.watches.delete(key);
  }

  async exists(key: string): Promise<boolean> {
    return (await this.store.head(key)) !== undefined;
  }

  async read(key: string): Promise<Buffer | undefined> {
    return readObjectIfAny(this.store, key);
  }

  close(): void {
    this.closed = true;
    for (const w of this.watches.values()) for (const x of [...w.waiters]) x.resolve(undefined);
  }
}

/** Where a low-latency media playlist stands: the segment being written (`msn`) and how many of its parts it lists. */
export interface PlaylistPosition {
  msn: number;
  parts: number;
  targetDuration: number;
  canBlock: boolean;
}

export function playlistPosition(text: string): PlaylistPosition {
  let msn = 0;
  let parts = 0;
  let targetDuration = 2;
  let canBlock = false;
  for (const line of text.split('\n')) {
    if (line.startsWith('#EXT-X-MEDIA-SEQUENCE:')) msn = Number(line.slice(22));
    else if (line.startsWith('#EXT-X-TARGETDURATION:')) targetDuration = Number(line.slice(22));
    else if (line.startsWith('#EXT-X-SERVER-CONTROL:')) canBlock = /CAN-BLOCK-RELOAD=YES/.test(line);
    else if (line.startsWith('#EXT-X-SKIP:')) msn += Number(/SKIPPED-SEGMENTS=(\d+)/.exec(line)?.[1] ?? 0);
    else if (line.startsWith('#EXT-X-PART:')) parts += 1;
    else if (line && !line.startsWith('#')) {
      msn += 1;
      parts = 0;
    }
  }
  return { msn, parts, targetDuration, canBlock };
}

/** The playlist has segment `msn` complete (no `part`), or its part `part`. */
export const hasReached = (p: PlaylistPosition, msn: number, part: number | undefined) =>
  msn < p.msn || (part !== undefined && msn === p.msn && part < p.parts);

/** `<track>/<n>.m4s` (a segment) or `<track>/<n>.<i>.m4s` (a part). */
export function mediaName(path: string): { track: string; sequence: number; part?: number } | undefined {
  const m = /^([A-Za-z0-9_-]+)\/(\d+)(?:\.(\d+))?\.m4s$/.exec(path);
  if (!m) return undefined;
  return { track: m[1]!, sequence: Number(m[2]), part: m[3] === undefined ? undefined : Number(m[3]) };
}

/**
 * A segment still being written (low-latency DASH asks for it `availabilityTimeOffset` early): its parts, sent as
 * they are published, chunked, until the whole segment exists (the packager publishes it after its last part). The
 * bytes are the segment's own: a segment is the concatenation of its parts.
 */
export function streamOpenSegment(waiter: StoreWaiter, prefix: string, track: string, sequence: number, first: Buffer): Readable {
  async function* parts(): AsyncGenerator<Buffer> {
    yield first;
    for (let i = 1; ; i++) {
      const partKey = `${prefix}${track}/${sequence}.${i}.m4s`;
      const wholeKey = `${prefix}${track}/${sequence}.m4s`;
      const next = await waiter.wait<Buffer | 'complete' | undefined>(
        `stream:${partKey}`,
        async () => (await waiter.read(partKey)) ?? ((await waiter.exists(wholeKey)) ? 'complete' : undefined),
        (v) => v !== undefined,
        MEDIA_WAIT_MS,
      );
      if (next === undefined || next === 'complete') return;
      yield next;
    }
  }
  return Readable.from(parts());
}
