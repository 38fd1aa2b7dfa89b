import type { Readable } from 'node:stream';
import { Worker } from 'node:worker_threads';

export class PartTooLargeError extends Error {}

/** Bytes the main thread gathers from the socket before handing them over: one message per slot, whole MD5 blocks. */
const SLOT = 1024 * 1024;
/** The first page of the shared memory is the MD5 kernel's scratch area (md5x4.ts); slots follow it. */
const PAGE = 64 * 1024;
/** Slots shared by all parts being received; each part holds at most PER_PART of them at once. */
const SLOTS = 16;
export const PER_PART = 4;

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
 * slot when the worker is behind, which stops reading the socket: memory stays at SLOTS x 1 MiB whatever the number
 * and size of parts.
 */
export class PartWriter {
  private worker: Worker | undefined;
  private memory!: Uint8Array;
  private free: number[] = [];
  /** Slots each part has handed over and not yet got back. */
  private readonly held = new Map<number, number>();
  private waiting: (() => void)[] = [];
  private readonly pending = new Map<number, Pending>();
  private nextStream = 1;

  /**
   * Starts the thread (and warms its kernel) before the first part needs it: booting it costs about 150 ms, which
   * the first part of an upload would otherwise wait for.
   */
  start(): Worker {
    if (this.worker) return this.worker;
    const pages = (PAGE + SLOT * SLOTS) / PAGE;
    const memory = new WebAssembly.Memory({ initial: pages, maximum: pages, shared: true });
    this.memory = new Uint8Array(memory.buffer);
    this.free = Array.from({ length: SLOTS }, (_, i) => PAGE + i * SLOT);
    const worker = new Worker(tsWorker(new URL('./partWriter.worker.ts', import.meta.url)), { eval: true, workerData: { memory } });
    worker.unref();
    worker.on('message', (message: ToMain) => this.onMessage(message));
    worker.on('error', (e) => this.fail(worker, e));
    worker.on('exit', (code) => this.fail(worker, new Error(`the part writer thread exited (${code})`)));
    return (this.worker = worker);
  }

  async close(): Promise<void> {
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
    if (message.type === 'free') {
      this.free.push(message.offset);
      this.held.set(message.stream, (this.held.get(message.stream) ?? 1) - 1);
      this.wake();
      return;
    }
    const p = this.pending.get(message.stream);
    this.pending.delete(message.stream);
    this.wake();
    if (message.type === 'done') p?.resolve({ eTag: message.eTag, size: message.size });
    else p?.reject(Object.assign(new Error(message.message), { code: message.code }));
  }

  /** A free slot for `stream`, waiting while none is free or the part already holds its share (so that a fast
   * sender cannot take every slot): waiting here stops reading that part's socket. */
  private async acquire(stream: number, result: Promise<unknown>): Promise<number> {
    while (!this.free.length || (this.held.get(stream) ?? 0) >= PER_PART) {
      if (!this.pending.has(stream)) await result; // failed: throws its error
      await new Promise<void>((wake) => this.waiting.push(wake));
    }
    this.held.set(stream, (this.held.get(stream) ?? 0) + 1);
    return this.free.pop()!;
  }

  /**
   * Writes the body at `position` of `path` (opened with `flags`) as it arrives; answers its MD5 as an S3 ETag and its
   * size once every byte is written (not yet flushed to disk: callers make parts durable, see fsUploads.ts) and the
   * `record`, if any, is in place. The worker handles the record so that the answer waits for no round trip through
   * this thread's event loop, which is busy with the sockets.
   */
  async write(body: Readable, path: string, flags: 'r+' | 'w', position: number, maxBytes: number, record?: PartRecord): Promise<{ eTag: string; size: number }> {
    const worker = this.start();
    const stream = this.nextStream++;
    const result = new Promise<{ eTag: string; size: number }>((resolve, reject) => this.pending.set(stream, { resolve, reject }));
    result.catch(() => {});
    worker.postMessage({ type: 'open', stream, path, flags, position, record } satisfies ToWorker);
    let offset = -1;
    let filled = 0;
    let size = 0;
    const send = (type: 'data' | 'end') => {
      worker.postMessage({ type, stream, offset, length: filled } satisfies ToWorker);
      offset = -1;
      filled = 0;
    };
    try {
      for await (const chunk of body as AsyncIterable<Buffer>) {
        size += chunk.length;
        if (size > maxBytes) throw new PartTooLargeError(`a part may not be larger than ${maxBytes} bytes`);
        for (let used = 0; used < chunk.length; ) {
          if (offset < 0) offset = await this.acquire(stream, result);
          const n = Math.min(chunk.length - used, SLOT - filled);
          this.memory.set(n === chunk.length ? chunk : chunk.subarray(used, used + n), offset + filled);
          filled += n;
          used += n;
          if (filled === SLOT) send('data');
        }
      }
      if (offset < 0) offset = await this.acquire(stream, result);
      send('end');
    } catch (e) {
      if (offset >= 0) {
        this.free.push(offset);
        this.held.set(stream, (this.held.get(stream) ?? 1) - 1);
        this.wake();
      }
      if (this.pending.delete(stream)) worker.postMessage({ type: 'abort', stream } satisfies ToWorker);
      throw e;
    } finally {
      void result.finally(() => this.held.delete(stream)).catch(() => {});
    }
    return result;
  }
}
