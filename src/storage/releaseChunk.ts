import { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

type Transfer = (this: ArrayBuffer, newLength?: number) => ArrayBuffer;

/**
 * `ArrayBuffer.prototype.transfer`, which detaches a buffer and, with a new length of 0, frees its memory. Standard from
 * Node 22; Node 20's V8 has it behind a flag that only contexts created afterwards see, so it is taken from a new one
 * (it works on an ArrayBuffer of any context).
 */
const transfer: Transfer | undefined = (() => {
  const own = (ArrayBuffer.prototype as { transfer?: Transfer }).transfer;
  if (own) return own;
  try {
    setFlagsFromString('--harmony-rab-gsab-transfer');
    return runInNewContext('ArrayBuffer.prototype.transfer') as Transfer | undefined;
  } catch {
    return undefined;
  }
})();

/**
 * Frees an HTTP request body chunk's memory as soon as it has been copied, not at some later garbage collection.
 * Node's HTTP parser allocates a 64 KiB ArrayBuffer per body chunk, 16,000 per uploaded GiB, which V8 counts as
 * external memory: every 64 MB of it not yet collected starts a full collection, whose marking, on four helper
 * threads, took up to 2 CPU seconds per GiB from the two cores the upload needs (BENCHMARKS.md, upload). Only a chunk
 * that owns its whole ArrayBuffer, from a request body whose only reader is the caller, is freed.
 */
export function releaseChunk(body: Readable, chunk: Buffer): void {
  if (!transfer || !(body instanceof IncomingMessage) || body.listenerCount('data') !== 1) return;
  if (chunk.byteOffset !== 0 || chunk.byteLength !== chunk.buffer.byteLength || chunk.buffer instanceof SharedArrayBuffer) return;
  transfer.call(chunk.buffer, 0);
}
