import { finished, type Readable } from 'node:stream';
import { Worker } from 'node:worker_threads';
import { releaseChunk } from './releaseChunk.ts';

export class PartTooLargeError extends Error {}
/** No byte of a part body arrived for the idle timeout: the sender stalled or vanished without closing. */
export class PartIdleError extends Error {}

/** Bytes the main thread gathers from the socket before handing them over: one message per slot, whole MD5 blocks. */
const SLOT = 1024 * 1024;
/** The first page of the shared memory is the MD5 kernel's scratch area (md5x4.ts); slots follow it. */
const PAGE = 64 * 1024;
/** Slots shared by all parts being received; each part holds at most PER_PART of them at once. */
const SLOTS = 16;
export const PER_PART = 4;
/**
 * Direct I/O alignment (see the worker): every slot but a part's last is handed over in multiples of this, so that a
 * part that gives a slot back early (see spill) keeps its writes aligned and its MD5 on whole blocks.
 */
const BLOCK = 4096;
/** How often parts being received are checked for idleness; a part idle for a whole period gives its slot back. */
const IDLE_CHECK_MS = 100;

export interface PartWriterOptions {
  /** A part body that sends no byte for this long is dropped (PartIdleError) and its slot and file handed back. */
  idleTimeoutMs: number;
}

/** What the idle check needs of a part being received. */
interface Receiving {
  /** Body chunks so far; unchanged between two checks means idle for a period. */
  chunks: number;
  seen: number;
  idleChecks: number;
  /** Paused until a slot is free: waiting on us, not on its sender. */
  waiting(): boolean;
  spill(): void;
  timeOut(): void;
}

/**
 * A small JSON file the worker writes (to a temporary name, then renamed) once the part is whole, with its `eTag`,
 * `size` and these `fields`; the worker removes it before the part's first byte is written.
 */
export interface PartRecord {
  path: string;
  fields: Record<string, unknown>;
}

export type ToWorker =
  | { type: 'open'; stream: number; path: string; flags: 'r+' | 'w'; position: number; record?: PartRecord }
  | { type: 'data' | 'end'; stream: number; offset: number; length: number }
  | { type: 'abort'; stream: number };
export type ToMain =
  | { type: 'free'; stream: number; offset: number }
  | { type: 'done'; stream: number; eTag: string; size: number }
  | { type: 'failed'; stream: number; code?: string; message: string };

/**
 * Boot code for a worker running a TypeScript module: Node 20 gives workers neither the loader hooks of the main
 * thread nor those of an `--import` in their execArgv, so the worker registers tsx itself, as bin/mediaplane.js does.
 */
function tsWorker(module: URL): string {
  return `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}).then((tsx) => { tsx.register(); return import(${JSON.stringify(module.href)}); })`;
}

interface Pending {
  resolve(result: { eTag: string; size: number }): void;
  reject(error: Error): void;
}

/**
 * Receives part bodies into files with their MD5 (the ETag), the hashing and the writing done by a worker thread.
 * MD5 through OpenSSL costs more CPU than everything else an upload does (about 2 s per GiB here), and on the thread
 * that serves HTTP it would be the limit of every upload; the worker hashes up to four parts at once with a SIMD
 * kernel (md5x4.ts), three times OpenSSL's throughput when uploads send parts in parallel, as S3 clients do. The main
 * thread only copies socket bytes into slots of memory shared with the worker, 1 MiB at a time, and waits for a free
 * slot when the worker is behind, which stops reading the socket: memory stays at SLOTS x 1 MiB (plus under BLOCK
 * bytes per silent part) whatever the number and size of parts.
 */
export class PartWriter {
  private worker: Worker | undefined;
  /** The slots, as a Buffer: see pump() for why not a Uint8Array. */
  private slots!: Buffer;
  private free: number[] = [];
  /** Slots each part has handed over and not yet got back. */
  private readonly held = new Map<number, number>();
  private waiting: (() => void)[] = [];
  private readonly pending = new Map<number, Pending>();
  private readonly receiving = new Set<Receiving>();
  private idleCheck: NodeJS.Timeout | undefined;
  private nextStream = 1;

  constructor(private readonly options: PartWriterOptions = { idleTimeoutMs: 60_000 }) {}

  /**
   * Starts the thread (and warms its kernel) before the first part needs it: booting it costs about 150 ms, which
   * the first part of an upload would otherwise wait for.
   */
  start(): Worker {
    if (this.worker) return this.worker;
    const pages = (PAGE + SLOT * SLOTS) / PAGE;
    const memory = new WebAssembly.Memory({ initial: pages, maximum: pages, shared: true });
    this.slots = Buffer.from(memory.buffer);
    this.free = Array.from({ length: SLOTS }, (_, i) => PAGE + i * SLOT);
    // Compiled (dist/*.js), the worker is a plain module; run from the sources, it boots tsx first.
    const worker = import.meta.url.endsWith('.js')
      ? new Worker(new URL('./partWriter.worker.js', import.meta.url), { workerData: { memory } })
      : new Worker(tsWorker(new URL('./partWriter.worker.ts', import.meta.url)), { eval: true, workerData: { memory } });
    worker.unref();
    worker.on('message', (message: ToMain) => this.onMessage(message));
    worker.on('error', (e) => this.fail(worker, e));
    worker.on('exit', (code) => this.fail(worker, new Error(`the part writer thread exited (${code})`)));
    return (this.worker = worker);
  }

  async close(): Promise<void> {
    clearInterval(this.idleCheck);
    this.idleCheck = undefined;
    const worker = this.worker;
    if (!worker) return;
    this.fail(worker, new Error('the part writer was closed'));
    await worker.terminate();
  }

  private fail(worker: Worker, error: Error): void {
    if (this.worker !== worker) return;
    this.worker = undefined;
    for (const p of this.pending.values()) p.reject(error);
    this.pending.clear();
    this.wake();
  }

  private wake(): void {
    for (const wake of this.waiting.splice(0)) wake();
  }

  private onMessage(message: ToMain): void {
    if (message.type === 'free') return this.giveBack(message.stream, message.offset);
    const p = this.pending.get(message.stream);
    this.pending.delete(message.stream);
    this.wake();
    if (message.type === 'done') p?.resolve({ eTag: message.eTag, size: message.size });
    else p?.reject(Object.assign(new Error(message.message), { code: message.code }));
  }

  /** A free slot for `stream` now, or -1 when none is free or the part already holds its share. */
  private take(stream: number): number {
    const held = this.held.get(stream) ?? 0;
    if (!this.free.length || held >= PER_PART) return -1;
    this.held.set(stream, held + 1);
    return this.free.pop()!;
  }

  /** Waits for a slot (so that a fast sender cannot take every slot, a part holds at most PER_PART of them). */
  private async acquire(stream: number, result: Promise<unknown>): Promise<number> {
    for (let slot = this.take(stream); ; slot = this.take(stream)) {
      if (slot >= 0) return slot;
      if (!this.pending.has(stream)) await result; // failed: throws its error
      await new Promise<void>((wake) => this.waiting.push(wake));
    }
  }

  private giveBack(stream: number, offset: number): void {
    this.free.push(offset);
    this.held.set(stream, (this.held.get(stream) ?? 1) - 1);
    this.wake();
  }

  /**
   * Writes the body at `position` of `path` (opened with `flags`) as it arrives; answers its MD5 as an S3 ETag and its
   * size once every byte is written (not yet flushed to disk: callers make parts durable, see fsUploads.ts) and the
   * `record`, if any, is in place. The worker handles the record so that the answer waits for no round trip through
   * this thread's event loop, which is busy with the sockets.
   */
  async write(
    body: Readable,
    path: string,
    flags: 'r+' | 'w',
    position: number,
    maxBytes: number,
    record?: PartRecord,
  ): Promise<{ eTag: string; size: number }> {
    const worker = this.start();
    const stream = this.nextStream++;
    const result = new Promise<{ eTag: string; size: number }>((resolve, reject) => this.pending.set(stream, { resolve, reject }));
    result.catch(() => {});
    worker.postMessage({ type: 'open', stream, path, flags, position, record } satisfies ToWorker);
    try {
      await this.pump(body, worker, stream, maxBytes, result);
    } catch (e) {
      // The worker answers an aborted part once its writes in flight have ended: until then they may still change the
      // part's bytes on disk, and the caller may send the part again as soon as this one fails.
      if (this.pending.has(stream)) worker.postMessage({ type: 'abort', stream } satisfies ToWorker);
      await result.catch(() => {});
      throw e;
    } finally {
      void result.finally(() => this.held.delete(stream)).catch(() => {});
    }
    return result;
  }

  /**
   * Copies the body into slots as it arrives and hands each one over when full, the last one at the end. Driven by
   * 'data' events rather than an async iterator: a GiB arrives in 16,000 chunks, and the iterator's promise per chunk
   * was a sixth of this thread's time. Waiting for a slot pauses the body, which stops reading its socket. On an error
   * the rest of the body is left to the HTTP server, which reads and drops it after the answer (clients that are still
   * sending stop when the answer comes).
   *
   * The slots are shared by every upload, so a part must not keep one while its sender is silent: sixteen stalled
   * senders would otherwise hold them all and stop every upload of every tenant. A part idle for a check period
   * spills: the whole blocks of its slot go to the worker as a shorter segment, the rest (under BLOCK bytes) is kept
   * here and leads the part's next slot.
   */
  private pump(body: Readable, worker: Worker, stream: number, maxBytes: number, result: Promise<unknown>): Promise<void> {
    return new Promise((resolve, reject) => {
      let offset = -1;
      let filled = 0;
      let size = 0;
      let waiting = false;
      let ended = false;
      let settled = false;
      /** Bytes of a spilled slot that did not make a whole block, for the next slot. */
      let carried: Buffer | undefined;
      /**
       * Copies `bytes` into the slots at `at`, and nothing past them. Buffer#fill with a Buffer copies with memcpy (a
       * TypedArray#set into shared memory copies a word at a time), but it repeats the value up to its `end`, and
       * without one that is the end of the memory: every slot above, which other parts are filling and the worker
       * writing and hashing, gets overwritten (it stored other parts' bytes in uploaded objects).
       */
      const put = (bytes: Buffer, at: number) => this.slots.fill(bytes, at, at + bytes.length);
      const send = (type: 'data' | 'end', length = filled) => {
        worker.postMessage({ type, stream, offset, length } satisfies ToWorker);
        offset = -1;
        filled = 0;
      };
      const hold = (slot: number) => {
        offset = slot;
        if (!carried) return;
        put(carried, offset);
        filled = carried.length;
        carried = undefined;
      };
      const receiving: Receiving = {
        chunks: 0,
        seen: 0,
        idleChecks: 0,
        waiting: () => waiting,
        spill: () => {
          if (offset < 0 || waiting || settled) return;
          const whole = filled - (filled % BLOCK);
          if (whole < filled) carried = Buffer.from(this.slots.subarray(offset + whole, offset + filled));
          if (whole) send('data', whole);
          else {
            this.giveBack(stream, offset);
            offset = -1;
            filled = 0;
          }
        },
        timeOut: () => settle(new PartIdleError(`no byte of the part arrived for ${this.options.idleTimeoutMs / 1000} s; send the part again`)),
      };
      const settle = (error?: Error) => {
        if (settled) return;
        settled = true;
        body.off('data', onData);
        body.off('end', onEnd);
        stopWatching();
        this.unwatch(receiving);
        if (!error) return resolve();
        if (offset >= 0) this.giveBack(stream, offset);
        reject(error);
      };
      /** Goes on with `then` once `offset` holds a slot: at once when one is free, else after waiting with the body paused. */
      const withSlot = (then: () => void) => {
        if (offset < 0) {
          const slot = this.take(stream);
          if (slot >= 0) hold(slot);
        }
        if (offset >= 0) return then();
        waiting = true;
        body.pause();
        this.acquire(stream, result).then((slot) => {
          waiting = false;
          if (settled) return this.giveBack(stream, slot);
          hold(slot);
          then();
          if (!waiting && !settled && !ended) body.resume();
        }, settle);
      };
      const copy = (chunk: Buffer, used: number): void => {
        while (used < chunk.length) {
          if (offset < 0) return withSlot(() => copy(chunk, used));
          const n = Math.min(chunk.length - used, SLOT - filled);
          put(n === chunk.length ? chunk : chunk.subarray(used, used + n), offset + filled);
          filled += n;
          used += n;
          if (filled === SLOT) send('data');
        }
        releaseChunk(body, chunk);
        if (ended && !waiting) finish();
      };
      const finish = () => withSlot(() => (send('end'), settle()));
      const onData = (chunk: Buffer) => {
        receiving.chunks++;
        size += chunk.length;
        if (size > maxBytes) return settle(new PartTooLargeError(`a part may not be larger than ${maxBytes} bytes`));
        copy(chunk, 0);
      };
      const onEnd = () => {
        ended = true;
        if (!waiting) finish();
      };
      // Errors and a body that closes before its end (the client went away): ERR_STREAM_PREMATURE_CLOSE.
      const stopWatching = finished(body, (error) => error && settle(error));
      body.on('data', onData);
      body.on('end', onEnd);
      this.watch(receiving);
    });
  }

  private watch(part: Receiving): void {
    this.receiving.add(part);
    if (this.idleCheck) return;
    this.idleCheck = setInterval(() => this.checkIdle(), IDLE_CHECK_MS);
    this.idleCheck.unref();
  }

  private unwatch(part: Receiving): void {
    this.receiving.delete(part);
    if (this.receiving.size || !this.idleCheck) return;
    clearInterval(this.idleCheck);
    this.idleCheck = undefined;
  }

  /** Parts that received nothing since the last check spill their slot; those idle for the timeout are dropped. */
  private checkIdle(): void {
    for (const part of this.receiving) {
      if (part.chunks !== part.seen || part.waiting()) {
        part.seen = part.chunks;
        part.idleChecks = 0;
        continue;
      }
      part.idleChecks++;
      if (part.idleChecks * IDLE_CHECK_MS >= this.options.idleTimeoutMs) part.timeOut();
      else part.spill();
    }
  }
}
