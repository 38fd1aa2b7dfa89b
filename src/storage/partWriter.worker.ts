import { createHash, type Hash } from 'node:crypto';
import { closeSync, openSync, writeSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import type { ToMain, ToWorker } from './partWriter.ts';

/**
 * The other half of partWriter.ts: writes each slot the main thread filled to its part's file and hashes it, off the
 * thread that serves HTTP, then hands the slot back. Every slot is handed back, whatever happened to its part.
 */
const { buffer } = workerData as { buffer: SharedArrayBuffer };
const memory = new Uint8Array(buffer);

interface Stream {
  fd: number;
  position: number;
  size: number;
  hash: Hash;
}

const streams = new Map<number, Stream>();
const post = (message: ToMain) => parentPort!.postMessage(message);

function close(id: number): void {
  const stream = streams.get(id);
  streams.delete(id);
  if (stream) closeSync(stream.fd);
}

function receive(message: ToWorker): void {
  if (message.type === 'open') {
    streams.set(message.stream, { fd: openSync(message.path, message.flags), position: message.position, size: 0, hash: createHash('md5') });
    return;
  }
  if (message.type === 'abort') return close(message.stream);
  const stream = streams.get(message.stream);
  if (!stream) return; // aborted or failed: its remaining slots only come back
  const bytes = memory.subarray(message.offset, message.offset + message.length);
  for (let done = 0; done < bytes.length; ) done += writeSync(stream.fd, bytes, done, bytes.length - done, stream.position + stream.size + done);
  stream.hash.update(bytes);
  stream.size += bytes.length;
  if (message.type === 'end') {
    close(message.stream);
    post({ type: 'done', stream: message.stream, eTag: `"${stream.hash.digest('hex')}"`, size: stream.size });
  }
}

parentPort!.on('message', (message: ToWorker) => {
  try {
    receive(message);
  } catch (e) {
    try {
      close(message.stream);
    } catch {}
    post({ type: 'failed', stream: message.stream, code: (e as NodeJS.ErrnoException).code, message: (e as Error).message });
  } finally {
    if (message.type === 'data' || message.type === 'end') post({ type: 'free', stream: message.stream, offset: message.offset });
  }
});
